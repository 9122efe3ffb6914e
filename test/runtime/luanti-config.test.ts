// The values written into a Luanti server's minetest.conf (src/runtime/software/luanti-launcher.cjs `writeConfig`)
// can change no other key (SECURITY.md, "A setting rewriting a game's config"). Luanti's settings syntax (5.6.1,
// src/settings.cpp): `name = value` with both sides trimmed of C whitespace; a value of `{` opens a group ended by
// `}`, a value of `"""` a multi-line value ended by a line of `"""`; `#` starts a comment line. Each special form is
// written by the real launcher and read back by the real engine (Debian's minetest-server 5.6.1) through its own
// `/set <name>`, and the keys the service decides (port, bind_address, max_users, world) are checked the same way.
// Values the file cannot hold are refused by the settings' validation (the API) and by the writer itself.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createTestApp, tempDirsOfFile } from '../helpers/app';
import { until } from '../helpers/wait';
import { luantiAnswers } from './luanti-probe';

const LAUNCHER = path.join(__dirname, '..', '..', 'src', 'runtime', 'software', 'luanti-launcher.cjs');
const BINARY = '/usr/lib/minetest/minetestserver';
// A port of this worker's block above the test apps' game ports (test/helpers/app.ts).
const PORT = Number(process.env.GSH_TEST_PORT_BASE ?? 12000) + Number(process.env.JEST_WORKER_ID ?? 1) * 200 + 150;

/** Every special form of the syntax, as a value; each must come back from the engine exactly as written. */
const forms: Array<[string, string]> = [
  ['a group opener', '{'],
  ['a group closer', '}'],
  ['a group opener with spaces around it', '  {  '],
  ['a multi-line opener with spaces around it', ' """ '],
  ['a multi-line opener inside text', 'name """ more'],
  ['text ending in a multi-line opener', 'name"""'],
  ['an equals sign', 'a = b'],
  ['only an equals sign', '='],
  ['a key-looking value', 'bind_address = 0.0.0.0'],
  ['a comment sign', '# not a comment'],
  ['only a comment sign', '#'],
  ['leading spaces', '   leading'],
  ['trailing spaces', 'trailing   '],
  ['a tab at each end', '\ttabs\t'],
  ['a vertical tab and a form feed at the ends (C isspace)', '\u000bvt ff\u000c'],
  ['backslashes', 'back\\slash\\'],
  ['a backslash-n', 'one\\ntwo'],
  ['a backslash at the end', 'ends with \\'],
  ['U+2028 line separator', 'one\u2028two'],
  ['U+2029 paragraph separator', 'one\u2029two'],
  ['U+0085 next line', 'one\u0085two'],
  ['a lone closing brace line', '}\u2028bind_address = 0.0.0.0'],
  ['UTF-8 text', 'Ünïcødé ☃ 服务器'],
];

/** The launcher on its own (no IPC: reports and the game's log come on stdout), with these settings. */
function launch(dir: string, settings: Record<string, unknown>): { child: ChildProcessWithoutNullStreams; output: () => string } {
  fs.writeFileSync(path.join(dir, 'settings.json'), JSON.stringify(settings));
  const child = spawn(process.execPath, [LAUNCHER, '--binary', BINARY, '--server-id', 'srv_config', '--port', String(PORT),
    '--host', '127.0.0.1', '--max-players', '5', '--dir', dir]);
  let text = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (text += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (text += c));
  return { child, output: () => text };
}

/** The launcher's exit code; one still running after `ms` is killed and reported as 'running'. */
function exited(child: ChildProcessWithoutNullStreams, ms = 60_000): Promise<number | null | 'running'> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    const timer = setTimeout(() => (child.kill('SIGKILL'), resolve('running')), ms);
    child.once('exit', (code) => (clearTimeout(timer), resolve(code)));
  });
}

/** The engines' folders, removed once the file is done. */
const engineDir = tempDirsOfFile('luanti-conf');

test('every special form reaches the engine as written, under its own key; the service\'s keys stay its own', async () => {
  const dir = engineDir();
  const probes = Object.fromEntries(forms.map(([, value], i) => [`gsh_probe_${i}`, value]));
  const { child, output } = launch(dir, { server_name: '{', motd: '"""x', ...probes });
  try {
    await until('the engine listening', () => /Server for gameid="[^"]+" listening on/.test(output()), 90_000);
    const asked = [...forms.map((_f, i) => `gsh_probe_${i}`), 'server_name', 'motd', 'bind_address', 'port', 'max_users', 'world'];
    child.stdin.write(asked.map((k) => `/set ${k}\n`).join(''));
    const answers = await until('every /set answer', () => {
      const got = new Map<string, string>();
      for (const line of output().split('\n')) {
        const m = /\[console\] (\w+) = ([^]*)$/.exec(line); // [^]: U+2028 and U+2029 are no line end here
        if (m) got.set(m[1], m[2]);
      }
      return asked.every((k) => got.has(k)) ? got : undefined;
    }, 30_000);
    expect(forms.map(([name], i) => [name, answers.get(`gsh_probe_${i}`)])).toEqual(forms.map(([name, value]) => [name, value]));
    expect(Object.fromEntries(['server_name', 'motd', 'bind_address', 'port', 'max_users', 'world'].map((k) => [k, answers.get(k)]))).toEqual({
      server_name: '{', motd: '"""x', bind_address: '127.0.0.1', port: String(PORT), max_users: '5', world: path.join(dir, 'world'),
    });
    expect(await luantiAnswers('127.0.0.1', PORT)).toBe(true);
  } finally {
    child.kill('SIGTERM');
    await exited(child);
  }
}, 180_000);

describe('a value the file cannot hold is refused by the writer, before the game starts', () => {
  test.each([
    ['exactly three double quotes (they would open a multi-line value with no end)', '"""'],
    ['a line feed', 'a\nbind_address = 0.0.0.0'],
    ['a carriage return', 'a\rb'],
    ['CR LF', 'a\r\nport = 1'],
    ['a NUL', 'a\u0000b'],
  ])('%s', async (_name, value) => {
    const dir = engineDir();
    const { child, output } = launch(dir, { server_name: value });
    expect(await exited(child, 10_000)).toBe(1);
    expect(output()).toMatch(/server_name/);
    expect(fs.existsSync(path.join(dir, 'minetest.conf'))).toBe(false);
  });
});

test('the settings refuse the one text the file cannot hold, with a 400 at its pointer, changing nothing', async () => {
  const t = await createTestApp();
  try {
    const token = t.token();
    const created = await t.http.post('/v1/servers').set('Authorization', `Bearer ${token}`).send({ name: 'conf', plan: 'micro', version: 'luanti-5.6.1' });
    expect(created.status).toBe(201);
    for (const setting of ['server_name', 'motd']) {
      const res = await t.http.patch(`/v1/servers/${created.body.id}/settings`).set('Authorization', `Bearer ${token}`).send({ [setting]: '"""' });
      expect([res.status, res.body.errors?.[0]?.pointer]).toEqual([400, `/body/${setting}`]);
    }
    const now = await t.http.get(`/v1/servers/${created.body.id}/settings`).set('Authorization', `Bearer ${token}`);
    expect(now.body.values).toMatchObject({ server_name: 'A Luanti server', motd: 'Welcome to this Luanti server.' });
    // What the file can hold is taken as it is.
    const ok = await t.http.patch(`/v1/servers/${created.body.id}/settings`).set('Authorization', `Bearer ${token}`).send({ server_name: ' { """ = # \\ ' });
    expect(ok.status).toBe(200);
    await t.runtime.idle();
  } finally {
    await t.finish();
  }
});
