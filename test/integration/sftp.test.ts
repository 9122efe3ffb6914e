// The SFTP server (docs/architecture.md "SFTP"; openapi/v1.yaml tag "SSH keys") on the local runtime, driven by
// Debian's real OpenSSH `sftp` client in batch mode (key login) and by ssh2's client (token as password).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client, type SFTPWrapper } from 'ssh2';
import { allScopes, createTestApp, tempDirsOfFile, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';
import { silentLogger } from '../../src/log';
import { buildSftp } from '../../src/sftp';
import { hostKeyFile } from '../../src/sftp/host-key';
import type { SftpServer } from '../../src/sftp/server';

jest.setTimeout(60_000);

const tempDir = tempDirsOfFile('sftp');
let t: TestApp;
let sftp: SftpServer;
let port: number;
let owner: string; // alice's token with every scope, files too
let id: string;
let dir: string;
let local: string;
let keyFile: string;
let registered: { status: number; body: { id: string; name: string; type: string; fingerprint: string } }; // the key, through the API
const auth = (token = owner) => ({ Authorization: `Bearer ${token}` });

beforeAll(async () => {
  t = await createTestApp();
  owner = t.token('alice@example.com', [...allScopes, 'files']);
  id = (await t.http.post('/v1/servers').set(auth()).send({ name: 'sftp', plan: 'micro', version: 'flying-squid-1.20' })).body.id;
  await until('installed', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'stopped');
  dir = path.join(t.config.dataDir, 'servers', id);
  const built = buildSftp(t.config.dataDir, { store: t.store, files: t.runtime.files, actors: t.actors }, silentLogger);
  sftp = built.sftp;
  port = (await sftp.listen(0, '127.0.0.1')).port;
  // The client trusts exactly the host key the service made in DATA_DIR (StrictHostKeyChecking=yes).
  local = tempDir();
  const hostPub = fs.readFileSync(`${hostKeyFile(t.config.dataDir)}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
  fs.writeFileSync(path.join(local, 'known_hosts'), `[127.0.0.1]:${port} ${hostPub}\n`);
  keyFile = path.join(local, 'id_ed25519');
  expect(spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'laptop', '-f', keyFile]).status).toBe(0);
  // Every test that logs in with OpenSSH's sftp uses this key, registered once here so each test runs alone too.
  registered = await t.http.post('/v1/ssh-keys').set(auth()).send({ public_key: fs.readFileSync(`${keyFile}.pub`, 'utf8') });
});
afterAll(async () => {
  await sftp?.close();
  await t.runtime.idle();
  await t.finish();
});

/**
 * Runs OpenSSH's sftp with these batch commands as `user`, with the key; its exit status and what it printed.
 * Asynchronous: the SFTP server answers from this same process.
 */
async function batch(user: string, commands: string[]): Promise<{ status: number | null; out: string }> {
  const file = path.join(local, 'batch');
  fs.writeFileSync(file, `${commands.join('\n')}\n`);
  const child = spawn('sftp', [
    '-b', file, '-P', String(port), '-F', '/dev/null', '-i', keyFile,
    '-o', 'StrictHostKeyChecking=yes', '-o', `UserKnownHostsFile=${path.join(local, 'known_hosts')}`,
    '-o', 'IdentitiesOnly=yes', '-o', 'PasswordAuthentication=no', '-o', 'BatchMode=yes', `${user}@127.0.0.1`,
  ], { cwd: local, stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const status = await new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { status, out };
}

/** An ssh2 client logged in with a password; its SFTP channel. */
async function connect(user: string, password: string): Promise<{ client: Client; sftp: SFTPWrapper; closed: Promise<void> }> {
  const client = new Client();
  const closed = new Promise<void>((resolve) => client.on('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    client.on('ready', () => resolve()).on('error', (err) => {
      client.end();
      reject(err);
    });
    client.connect({ host: '127.0.0.1', port, username: user, password, tryKeyboard: false, readyTimeout: 10_000 });
  });
  const channel = await new Promise<SFTPWrapper>((resolve, reject) => client.sftp((err, s) => (err ? reject(err) : resolve(s))));
  return { client, sftp: channel, closed };
}
const readdir = (s: SFTPWrapper, p: string) => new Promise<string[]>((resolve, reject) => s.readdir(p, (err, list) => (err ? reject(err) : resolve(list.map((e) => e.filename).sort()))));

test('an SSH key registered through the API logs in with OpenSSH sftp: upload, list, download, rename, delete', async () => {
  const created = registered;
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ name: 'laptop', type: 'ssh-ed25519' });
  expect(created.body.fingerprint).toBe(spawnSync('ssh-keygen', ['-lf', `${keyFile}.pub`], { encoding: 'utf8' }).stdout.split(' ')[1]);
  expect((await t.http.post('/v1/ssh-keys').set(auth()).send({ public_key: fs.readFileSync(`${keyFile}.pub`, 'utf8') })).body).toMatchObject({ status: 409, code: 'ssh_key_exists' });
  expect((await t.http.get('/v1/ssh-keys').set(auth())).body.data.map((k: { id: string }) => k.id)).toEqual([created.body.id]);

  const content = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
  fs.writeFileSync(path.join(local, 'plugin.jar'), content);
  const r = await batch(`${id}.alice@example.com`, [
    'mkdir plugins', 'put plugin.jar plugins/plugin.jar', 'ls -l plugins', 'get plugins/plugin.jar back.jar',
    'rename plugins/plugin.jar plugins/renamed.jar', 'put plugin.jar gone.jar', 'rm gone.jar', 'mkdir empty', 'rmdir empty', 'ls /..',
  ]);
  expect(r.out).toContain('plugin.jar');
  expect(r.status).toBe(0);
  expect(fs.readFileSync(path.join(dir, 'plugins', 'renamed.jar'))).toEqual(content);
  expect(fs.readFileSync(path.join(local, 'back.jar'))).toEqual(content);
  expect(fs.existsSync(path.join(dir, 'gone.jar'))).toBe(false);
  expect(fs.existsSync(path.join(dir, 'empty'))).toBe(false);

  // Each change is in the server's file activity, its actor the SFTP session and the key it logged in with.
  const activity = (await t.http.get(`/v1/servers/${id}/files/activity`).set(auth()).query({ limit: 100 })).body.data;
  const upload = activity.find((c: { operation: string; path: string }) => c.operation === 'upload' && c.path === 'plugins/plugin.jar');
  expect(upload.actor).toMatchObject({ type: 'user', token_id: null, sftp: { ssh_key_id: created.body.id } });
  expect(upload.actor.sftp.session_id).toMatch(/^sfs_/);
  expect(activity.map((c: { operation: string }) => c.operation)).toEqual(expect.arrayContaining(['move', 'delete', 'create_folder']));
  expect((await t.http.get(`/v1/ssh-keys/${created.body.id}`).set(auth())).body.last_used_at).not.toBeNull();
});

test('resumed transfers at an offset keep the bytes before it; setstat and symlinks are refused cleanly', async () => {
  const content = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7) % 256));
  fs.writeFileSync(path.join(local, 'world.zip'), content);
  fs.writeFileSync(path.join(dir, 'world.zip'), content.subarray(0, 80_000)); // an upload cut short
  fs.writeFileSync(path.join(dir, 'big.dat'), content);
  fs.writeFileSync(path.join(local, 'big.dat'), content.subarray(0, 50_000)); // a download cut short
  const r = await batch(`${id}.alice@example.com`, ['ls -l', 'reput world.zip world.zip', 'reget big.dat big.dat']);
  expect(r.status).toBe(0);
  expect(fs.readFileSync(path.join(dir, 'world.zip'))).toEqual(content);
  expect(fs.readFileSync(path.join(local, 'big.dat'))).toEqual(content);

  const chmod = await batch(`${id}.alice@example.com`, ['chmod 600 world.zip']);
  expect(chmod.status).not.toBe(0);
  expect(chmod.out).toMatch(/Permission denied/);
  const link = await batch(`${id}.alice@example.com`, ['symlink world.zip link.zip']);
  expect(link.status).not.toBe(0);
  expect(link.out).toMatch(/Permission denied/);
  expect(fs.existsSync(path.join(dir, 'link.zip'))).toBe(false);
  // A file the service writes for each launch is read-only over SFTP as through the API.
  fs.writeFileSync(path.join(local, 'settings.json'), '{}');
  const ro = await batch(`${id}.alice@example.com`, ['put settings.json settings.json']);
  expect(ro.status).not.toBe(0);
  expect(fs.readFileSync(path.join(dir, 'settings.json'), 'utf8')).not.toBe('{}');
});

test('a token as password needs the files scope, and reaches only servers with the files permission', async () => {
  const user = `${id}.alice@example.com`;
  const noScope = t.token('alice@example.com', allScopes);
  await expect(connect(user, noScope)).rejects.toThrow(/authentication/i);
  await expect(connect(user, 'gsh_wrong')).rejects.toThrow(/authentication/i);

  const s = await connect(user, owner);
  expect(await readdir(s.sftp, '/')).toContain('world');
  expect(await readdir(s.sftp, '/../../..')).toEqual(await readdir(s.sftp, '/')); // never above the top
  s.client.end();
  await s.closed;

  // Bob has a server of his own; alice's is not his, until shared, and then only with `files`.
  const bob = t.token('bob@example.com', [...allScopes, 'files']);
  await expect(connect(`${id}.bob@example.com`, bob)).rejects.toThrow(/authentication/i);
  const member = await t.http.post(`/v1/servers/${id}/members`).set(auth()).send({ email: 'bob@example.com', permissions: ['console'] });
  expect(member.status).toBe(201);
  await expect(connect(`${id}.bob@example.com`, bob)).rejects.toThrow(/authentication/i);
  await t.http.patch(`/v1/servers/${id}/members/${member.body.id}`).set(auth()).send({ permissions: ['files'] }).expect(200);
  const shared = await connect(`${id}.bob@example.com`, bob);
  expect(await readdir(shared.sftp, '/')).toContain('world');
  // Removing the member ends the session within a second (a sweep, as for event streams).
  await t.http.delete(`/v1/servers/${id}/members/${member.body.id}`).set(auth()).expect(204);
  await expect(Promise.race([shared.closed.then(() => 'closed'), new Promise((r) => setTimeout(() => r('open'), 5_000))])).resolves.toBe('closed');
  // Alice's password is never a way into another server than the one named.
  await expect(connect(`srv_nosuchserver.alice@example.com`, owner)).rejects.toThrow(/authentication/i);
});

test('a revoked token ends its open SFTP session', async () => {
  const made = await t.http.post('/v1/tokens').set(auth()).send({ name: 'ftp client', scopes: ['files'] });
  expect(made.status).toBe(201);
  const s = await connect(`${id}.alice@example.com`, made.body.token);
  expect(await readdir(s.sftp, '/')).toContain('world');
  await t.http.delete(`/v1/tokens/${made.body.id}`).set(auth()).expect(204);
  await expect(Promise.race([s.closed.then(() => 'closed'), new Promise((r) => setTimeout(() => r('open'), 5_000))])).resolves.toBe('closed');
  expect(sftp.sessions()).toBe(0);
});
