// The SFTP server's limits (issue 40 §3; docs/architecture.md "SFTP"), driven by ssh2's client with a token as
// password: a session's staged writes count in the plan's disk as they come, as the Files API's uploads do (a write
// past the room fails with SSH_FX_FAILURE and how much is left; an API upload sees the room a session holds), and a
// session holds at most MAX_HANDLES open handles (one more fails cleanly, with a message). The runtime tests' fake
// game (operator software); game ports 28690-28699.
import fs from 'node:fs';
import path from 'node:path';
import { Client, type SFTPWrapper } from 'ssh2';
import { allScopes, createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';
import { silentLogger } from '../../src/log';
import { buildSftp } from '../../src/sftp';
import type { SftpServer } from '../../src/sftp/server';
import { MAX_HANDLES } from '../../src/sftp/session-state';

jest.setTimeout(60_000);
const MIB = 1024 * 1024;
let t: TestApp;
let sftp: SftpServer;
let port: number;
let token: string;
let id: string;
let dir: string;
const auth = () => ({ Authorization: `Bearer ${token}` });

beforeAll(async () => {
  t = await createTestApp({ boot: true, software: path.join(__dirname, '..', 'runtime', 'fixtures', 'software'), env: { GAME_PORT_RANGE: '28690-28699' } });
  token = t.token('sftp-limits@example.com', [...allScopes, 'files']);
  const created = await t.http.post('/v1/servers').set(auth()).send({ name: 'sftp-limits', plan: 'micro', version: 'fake-game-1.0' });
  id = created.body.id as string;
  await until('installed', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'stopped');
  dir = path.join(t.config.dataDir, 'servers', id);
  sftp = buildSftp(t.config.dataDir, { store: t.store, files: t.runtime.files, actors: t.actors }, silentLogger).sftp;
  port = (await sftp.listen(0, '127.0.0.1')).port;
});
afterAll(async () => {
  await sftp?.close();
  await t.runtime.idle();
  await t.finish();
});

async function connect(): Promise<{ client: Client; sftp: SFTPWrapper }> {
  const client = new Client();
  await new Promise<void>((resolve, reject) => {
    client.on('ready', () => resolve()).on('error', reject);
    client.connect({ host: '127.0.0.1', port, username: `${id}.sftp-limits@example.com`, password: token, tryKeyboard: false, readyTimeout: 10_000 });
  });
  const channel = await new Promise<SFTPWrapper>((resolve, reject) => client.sftp((err, s) => (err ? reject(err) : resolve(s))));
  return { client, sftp: channel };
}

/** The SFTP call's outcome: 'ok' with its value, or its status code and message. */
function outcome<T>(call: (cb: (err: (Error & { code?: number }) | null | undefined, value?: T) => void) => void): Promise<{ ok: true; value: T } | { ok: false; code: number | undefined; message: string }> {
  return new Promise((resolve) => call((err, value) => resolve(err ? { ok: false, code: err.code, message: err.message } : { ok: true, value: value as T })));
}

test("a session's staged writes count in the plan's disk as they come: past the room a write fails with how much is left", async () => {
  fs.writeFileSync(path.join(dir, 'filler.bin'), '');
  fs.truncateSync(path.join(dir, 'filler.bin'), 2040 * MIB); // sparse: counted by its length
  await t.runtime.diskWatcher.measureNow();
  const used = (await t.http.get(`/v1/servers/${id}`).set(auth())).body.disk_used_mb as number;
  const left = (2048 - used) * MIB;
  const half = Math.floor(left / MIB / 2);
  const s = await connect();
  try {
    const opened = await outcome<Buffer>((cb) => s.sftp.open('/staged.bin', 'w', cb));
    if (!opened.ok) throw new Error(opened.message);
    const handle = opened.value;
    const chunk = Buffer.alloc(MIB, 1);
    for (let i = 0; i < half; i++) {
      const wrote = await outcome<void>((cb) => s.sftp.write(handle, chunk, 0, chunk.length, i * MIB, cb));
      expect(wrote.ok).toBe(true);
    }
    // The staged half is held: an API upload of what was left before it no longer fits.
    const upload = await t.http.put(`/v1/servers/${id}/files/content`).query({ path: 'api.bin' }).set(auth()).set('Content-Type', 'application/octet-stream').send(Buffer.alloc(left - half * MIB + 1));
    expect([upload.status, upload.body.code]).toEqual([507, 'insufficient_storage']);
    // A write past the room fails cleanly, with how much room is left; nothing lands.
    const past = await outcome<void>((cb) => s.sftp.write(handle, chunk, 0, chunk.length, left, cb));
    expect(past).toMatchObject({ ok: false, code: 4 }); // SSH_FX_FAILURE
    expect(past.ok ? '' : past.message).toMatch(/disk has \d+ left/);
    expect((await outcome<void>((cb) => s.sftp.close(handle, cb))).ok).toBe(true);
    expect(fs.statSync(path.join(dir, 'staged.bin')).size).toBe(half * MIB);
  } finally {
    s.client.end();
  }
  // The session's hold was given back with its close: the rest of the room is there for the API.
  const rest = left - half * MIB;
  const fits = await t.http.put(`/v1/servers/${id}/files/content`).query({ path: 'api.bin' }).set(auth()).set('Content-Type', 'application/octet-stream').send(Buffer.alloc(rest));
  expect(fits.status).toBe(201);
  fs.rmSync(path.join(dir, 'filler.bin'));
  await t.runtime.diskWatcher.measureNow();
});

test(`a session holds at most ${MAX_HANDLES} open handles: one more fails with a message, and closing one makes room`, async () => {
  const s = await connect();
  try {
    const handles: Buffer[] = [];
    for (let i = 0; i < MAX_HANDLES; i++) {
      const opened = await outcome<Buffer>((cb) => s.sftp.opendir('/', cb));
      if (!opened.ok) throw new Error(`handle ${i}: ${opened.message}`);
      handles.push(opened.value);
    }
    const dirMore = await outcome<Buffer>((cb) => s.sftp.opendir('/', cb));
    expect(dirMore).toMatchObject({ ok: false, code: 4 }); // SSH_FX_FAILURE
    expect(dirMore.ok ? '' : dirMore.message).toMatch(new RegExp(`At most ${MAX_HANDLES} files and folders may be open`));
    const fileMore = await outcome<Buffer>((cb) => s.sftp.open('/more.txt', 'w', cb));
    expect(fileMore).toMatchObject({ ok: false, code: 4 });
    expect(fs.existsSync(path.join(dir, 'more.txt'))).toBe(false);
    const staging = path.join(t.config.dataDir, 'tmp', 'sftp');
    expect(fs.existsSync(staging) ? fs.readdirSync(staging) : []).toEqual([]);
    // The session still answers, and a closed handle makes room for another.
    expect((await outcome<void>((cb) => s.sftp.close(handles.pop()!, cb))).ok).toBe(true);
    const opened = await outcome<Buffer>((cb) => s.sftp.open('/more.txt', 'w', cb));
    expect(opened.ok).toBe(true);
    if (opened.ok) expect((await outcome<void>((cb) => s.sftp.close(opened.value, cb))).ok).toBe(true);
    expect(fs.existsSync(path.join(dir, 'more.txt'))).toBe(true);
  } finally {
    s.client.end();
  }
});
