// C1 control characters (U+0080–U+009F) are refused wherever C0 ones are, and the CLI never prints one (issue 27
// §4): a terminal acts on them as on ESC sequences, U+009B being CSI by itself (`\u009b2J` clears the screen).
// The API refuses them by the spec's patterns (ServerName, CreateTokenRequest.name, AlertRuleName) and the
// software's setting schemas; the CLI refuses them in `token create --name` and escapes every line it prints.
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { createTestApp, tempDir, type TestApp } from '../helpers/app';
import { openDb } from '../../src/store/db';
import { createTokensRepo } from '../../src/store/tokens-repo';
import { createUsersRepo } from '../../src/store/users-repo';
import { systemClock } from '../../src/clock';
import { printable } from '../../src/printable';
import { operatorEvents } from '../../src/store';

const CSI = '\u009b'; // C1 "control sequence introducer"
const NEL = '\u0085'; // C1 "next line"
const evil = `Lobby ${CSI}2J${NEL}`;

let t: TestApp;
let id: string;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });
beforeAll(async () => {
  t = await createTestApp();
  token = t.token();
  const made = await t.http.post('/v1/servers').set(auth()).send({ name: 'Plain', plan: 'small', version: 'flying-squid-1.20.5' });
  expect(made.status).toBe(201);
  id = made.body.id;
});
afterAll(() => t.finish());

const refused: Array<[string, { method: 'post' | 'patch'; path: () => string; body: object; pointer: string }]> = [
  ['a server name', { method: 'post', path: () => '/v1/servers', body: { name: evil, plan: 'small', version: 'flying-squid-1.20.5' }, pointer: '/body/name' }],
  ['a new server name', { method: 'patch', path: () => `/v1/servers/${id}`, body: { name: evil }, pointer: '/body/name' }],
  ['a token name', { method: 'post', path: () => '/v1/tokens', body: { name: evil, scopes: ['servers:read'] }, pointer: '/body/name' }],
  ['an alert rule name', { method: 'post', path: () => `/v1/servers/${id}/alerts`, body: { kind: 'crash', name: evil }, pointer: '/body/name' }],
  ['a backup name', { method: 'post', path: () => `/v1/servers/${id}/backups`, body: { name: evil }, pointer: '/body/name' }],
  ['a console command', { method: 'post', path: () => `/v1/servers/${id}/console`, body: { command: `say ${CSI}2J` }, pointer: '/body/command' }],
  ['a message of the day', { method: 'patch', path: () => `/v1/servers/${id}/settings`, body: { motd: evil }, pointer: '/body/motd' }],
  ['a lone C1 character at the end of a name', { method: 'patch', path: () => `/v1/servers/${id}`, body: { name: `Lobby${NEL}` }, pointer: '/body/name' }],
];

test.each(refused)('%s with a C1 control is 400 and changes nothing', async (_name, c) => {
  // What a refused request could have written: server and token names, rules, backups, settings.
  const written = async () => {
    const names = async (p: string) => (await t.http.get(p).set(auth())).body.data.map((x: { name: string | null }) => x.name);
    const settings = (await t.http.get(`/v1/servers/${id}/settings`).set(auth())).body.values;
    return [await names('/v1/servers'), await names('/v1/tokens'), await names(`/v1/servers/${id}/alerts`), await names(`/v1/servers/${id}/backups`), settings];
  };
  const before = await written();
  const res = await t.http[c.method](c.path()).set(auth()).send(c.body);
  expect([res.status, res.body.code]).toEqual([400, 'validation_failed']);
  expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(c.pointer);
  expect(await written()).toEqual(before);
});

test('names of any script, and characters just outside the C1 block, are still accepted', async () => {
  for (const name of ['Überwelt ª 世界 🎮', 'tab-free ~ and \u00a0no-break']) {
    const res = await t.http.patch(`/v1/servers/${id}`).set(auth()).send({ name });
    expect([res.status, res.body.name]).toEqual([200, name]);
  }
});

test('printable() escapes what a terminal acts on and keeps the rest', () => {
  expect(printable(`a${CSI}2J\u001b[31mb\u0007c\td\ne${NEL}\u202ef\u2028`)).toBe('a\\u009b2J\\u001b[31mb\\u0007c\td\ne\\u0085\\u202ef\\u2028');
  expect(printable('Überwelt 世界 🎮')).toBe('Überwelt 世界 🎮');
  expect(printable('\ud800x')).toBe('\\ud800x');
  // issue 39 §4: bidi marks, zero-width and tag characters printed raw
  expect(printable('a\u200eb\u200fc\u061cd')).toBe('a\\u200eb\\u200fc\\u061cd');
  expect(printable('ad\u200bmin\u2060\ufeff')).toBe('ad\\u200bmin\\u2060\\ufeff');
  expect(printable('flag\u{e0067}\u{e007f}')).toBe('flag\\u{e0067}\\u{e007f}');
});

describe('npx gsh', () => {
  const bin = path.join(__dirname, '..', '..', 'bin', 'gsh.js');
  const run = (args: string[], dataDir: string) => spawnSync(process.execPath, [bin, ...args], { env: { ...process.env, DATA_DIR: dataDir }, encoding: 'utf8' });
  // Any C0 control but tab and newline, DEL, or C1 control in what the CLI printed.
  const controls = (s: string) => [...s.matchAll(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g)].map((m) => m[0].charCodeAt(0).toString(16));
  let dataDir: string;
  beforeEach(() => {
    dataDir = tempDir('cli-c1');
  });
  afterEach(() => execFileSync('rm', ['-rf', dataDir]));

  test('token list escapes control characters in a stored name instead of printing them', () => {
    expect(run(['token', 'create', '--email', 'ops@example.com', '--name', 'deploy'], dataDir).status).toBe(0);
    // A row from before names were checked (or written by another tool): the repository takes any text.
    const db = openDb(path.join(dataDir, 'gsh.sqlite'));
    try {
      const user = createUsersRepo(db, systemClock).ensure('ops@example.com');
      createTokensRepo(db, systemClock, operatorEvents(db, systemClock)).create(user.id, { name: `x${CSI}2J\u001b]0;owned\u0007${NEL}`, scopes: ['servers:read'] });
    } finally {
      db.close();
    }
    const listed = run(['token', 'list', '--email', 'ops@example.com'], dataDir);
    expect(listed.status).toBe(0);
    expect(controls(listed.stdout)).toEqual([]);
    expect(listed.stdout).toContain('x\\u009b2J\\u001b]0;owned\\u0007\\u0085');
  });

  test('token create refuses a name with a C1 control, and writes nothing', () => {
    const made = run(['token', 'create', '--email', 'ops@example.com', '--name', `x${CSI}2J`], dataDir);
    expect(made.status).not.toBe(0);
    expect(made.stderr).toContain('--name may not hold control characters');
    expect(controls(made.stderr)).toEqual([]);
    expect(run(['token', 'list', '--email', 'ops@example.com'], dataDir).stdout.trim()).toBe('');
  });
});
