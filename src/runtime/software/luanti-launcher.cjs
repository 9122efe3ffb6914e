#!/usr/bin/env node
'use strict';
/**
 * Runs one Luanti (Minetest) dedicated server as a child of this process and bridges it to the supervisor the
 * way flying-squid-launcher.cjs does: reports over the IPC channel, or as REPORT_PREFIX lines on stdout where no
 * IPC channel crosses (a container). Plain JavaScript, run as-is under ts-jest and from dist.
 *
 * Luanti has no console on stdin and no TPS in its protocol, so the world carries a small mod of ours
 * (luanti-mod/, copied into the world's worldmods/ at every start): it writes gsh_status.json every second
 * (server steps per second, players) and runs the lines this launcher appends to gsh_console.txt as chat
 * commands of the server ("/shutdown" is the graceful stop). docs/architecture.md "Software definitions".
 *
 * Readiness is the engine's own console line `Server for gameid="…" listening on …` (luanti.json `ready`), which
 * it prints once the world and its mods are loaded and the server thread takes clients.
 *
 * Messages sent to the supervisor:
 *   { type: 'tps', tps }                   every second: server steps per second (nominal 1 / dedicated_server_step)
 *   { type: 'players', online, max, players: [{ name, uuid }] }   with each status. Luanti has no player UUIDs,
 *                                          so each is derived from the name (UUID v3 of 'LuantiPlayer:<name>'), as
 *                                          offline-mode Minecraft derives its own from 'OfflinePlayer:<name>'
 *
 * With IPC, the server is stopped (SIGTERM: Luanti saves and exits) when the channel disconnects, which happens
 * when the supervisor dies even by SIGKILL, so no game outlives the service that owns it.
 *
 * Usage: node luanti-launcher.cjs --binary PATH --server-id ID --port P --host H --max-players M --dir DIR
 *        (settings.json in DIR, written before every launch, supplies the server's settings; players.json, the
 *        player lists (luanti.json player_lists), is copied into the world, where the mod may read it)
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const STATUS_EVERY_MS = 500;
const QUIT_GRACE_MS = 10_000;
const REPORT_PREFIX = '\u001egsh ';
const MOD = path.join(__dirname, 'luanti-mod');

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || argv[i + 1] === undefined) throw new Error(`bad argument ${argv[i]}`);
    out[argv[i].slice(2)] = argv[i + 1];
  }
  for (const k of ['binary', 'server-id', 'port', 'host', 'max-players', 'dir']) {
    if (!out[k]) throw new Error(`missing --${k}`);
  }
  return out;
}

function send(msg) {
  if (!process.send) process.stdout.write(REPORT_PREFIX + JSON.stringify(msg) + '\n');
  else if (process.connected) process.send(msg);
}

/** RFC 4122 section 4.3 name-based UUID, version 3 (MD5), of 'LuantiPlayer:<name>'. */
function playerUuid(name) {
  const h = crypto.createHash('md5').update(`LuantiPlayer:${name}`).digest();
  h[6] = (h[6] & 0x0f) | 0x30;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

function readSettings(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'settings.json'), 'utf8'));
  } catch {
    return {};
  }
}

/**
 * One `name = value` entry of minetest.conf, read back by the engine exactly as given, under its own name and no
 * other (Luanti 5.6.1 src/settings.cpp, Settings::parseConfigObject and getMultiline): a line's name and value are
 * trimmed of C whitespace (isspace: space, \t, \n, \v, \f, \r); a value of exactly `{` opens a group that runs
 * to a line `}`, and one of exactly `"""` a multi-line value that runs to a line `"""`, whose lines are taken as
 * they are. So a value with whitespace at either end, or one that is `{` or `"""` once trimmed, is written as a
 * multi-line value; everything else (`}`, `=`, `#`, backslashes, any other character) is plain text after ` = `.
 * Throws, naming the setting, for what the file cannot hold: a line break or NUL (the settings' validation refuses
 * control characters before they get here) and the value `"""` itself, which would end its own multi-line value.
 */
function configEntry(name, raw) {
  const value = String(raw);
  if (!/^[A-Za-z0-9_.]+$/.test(name)) throw new Error(`setting ${JSON.stringify(name)}: not a name minetest.conf can hold`);
  if (/[\0\r\n]/.test(value) || value === '"""') {
    throw new Error(`setting ${name}: its value cannot be written to minetest.conf (a line break, a NUL, or exactly """)`);
  }
  const trimmed = value.replace(/^[ \t\v\f]+|[ \t\v\f]+$/g, '');
  const multiline = trimmed !== value || trimmed === '{' || trimmed === '"""';
  return multiline ? `${name} = """\n${value}\n"""` : `${name} = ${value}`;
}

/**
 * minetest.conf: the settings, then what the supervisor decides (port, address, slots), which win (a later line
 * replaces an earlier one of the same name). Every entry is checked before the file is written: a value the file
 * cannot hold stops the launch and writes nothing.
 */
function writeConfig(dir, args, settings) {
  const values = {
    server_name: 'A Luanti server',
    server_description: '',
    motd: '',
    server_announce: false,
    creative_mode: false,
    enable_damage: true,
    ...settings,
    port: Number(args.port),
    bind_address: args.host,
    max_users: Number(args['max-players']),
    default_game: 'minetest_game',
    // The world's own folder only: never the packaged defaults, nor the service's user's ~/.minetest.
    world: path.join(dir, 'world'),
  };
  const lines = Object.entries(values).map(([k, v]) => configEntry(k, v));
  fs.writeFileSync(path.join(dir, 'minetest.conf'), lines.join('\n') + '\n');
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const dir = path.resolve(args.dir);
  const world = path.join(dir, 'world');
  fs.mkdirSync(path.join(world, 'worldmods'), { recursive: true });
  fs.cpSync(MOD, path.join(world, 'worldmods', 'gsh_report'), { recursive: true });
  fs.rmSync(path.join(world, 'gsh_status.json'), { force: true }); // a previous life's status is no sign of life
  // Mod security lets a mod read only its world's files: the lists go there (none written: no lists).
  const lists = path.join(dir, 'players.json');
  if (fs.existsSync(lists)) fs.copyFileSync(lists, path.join(world, 'gsh_players.json'));
  else fs.rmSync(path.join(world, 'gsh_players.json'), { force: true });
  writeConfig(dir, args, readSettings(dir));

  const child = spawn(
    args.binary,
    ['--config', path.join(dir, 'minetest.conf'), '--world', world, '--gameid', 'minetest_game', '--logfile', '', '--port', args.port],
    { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  const consoleFile = path.join(world, "gsh_console.txt");
  let buffered = '';
  process.stdin.on('data', (chunk) => {
    buffered += chunk.toString('utf8');
    const end = buffered.lastIndexOf('\n');
    if (end < 0) return;
    fs.appendFileSync(consoleFile, buffered.slice(0, end + 1)); // whole lines only: the mod reads up to the last \n
    buffered = buffered.slice(end + 1);
  });
  process.stdin.on('error', () => undefined);

  let lastTime = 0;
  const poll = setInterval(() => {
    let status;
    try {
      status = JSON.parse(fs.readFileSync(path.join(world, 'gsh_status.json'), 'utf8'));
    } catch {
      return; // not written yet, or being replaced
    }
    const names = Array.isArray(status.players) ? status.players : []; // an empty Lua table is written as null
    if (status.time !== lastTime) send({ type: 'tps', tps: Number(status.tps) || 0 });
    lastTime = status.time;
    send({ type: 'players', online: names.length, max: Number(args['max-players']), players: names.map((name) => ({ name, uuid: playerUuid(name) })) });
  }, STATUS_EVERY_MS);

  const stop = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), QUIT_GRACE_MS).unref();
  };
  process.on('disconnect', stop);
  process.on('SIGTERM', stop);
  child.on('error', (err) => {
    process.stderr.write(`launcher: ${args.binary} could not start: ${err.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    clearInterval(poll);
    process.exit(code ?? (signal ? 128 + (require('node:os').constants.signals[signal] || 0) : 1));
  });
}

try {
  main();
} catch (err) {
  process.stderr.write(`launcher failed: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
}
