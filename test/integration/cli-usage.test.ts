// The CLI's conventions for every command (README "Command line"; src/cli-usage.ts): each command's own help,
// one-line usage errors with the command's usage (exit 2), refusals and failures (exit 1), our own messages for
// numbers, and `--json` on every list. Most cases run runCli in this process, on a DATA_DIR of their own; the
// last ones run `node bin/gsh.js` (what `npx gsh` runs, built by `npm test`) to see the exit status of the process.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { runCli } from '../../src/cli';
import { openDb } from '../../src/store/db';
import { createOperatorStore } from '../../src/store';
import { systemClock } from '../../src/clock';
import { plans } from '../../src/catalog/plans';
import { loadConfig } from '../../src/config';
import { tempDir } from '../helpers/app';

let dataDir: string;
beforeEach(() => {
  dataDir = tempDir('cli-usage');
});
afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

async function gsh(argv: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { DATA_DIR: dataDir, ...env }, (s) => out.push(s), (s) => err.push(s));
  return { code, stdout: out.join('\n'), stderr: err.join('\n'), outCalls: out.length };
}

/** Every command the CLI has; `gsh help` must list each (and a new one is checked below all the same). */
const commands = [
  'token create', 'token list', 'token revoke',
  'user create', 'user set-password', 'user reset-2fa', 'user set-quota', 'user quota',
  'image build',
  'node add', 'node certs rotate', 'node list', 'node drain', 'node remove',
  'server move', 'db backup', 'db restore', 'config',
];

/** The commands the global help names: the words after `gsh` on each usage line, up to the first non-word. */
async function listedCommands(): Promise<string[]> {
  const { stdout } = await gsh(['help']);
  return stdout.split('\n').filter((l) => /^ {2}gsh [a-z]/.test(l)).map((l) => {
    const words = l.trim().split(/\s+/).slice(1);
    const named = words.findIndex((w) => !/^[a-z][a-z0-9-]*$/.test(w));
    return (named < 0 ? words : words.slice(0, named)).join(' ');
  }).filter((c) => c !== 'help');
}

describe('help', () => {
  test.each([[['help']], [['--help']], [['-h']]])('gsh %j prints the global help on stdout and exits 0', async (argv) => {
    const res = await gsh(argv);
    expect([res.code, res.stderr]).toEqual([0, '']);
    expect(res.stdout).toMatch(/^Usage:\n/);
    expect(res.stdout).toContain('Exit status: 0 done, 1 refused or failed');
    expect(res.stdout).toContain('Every list command takes --json');
  });

  test('the global help names every command', async () => {
    expect(await listedCommands()).toEqual(expect.arrayContaining(commands));
  });

  test('every command, those added later too, prints its own help for --help, -h and `gsh help <command>`', async () => {
    const global = (await gsh(['help'])).stdout;
    const listed = await listedCommands();
    for (const command of listed) {
      const words = command.split(' ');
      const help = await gsh([...words, '--help']);
      expect([command, help.code, help.stderr]).toEqual([command, 0, '']);
      // Its own usage first, then its group's help; not the global help, and no other group's commands.
      expect(help.stdout).toMatch(new RegExp(`^Usage:\\n {2}gsh ${command}( |\\n)`));
      expect(help.stdout).not.toBe(global);
      expect(help.stdout).not.toContain('Exit status:');
      // What the group's help says about this command, not about every other one: never longer than the group's.
      expect(help.stdout.length).toBeLessThanOrEqual((await gsh([words[0], '--help'])).stdout.length);
      expect(help.stdout.split('\n\n')[1]).toMatch(new RegExp(command.replace(/ /g, '\\s+')));
      for (const other of listed.filter((c) => c.split(' ')[0] !== words[0])) expect([command, help.stdout]).not.toEqual([command, expect.stringContaining(`gsh ${other} `)]);
      expect(await gsh([...words, '-h'])).toEqual(help);
      expect(await gsh(['help', ...words])).toEqual(help);
      // Flags given with --help are not checked: help wins.
      expect((await gsh([...words, '--no-such-flag', '--help'])).code).toBe(0);
    }
  });

  test('a command\'s help is about it: node lose\'s says nothing of node add, token list\'s names its JSON fields', async () => {
    const lose = (await gsh(['node', 'lose', '--help'])).stdout;
    expect(lose).toContain('node lose says a node is gone for good');
    expect(lose).not.toContain('node add registers');
    const list = (await gsh(['help', 'token', 'list'])).stdout;
    expect(list).toMatch(/id, name, prefix, scopes \(array of\s+strings\), created_at, expires_at and last_used_at/);
    expect(list).not.toContain('token create creates');
  });

  test.each([['token'], ['user'], ['node'], ['server'], ['db'], ['image'], ['config']])('gsh %s --help prints the usage of each of its commands', async (group) => {
    const all = await listedCommands();
    const res = await gsh([group, '--help']);
    expect(res.code).toBe(0);
    for (const c of all.filter((c) => c.split(' ')[0] === group)) expect(res.stdout).toContain(`  gsh ${c}`);
    expect(await gsh(['help', group])).toEqual(res);
  });
});

/** A usage error: exit 2, stdout empty, `gsh: <what is wrong>` on one line, then the usage, and little else. */
function expectUsageError(res: { code: number; stdout: string; stderr: string }, message: RegExp, usage: string) {
  expect({ code: res.code, stdout: res.stdout }).toEqual({ code: 2, stdout: '' });
  const lines = res.stderr.split('\n');
  expect(lines[0]).toMatch(/^gsh: /);
  expect(lines[0]).toMatch(message);
  expect(lines[1]).toBe('Usage:');
  expect(lines[2]).toMatch(new RegExp(`^ {2}gsh ${usage}`));
  expect(lines[lines.length - 1]).toMatch(/^Run `gsh help.*` for more\.$/);
  expect(lines.length).toBeLessThanOrEqual(6);
}

describe('usage errors: one line saying what is wrong, then the command\'s usage, exit 2', () => {
  test.each([
    ['token create', ['token', 'create', '--email', 'a@b.c'], /^gsh: --name is required\.$/],
    ['token list', ['token', 'list', '--email', 'a@b.c', '--all'], /^gsh: gsh token list takes no --all\.$/],
    ['token revoke', ['token', 'revoke', '--email', 'a@b.c'], /^gsh: --id is required\.$/],
    ['user create', ['user', 'create', '--email', 'a@b.c', '--password', 'short'], /--password must be 8 to \d+ characters; this one is 5\./],
    ['user set-password', ['user', 'set-password', '--email', 'a@b.c'], /--password is required/],
    ['user reset-2fa', ['user', 'reset-2fa'], /--email is required/],
    ['user set-quota', ['user', 'set-quota', '--email', 'a@b.c'], /Name at least one of --servers, --running, --memory-mb/],
    ['user quota', ['user', 'quota', '--email', 'nope'], /--email takes an email address; got "nope"/],
    ['image build', ['image', 'build', 'now'], /gsh image build takes no arguments; got "now"/],
    ['node add', ['node', 'add', '--name', 'eu-2'], /--docker-host is required/],
    ['node certs rotate', ['node', 'certs', 'rotate', 'Bad Name'], /A node name is 1 to 32 lowercase letters/],
    ['node list', ['node', 'list', '--memory-mb', '5'], /gsh node list takes no --memory-mb/],
    ['node drain', ['node', 'drain', 'eu-2', '--undo', '--evacuate'], /--undo and --evacuate do not go together/],
    ['node remove', ['node', 'remove'], /A node name is/],
    ['server move', ['server', 'move', 'srv_x'], /server move needs a server id and --to <node>/],
    ['db backup', ['db', 'backup'], /db backup needs the file to write/],
    ['db restore', ['db', 'restore', 'a', 'b'], /Unexpected argument "b"/],
    ['config', ['config', '--all'], /gsh config takes no --all/],
    // parseArgs' own refusals, in our words
    ['token list', ['token', 'list', '--email'], /^gsh: --email needs a value\.$/],
    ['token list', ['token', 'list', '--email', 'a@b.c', '-x'], /^gsh: There is no option -x\.$/],
    ['node list', ['node', 'list', '--json=yes'], /^gsh: --json takes no value\.$/],
    ['token create', ['token', 'create', '--email', 'a@b.c', '--name', '-x'], /--name needs a value; for a value that starts with a dash, write --name=-…/],
  ])('%s: %j', async (usage, argv, message) => {
    expectUsageError(await gsh(argv), message, usage);
    // Nothing was written: a refused command line creates no user (and, before the database, no database at all).
    expect(fs.existsSync(path.join(dataDir, 'gsh.sqlite')) && countUsers()).toBeFalsy();
  });

  test.each([
    [[], /^gsh: Name a command\.$/],
    [['bogus'], /^gsh: There is no command "bogus"\.$/],
    [['help', 'bogus'], /^gsh: There is no command "bogus"\.$/],
  ])('gsh %j: the command list, not the global help', async (argv, message) => {
    const res = await gsh(argv);
    expect(res.code).toBe(2);
    expect(res.stderr.split('\n')).toEqual([expect.stringMatching(message), 'Usage:', '  gsh <command> …, where <command> is one of: token, user, image, node, server, db, config, help', 'Run `gsh help` for more.']);
  });

  test.each([
    [['node', 'certs'], 'Name a node certs command.'],
    [['node', 'certs', 'renew'], 'There is no node certs command "renew".'],
  ])('gsh %j: what is missing, and the usage of the commands that start so', async (argv, message) => {
    const res = await gsh(argv);
    expect([res.code, res.stdout]).toEqual([2, '']);
    expect(res.stderr.split('\n')).toEqual([`gsh: ${message}`, 'Usage:', expect.stringMatching(/^ {2}gsh node certs rotate <name>/), 'Run `gsh help node certs` for more.']);
  });

  test.each([['token'], ['user'], ['node'], ['server'], ['db'], ['image']])('gsh %s alone, or with an unknown command, names the group\'s commands', async (group) => {
    for (const [argv, message] of [[[group], `Name a ${group} command.`], [[group, 'bogus'], `There is no ${group} command "bogus".`]] as const) {
      const res = await gsh([...argv]);
      expect(res.code).toBe(2);
      const lines = res.stderr.split('\n');
      expect(lines.slice(0, 2)).toEqual([`gsh: ${message}`, 'Usage:']);
      expect(lines.slice(2, -1).every((l) => l.startsWith(`  gsh ${group} `) || l.startsWith('    ') || l === `  gsh ${group}`)).toBe(true);
      expect(lines[lines.length - 1]).toBe(`Run \`gsh help ${group}\` for more.`);
    }
  });
});

function countUsers(): number {
  const db = openDb(path.join(dataDir, 'gsh.sqlite'));
  try {
    return db.prepare('SELECT COUNT(*) FROM users').pluck().get() as number;
  } finally {
    db.close();
  }
}

describe('numbers: what is wrong and what is allowed', () => {
  const nodeAdd = ['node', 'add', '--name', 'eu-2', '--docker-host', 'unix:///nowhere.sock'];
  const memory = /--memory-mb takes a whole number of MiB from 1 to 999999999; got "(abc|0|-5|1\.5|1000000000)"\./;
  const ports = /--ports takes a range like 25565-25664: two ports from 1024 to 65535, the lower first; got "(10-5|30000-20000|abc|80-90|1024-70000)"\./;
  const expires = /--expires-in takes a whole number of seconds \(s\), minutes \(m\), hours \(h\) or days \(d\), from 60 seconds to 2 years, like 30d; (got "(-1|3y|1\.5h|soon)"|"(10|59s|731d)" is (shorter|longer))\./;
  const quota = /--(servers|running|memory-mb) takes a whole number from 0 to 1000000000, or "default"; got "(abc|-1|1\.5|1000000001)"\./;
  test.each([
    ['node add', [...nodeAdd, '--memory-mb', 'abc'], memory],
    ['node add', [...nodeAdd, '--memory-mb', '0'], memory],
    ['node add', [...nodeAdd, '--memory-mb', '-5'], memory],
    ['node add', [...nodeAdd, '--memory-mb', '1.5'], memory],
    ['node add', [...nodeAdd, '--memory-mb', '1000000000'], memory],
    ['node add', [...nodeAdd, '--ports', '10-5'], ports],
    ['node add', [...nodeAdd, '--ports', '30000-20000'], ports],
    ['node add', [...nodeAdd, '--ports', 'abc'], ports],
    ['node add', [...nodeAdd, '--ports', '80-90'], ports],
    ['node add', [...nodeAdd, '--ports', '1024-70000'], ports],
    ['token create', ['token', 'create', '--email', 'a@b.c', '--name', 'x', '--expires-in', '-1'], expires],
    ['token create', ['token', 'create', '--email', 'a@b.c', '--name', 'x', '--expires-in', '3y'], expires],
    ['token create', ['token', 'create', '--email', 'a@b.c', '--name', 'x', '--expires-in', '1.5h'], expires],
    ['token create', ['token', 'create', '--email', 'a@b.c', '--name', 'x', '--expires-in', 'soon'], expires],
    ['token create', ['token', 'create', '--email', 'a@b.c', '--name', 'x', '--expires-in', '10'], expires],
    ['token create', ['token', 'create', '--email', 'a@b.c', '--name', 'x', '--expires-in', '59s'], expires],
    ['token create', ['token', 'create', '--email', 'a@b.c', '--name', 'x', '--expires-in', '731d'], expires],
    ['user set-quota', ['user', 'set-quota', '--email', 'a@b.c', '--memory-mb', 'abc'], quota],
    ['user set-quota', ['user', 'set-quota', '--email', 'a@b.c', '--servers', '-1'], quota],
    ['user set-quota', ['user', 'set-quota', '--email', 'a@b.c', '--running', '1.5'], quota],
    ['user set-quota', ['user', 'set-quota', '--email', 'a@b.c', '--servers', '1000000001'], quota],
  ])('%s %j', async (usage, argv, message) => {
    expectUsageError(await gsh(argv), message, usage);
  });

  test('a number in range is taken: --expires-in 60 and 730d, --servers 0', async () => {
    expect((await gsh(['token', 'create', '--email', 'a@b.c', '--name', 'short', '--expires-in', '60'])).code).toBe(0);
    expect((await gsh(['token', 'create', '--email', 'a@b.c', '--name', 'long', '--expires-in', '730d'])).code).toBe(0);
    expect((await gsh(['user', 'set-quota', '--email', 'a@b.c', '--servers', '0'])).code).toBe(0);
  });
});

describe('refusals and failures: `gsh: <why>` on one line, exit 1', () => {
  test.each([
    ['an unknown user', ['token', 'revoke', '--email', 'nobody@b.c', '--id', 'tok_x'], 'There is no user nobody@b.c.'],
    ['an unknown user', ['user', 'quota', '--email', 'nobody@b.c'], 'There is no user nobody@b.c.'],
    ['an unknown user', ['token', 'list', '--email', 'nobody@b.c', '--json'], 'There is no user nobody@b.c.'],
    ['an unknown node', ['node', 'remove', 'eu-9'], 'There is no node eu-9.'],
    ['an unknown node', ['node', 'drain', 'eu-9'], 'There is no node eu-9.'],
    ['an unknown node', ['node', 'certs', 'rotate', 'eu-9'], 'There is no such node.'],
    ['an unknown server', ['server', 'move', 'srv_nothere', '--to', 'eu-9', '--no-wait'], expect.stringMatching(/^There is no server srv_nothere|srv_nothere/)],
    ['no database to back up', ['db', 'backup', 'copy.sqlite'], expect.stringMatching(/^There is no database at /)],
    ['no backup to restore', ['db', 'restore', '/nowhere/backup.sqlite'], 'There is no backup at /nowhere/backup.sqlite.'],
  ])('%s: %j', async (_name, argv, message) => {
    const res = await gsh(argv);
    expect({ code: res.code, stdout: res.stdout }).toEqual({ code: 1, stdout: '' });
    expect(res.stderr.split('\n')).toEqual([expect.stringMatching(/^gsh: /)]);
    expect(res.stderr.slice('gsh: '.length)).toEqual(message);
  });

  test('an invalid setting: config, and any command, exit 1 with the setting\'s message', async () => {
    for (const argv of [['config'], ['node', 'list'], ['token', 'list', '--email', 'a@b.c']]) {
      const res = await gsh(argv, { GAME_PORT_RANGE: '10-5' });
      expect([argv, res.code, res.stderr]).toEqual([argv, 1, expect.stringMatching(/^gsh: GAME_PORT_RANGE must look like/)]);
    }
  });

  test('success is exit 0 with nothing on stderr', async () => {
    for (const argv of [['config'], ['node', 'list'], ['token', 'create', '--email', 'a@b.c', '--name', 'x'], ['user', 'quota', '--email', 'a@b.c']]) {
      const res = await gsh(argv);
      expect([argv, res.code, res.stderr]).toEqual([argv, 0, '']);
    }
  });
});

describe('--json on every list', () => {
  test('every list command takes --json and its help names the fields', async () => {
    const lists = (await listedCommands()).filter((c) => c.endsWith(' list'));
    expect(lists).toEqual(expect.arrayContaining(['token list', 'node list']));
    for (const command of lists) {
      const help = (await gsh([...command.split(' '), '--help'])).stdout;
      expect([command, help]).toEqual([command, expect.stringMatching(new RegExp(`gsh ${command} .*\\[--json\\]`))]);
      expect([command, help]).toEqual([command, expect.stringMatching(/With\s+--json it prints one JSON array of objects/)]);
    }
  });

  test('token list --json: one document, the API Token fields, no secret; [] once none is left', async () => {
    expect((await gsh(['token', 'create', '--email', 'ops@example.com', '--name', 'deploy', '--scopes', 'servers:read', '--expires-in', '30d'])).code).toBe(0);
    const made = await gsh(['token', 'create', '--email', 'ops@example.com', '--name', 'Überwelt 世界 🎮\u009b2J']);
    expect(made.code).toBe(2); // a C1 control is refused in a name; store one the way an old release could have
    const db = openDb(path.join(dataDir, 'gsh.sqlite'));
    try {
      const store = createOperatorStore(db, systemClock, { defaults: loadConfig({ DATA_DIR: dataDir }).quotas, plans });
      store.tokens.create(store.users.findByEmail('ops@example.com')!.id, { name: 'Überwelt 世界 🎮\u009b2J', scopes: ['files'] });
    } finally {
      db.close();
    }
    const res = await gsh(['token', 'list', '--email', 'ops@example.com', '--json']);
    expect([res.code, res.stderr, res.outCalls]).toEqual([0, '', 1]);
    expect(res.stdout).not.toMatch(/[^\x20-\x7e]/); // pure ASCII: nothing a terminal would act on
    const tokens = JSON.parse(res.stdout) as Record<string, unknown>[];
    expect(tokens.map((t) => Object.keys(t).sort())).toEqual(Array(2).fill(['created_at', 'expires_at', 'id', 'last_used_at', 'name', 'prefix', 'scopes']));
    expect(tokens[0]).toMatchObject({ name: 'deploy', scopes: ['servers:read'], expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), last_used_at: null, prefix: expect.stringMatching(/^gsh_/) });
    expect(tokens[1]).toMatchObject({ name: 'Überwelt 世界 🎮\u009b2J', scopes: ['files'], expires_at: null });
    // The text list shows the same tokens.
    const text = await gsh(['token', 'list', '--email', 'ops@example.com']);
    expect(text.stdout.split('\n').map((l) => l.split('\t')[0])).toEqual(tokens.map((t) => t.id));
    for (const t of tokens) expect((await gsh(['token', 'revoke', '--email', 'ops@example.com', '--id', t.id as string])).code).toBe(0);
    expect((await gsh(['token', 'list', '--email', 'ops@example.com', '--json'])).stdout).toBe('[]');
  });

  test('node list --json: one document with each node\'s state, ports and memory; [] with no nodes', async () => {
    expect(await gsh(['node', 'list', '--json'])).toMatchObject({ code: 0, stdout: '[]', stderr: '' });
    const db = openDb(path.join(dataDir, 'gsh.sqlite'));
    try {
      const { nodes } = createOperatorStore(db, systemClock, { defaults: loadConfig({ DATA_DIR: dataDir }).quotas, plans });
      nodes.add({ name: 'eu-1', dockerHost: 'unix:///var/run/docker.sock', publicHost: 'eu-1.example.com', memoryMb: 4096, ports: [25565, 25664] });
      nodes.add({ name: 'eu-2', dockerHost: 'tcp://10.0.0.12:2376', publicHost: '10.0.0.12', memoryMb: 800, ports: [26000, 26009], tls: true });
      nodes.setDraining('eu-2', true);
    } finally {
      db.close();
    }
    const res = await gsh(['node', 'list', '--json']);
    expect([res.code, res.stderr, res.outCalls]).toEqual([0, '', 1]);
    const listed = JSON.parse(res.stdout) as Record<string, unknown>[];
    const fields = ['docker_host', 'lost_at', 'memory_mb', 'memory_mb_used', 'name', 'ports', 'public_host', 'servers', 'state', 'tls', 'unreachable_since'];
    expect(listed.map((n) => Object.keys(n).sort())).toEqual([fields, fields]);
    expect(listed).toEqual([
      { name: 'eu-1', state: 'active', unreachable_since: null, lost_at: null, docker_host: 'unix:///var/run/docker.sock', public_host: 'eu-1.example.com', ports: { low: 25565, high: 25664 }, tls: false, servers: 0, memory_mb: 4096, memory_mb_used: 0 },
      { name: 'eu-2', state: 'drained', unreachable_since: null, lost_at: null, docker_host: 'tcp://10.0.0.12:2376', public_host: '10.0.0.12', ports: { low: 26000, high: 26009 }, tls: true, servers: 0, memory_mb: 800, memory_mb_used: 0 },
    ]);
  });
});

describe('the process exit status, as `npx gsh` runs it', () => {
  const bin = path.join(__dirname, '..', '..', 'bin', 'gsh.js');
  test.each([
    [['help'], 0, 'stdout'],
    [['node', 'add', '--help'], 0, 'stdout'],
    [['node', 'list', '--json'], 0, 'stdout'],
    [['node', 'add', '--name', 'x', '--docker-host', 'unix:///x', '--memory-mb', 'abc'], 2, 'stderr'],
    [[], 2, 'stderr'],
    [['node', 'remove', 'eu-9'], 1, 'stderr'],
    [['db', 'backup', 'x.sqlite'], 1, 'stderr'],
  ])('gsh %j exits %s', (argv, status, stream) => {
    const res = spawnSync(process.execPath, [bin, ...argv], { env: { ...process.env, DATA_DIR: dataDir }, encoding: 'utf8' });
    expect(res.status).toBe(status);
    expect((stream === 'stdout' ? res.stdout : res.stderr).length).toBeGreaterThan(0);
    expect((stream === 'stdout' ? res.stderr : res.stdout)).toBe('');
  });
});
