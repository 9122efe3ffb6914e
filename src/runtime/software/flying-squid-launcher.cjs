#!/usr/bin/env node
'use strict';
/**
 * Runs one flying-squid server in this process and reports to the supervisor over the child IPC channel
 * (https://nodejs.org/api/child_process.html#subprocesssendmessage-sendhandle-options-callback), or, where no
 * IPC channel crosses (a container, docs/architecture.md "The Docker environment"), as report lines on stdout:
 * REPORT_PREFIX then the message as JSON (src/runtime/host/docker/container-process.ts reads them).
 *
 * Plain JavaScript on purpose: it runs as-is under ts-jest and from dist, with no compile step.
 *
 * Messages sent to the supervisor (process.send):
 *   { type: 'ready' }                                   once the server listens and its plugins are loaded
 *   { type: 'tps', tps }                                about every second: ticks counted over a sliding window
 *   { type: 'players', online, max, players: [{ name, uuid }] }   on every join/leave and with each tps report
 * Console lines go to stdout/stderr like any other game's; console commands arrive on stdin (flying-squid's
 * own readline in its log plugin reads them) so the supervisor treats every software the same way.
 *
 * With IPC, the process exits by itself when the IPC channel disconnects, which happens when the supervisor dies even by
 * SIGKILL, so no game process outlives the service that owns it.
 *
 * Usage: node --max-old-space-size=N flying-squid-launcher.cjs --server-id ID --version V --port P --host H
 *        --max-players M --dir DIR      (settings.json in DIR, written at install, supplies the rest)
 */
const fs = require('node:fs');
const path = require('node:path');
const { trackWorld } = require('./world-flush.cjs');
const { refuseBadName, dropRefused } = require('./player-names.cjs');
const { runWhenTold } = require('./launch-hold.cjs');

const TPS_WINDOW_MS = 5000;
const REPORT_EVERY_MS = 1000;
const QUIT_GRACE_MS = 5000;

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || argv[i + 1] === undefined) throw new Error(`bad argument ${argv[i]}`);
    out[argv[i].slice(2)] = argv[i + 1];
  }
  for (const k of ['server-id', 'version', 'port', 'host', 'max-players', 'dir']) {
    if (!out[k]) throw new Error(`missing --${k}`);
  }
  return out;
}

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return {};
  }
}

// ASCII RS, "gsh ": the same prefix as container-process.ts REPORT_PREFIX.
const REPORT_PREFIX = '\u001egsh ';
let writeOut = (text) => process.stdout.write(text);

function send(msg) {
  if (!process.send) writeOut(REPORT_PREFIX + JSON.stringify(msg) + '\n');
  else if (process.connected) process.send(msg);
}

// flying-squid's log plugin keeps a readline prompt ("> ") on stdout; it is noise in a captured console.
function dropPrompts() {
  const write = process.stdout.write.bind(process.stdout);
  writeOut = (text) => write(text);
  process.stdout.write = (chunk, ...rest) => (chunk === '> ' ? true : write(chunk, ...rest));
}

function main() {
  dropPrompts();
  const args = parseArgs(process.argv.slice(2));
  const dir = path.resolve(args.dir);
  process.chdir(dir);
  const settings = readJson(path.join(dir, 'settings.json'));
  const mcServer = require('flying-squid');
  const server = mcServer.createMCServer({
    motd: 'A flying-squid server',
    gameMode: 1,
    difficulty: 1,
    generation: { name: 'diamond_square', options: { worldHeight: 80 } },
    kickTimeout: 10000,
    plugins: {},
    modpe: false,
    'player-list-text': { header: { text: '' }, footer: { text: '' } },
    'everybody-op': false,
    'max-entities': 100,
    'view-distance': 2,
    ...settings,
    // These come from the supervisor and win over settings.json: the port is the one allocated to this server.
    'online-mode': false,
    port: Number(args.port),
    host: args.host,
    'max-players': Number(args['max-players']),
    version: args.version,
    worldFolder: path.join(dir, 'world'),
    logging: false,
    // minecraft-protocol calls it with each client once its login is read, before it is told it logged in.
    beforeLogin: refuseBadName,
  });
  dropRefused(server);
  wire(server, Number(args['max-players']));
  server.once('pluginsReady', () => {
    pvpRule(server, settings.pvp !== false);
    const flush = server.overworld && server.overworld.storageProvider ? trackWorld(server.overworld) : async () => undefined;
    flushOnQuit(server, flush);
    worldSaving(server, flush);
  });
  playerLists(server, readJson(path.join(dir, 'players.json')));
  return server;
}

// flying-squid writes chunks to disk about every second but not when it stops; the stop command (and so a backup's
// brief stop, docs/architecture.md "Backups") flushes the world first, every change included (world-flush.cjs), so
// the folder is whole once the process exits.
function flushOnQuit(serv, flush) {
  const quit = serv.quit.bind(serv);
  serv.quit = async (reason) => {
    try {
      await flush();
    } catch (err) {
      console.error(`saving the world failed: ${err && err.message}`);
    }
    return quit(reason);
  };
}

// A live backup (flying-squid.json backup.live; docs/architecture.md "Backups"): `world-saving off <seconds>` writes
// every change to the region files (world-flush.cjs) and holds saving, the players' own files too (flying-squid writes
// them as they join and leave), then reports world_saving_off, so the world folder stays whole while it is archived
// and the players stay connected. `world-saving on` resumes, writing what was held. A hold ends by itself after
// <seconds>: a service that died during a backup never leaves a world unsaved.
function worldSaving(serv, flush) {
  const world = serv.overworld;
  let hold = null; // { timer, players: Set } while saving is held
  const writing = new Set(); // players' files being written
  serv.on('newPlayer', (player) => {
    const save = player.save.bind(player);
    player.save = async () => {
      if (hold) return void hold.players.add(save);
      const p = save();
      writing.add(p);
      return p.finally(() => writing.delete(p));
    };
  });
  const resume = async () => {
    if (!hold) return;
    const { timer, players } = hold;
    hold = null;
    clearTimeout(timer);
    if (world && world.storageProvider) world.startSaving();
    for (const save of players) await save().catch((err) => console.error(`saving a player failed: ${err && err.message}`));
    console.log('world saving resumed');
    send({ type: 'world_saving_on' });
  };
  serv.commands.add({
    base: 'world-saving',
    info: 'holds world saving for a backup made while the game runs, or resumes it',
    usage: '/world-saving off <seconds> | /world-saving on',
    op: true,
    parse: (str) => {
      const m = /^(?:off (\d{1,6})|on)$/.exec(str);
      return m ? { off: m[1] !== undefined, seconds: Number(m[1]) } : false;
    },
    action: async ({ off, seconds }) => {
      if (!off) return resume();
      if (hold) clearTimeout(hold.timer);
      else hold = { timer: null, players: new Set() };
      hold.timer = setTimeout(() => void resume(), seconds * 1000);
      hold.timer.unref();
      await flush(); // stops the periodic saver and writes every change made so far
      await Promise.allSettled([...writing]);
      console.log(`world saving held for at most ${seconds} s`);
      send({ type: 'world_saving_off' });
    },
  });
}

// The player lists (flying-squid.json player_lists): players.json, written by the supervisor before every launch,
// holds them; `players <list> add|remove <name>` and `players whitelist on|off` change them while the game runs.
// flying-squid's own ban and op commands look names up online (or at Mojang), so the lists are kept here, by name,
// whatever its case, and checked as each player logs in, before it is added to the world.
function playerLists(serv, initial) {
  const lists = {};
  for (const list of ['whitelist', 'operators', 'bans']) {
    lists[list] = new Set(((initial[list] && initial[list].names) || []).map((n) => n.toLowerCase()));
  }
  let whitelistOn = Boolean(initial.whitelist && initial.whitelist.enabled);
  const online = (name) => (serv.players || []).find((p) => p.username && p.username.toLowerCase() === name);
  const refusal = (name) => {
    if (lists.bans.has(name)) return 'You are banned from this server.';
    if (whitelistOn && !lists.whitelist.has(name)) return 'You are not whitelisted on this server.';
    return null;
  };
  serv.on('newPlayer', (player) => {
    const login = player.login.bind(player);
    player.login = async () => {
      const name = String(player._client.username || '').toLowerCase();
      const why = refusal(name);
      if (why) {
        // A player refused here never joined, but flying-squid's logout still tells everyone online that they left,
        // by uuid, which only its login sets: without it that packet fails to serialize and cuts every other
        // player's connection (their clients hang until minecraft-protocol's 30 s close timeout). So the refused
        // player has its uuid (a removal others ignore; no name, so no "left the game" line) and no file to save.
        player.uuid = player._client.uuid;
        player.save = async () => undefined;
        return player.kick(why);
      }
      await login();
      if (lists.operators.has(name)) player.op = true;
    };
  });
  serv.once('pluginsReady', () => serv.commands.add({
    base: 'players',
    info: 'changes the player lists kept by the hosting service',
    usage: '/players <whitelist|operators|bans> <add|remove> <name> | /players whitelist <on|off>',
    op: true,
    parse: (str) => {
      const m = /^(whitelist|operators|bans) (?:(add|remove) ([A-Za-z0-9_]{1,16})|(on|off))$/.exec(str);
      return m && (m[4] ? m[1] === 'whitelist' : true) ? { list: m[1], verb: m[2] || m[4], name: (m[3] || '').toLowerCase() } : false;
    },
    action: ({ list, verb, name }) => {
      if (verb === 'on' || verb === 'off') whitelistOn = verb === 'on';
      else if (verb === 'add') lists[list].add(name);
      else lists[list].delete(name);
      const player = name && online(name);
      if (player && list === 'operators') player.op = verb === 'add';
      const why = player && refusal(name);
      if (why) player.kick(why);
      console.log(`players: ${list} ${verb}${name ? ' ' + name : ''}`);
    },
  }));
}

// flying-squid has no PvP switch: the "pvp" setting (flying-squid.json user_settings) is kept here. An attack on a
// player is cancelled while it is off; `pvp on|off` on the console changes it while the game runs.
function pvpRule(serv, initial) {
  let pvp = initial;
  serv.commands.add({
    base: 'pvp',
    info: 'turns player-versus-player damage on or off',
    usage: '/pvp <on|off>',
    op: true,
    parse: (str) => (/^(on|off)$/.test(str) ? { on: str === 'on' } : false),
    action: ({ on }) => {
      pvp = on;
      console.log(`pvp is ${on ? 'on' : 'off'}`);
    },
  });
  serv.on('newPlayer', (player) => player.on('attack_cancel', ({ attackedEntity }, cancel) => {
    if (!pvp && attackedEntity && attackedEntity.type === 'player') cancel();
  }));
}

function wire(serv, maxPlayers) {
  let listening = false;
  let pluginsReady = false;
  const maybeReady = () => {
    if (listening && pluginsReady) send({ type: 'ready' });
  };
  // flying-squid's own 'ready' gives up silently after 5 s of plugin loading; wait for both signals instead.
  serv.once('listening', () => { listening = true; maybeReady(); });
  serv.once('pluginsReady', () => { pluginsReady = true; maybeReady(); });
  serv._server.on('error', (err) => {
    console.error(`server error: ${err && err.message}`);
    process.exit(1);
  });

  const ticks = [];
  serv.on('tick', () => ticks.push(Date.now()));
  const players = () => (serv.players || [])
    .filter((p) => p.username)
    .map((p) => ({ name: p.username, uuid: p.uuid }));
  const reportPlayers = () => {
    const list = players();
    send({ type: 'players', online: list.length, max: maxPlayers, players: list });
  };
  setInterval(() => {
    const now = Date.now();
    while (ticks.length && ticks[0] < now - TPS_WINDOW_MS) ticks.shift();
    const span = Math.min(TPS_WINDOW_MS, now - startedAt) / 1000;
    send({ type: 'tps', tps: span > 0 ? Math.min(20, ticks.length / span) : 0 });
    reportPlayers();
  }, REPORT_EVERY_MS).unref();
  const startedAt = Date.now();
  serv.on('newPlayer', (player) => {
    player.on('spawned', reportPlayers);
    player.on('disconnected', () => setImmediate(reportPlayers));
  });
}

let serv = null;

// The supervisor is gone (even kill -9): let flying-squid close (kick players, close the socket) and leave
// within QUIT_GRACE_MS whatever happens; never linger as an orphan holding the port.
process.on('disconnect', () => {
  setTimeout(() => process.exit(0), QUIT_GRACE_MS).unref();
  if (!serv) process.exit(0);
  serv.quit('The server host restarted').then(() => process.exit(0), () => process.exit(0));
});

function run() {
  try {
    serv = main();
  } catch (err) {
    console.error(`launcher failed: ${err && err.stack ? err.stack : err}`);
    process.exit(1);
  }
}

// flying-squid.json launch_hold: with GSH_HOLD, flying-squid and the version's data load before the go (launch-hold.cjs).
runWhenTold(run, () => {
  require('flying-squid');
  try {
    require('minecraft-data')(process.argv[process.argv.indexOf('--version') + 1]); // cached by version for createMCServer
  } catch {
    // An unknown version fails in main(), with flying-squid's own message.
  }
});
