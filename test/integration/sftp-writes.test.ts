// How an SFTP session's writes land (docs/architecture.md "SFTP"; BENCHMARKS.md §13), driven by ssh2's client with a
// token as password: writes sent without waiting for their answers, overlapping and out of order, and a CLOSE sent
// right behind them, land as they would one by one (src/sftp/write-batches.ts); with RUNTIME=local the staged file
// is renamed into the server's folder (the same inode, not a copy), and where the staging is on another file system
// it is streamed instead. The runtime tests' fake game (operator software); game ports 29580-29589.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client, type SFTPWrapper } from 'ssh2';
import { allScopes, createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';
import { silentLogger } from '../../src/log';
import { buildSftp } from '../../src/sftp';
import type { SftpServer } from '../../src/sftp/server';

jest.setTimeout(60_000);
const KIB = 1024;
let t: TestApp;
let token: string;
let id: string;
let dir: string;
const servers: SftpServer[] = [];
const auth = () => ({ Authorization: `Bearer ${token}` });

beforeAll(async () => {
  t = await createTestApp({ boot: true, software: path.join(__dirname, '..', 'runtime', 'fixtures', 'software'), env: { GAME_PORT_RANGE: '29580-29589' } });
  token = t.token('sftp-writes@example.com', [...allScopes, 'files']);
  const created = await t.http.post('/v1/servers').set(auth()).send({ name: 'sftp-writes', plan: 'micro', version: 'fake-game-1.0' });
  id = created.body.id as string;
  await until('installed', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'stopped');
  dir = path.join(t.config.dataDir, 'servers', id);
});
afterAll(async () => {
  for (const s of servers) await s.close();
  await t.runtime.idle();
  await t.finish();
});

/** An SFTP server over the test's service, staging its writes under `dataDir`/tmp/sftp; its port. */
async function serve(dataDir: string): Promise<number> {
  const { sftp } = buildSftp(dataDir, { store: t.store, files: t.runtime.files, actors: t.actors }, silentLogger);
  servers.push(sftp);
  return (await sftp.listen(0, '127.0.0.1')).port;
}

async function connect(port: number): Promise<{ client: Client; sftp: SFTPWrapper }> {
  const client = new Client();
  await new Promise<void>((resolve, reject) => {
    client.on('ready', () => resolve()).on('error', reject);
    client.connect({ host: '127.0.0.1', port, username: `${id}.sftp-writes@example.com`, password: token, tryKeyboard: false, readyTimeout: 10_000 });
  });
  const channel = await new Promise<SFTPWrapper>((resolve, reject) => client.sftp((err, s) => (err ? reject(err) : resolve(s))));
  return { client, sftp: channel };
}

const call = <T>(fn: (cb: (err: Error | null | undefined, value?: T) => void) => void) =>
  new Promise<T>((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value as T))));

/**
 * Writes `parts` ([offset, bytes]) to a new file `name`, all sent before any answer, then CLOSE right behind them;
 * calls `open` with the staging folder's files while the handle is open. Resolves with the answers' outcomes.
 */
async function writeAll(port: number, name: string, parts: [number, Buffer][], open: () => void): Promise<void> {
  const s = await connect(port);
  try {
    const handle = await call<Buffer>((cb) => s.sftp.open(`/${name}`, 'w', cb));
    const written = parts.map(([at, data]) => call<void>((cb) => s.sftp.write(handle, data, 0, data.length, at, cb)));
    const closed = call<void>((cb) => s.sftp.close(handle, cb));
    open();
    await Promise.all(written);
    await closed;
  } finally {
    s.client.end();
  }
}

test('pipelined writes, overlapping and out of order, land as one by one; the staged file is renamed in place', async () => {
  const port = await serve(t.config.dataDir);
  const staging = path.join(t.config.dataDir, 'tmp', 'sftp');
  // 320 writes of 16 KiB in order (as OpenSSH's sftp sends a file, in 32 KiB; ssh2's client splits a write past its
  // packet size into writes sent one after the other), then one back at 100 KiB over them, one past a gap at the
  // end, and one overwriting part of that: each later write wins where they overlap.
  const body = crypto.randomBytes(320 * 16 * KIB);
  const parts: [number, Buffer][] = [];
  for (let at = 0; at < body.length; at += 16 * KIB) parts.push([at, body.subarray(at, at + 16 * KIB)]);
  const back = crypto.randomBytes(20 * KIB);
  const tail = crypto.randomBytes(10 * KIB);
  const over = crypto.randomBytes(3 * KIB);
  parts.push([100 * KIB, back], [body.length + 5 * KIB, tail], [body.length + 6 * KIB, over]);
  const expected = Buffer.alloc(body.length + 15 * KIB);
  for (const [at, data] of parts) data.copy(expected, at);

  let stagedIno: number | null = null;
  await writeAll(port, 'pipelined.bin', parts, () => {
    const names = fs.readdirSync(staging);
    expect(names).toHaveLength(1);
    stagedIno = fs.statSync(path.join(staging, names[0])).ino;
  });
  const landed = path.join(dir, 'pipelined.bin');
  expect(fs.readFileSync(landed).equals(expected)).toBe(true);
  const st = fs.statSync(landed);
  expect(st.ino).toBe(stagedIno); // moved, not copied
  expect(st.mode & 0o777).toBe(0o644); // as an API upload's
  expect(fs.readdirSync(staging)).toEqual([]);
  // Through the files service: recorded with its size, and what the API reads back.
  const entry = (await t.http.get(`/v1/servers/${id}/files/metadata`).query({ path: 'pipelined.bin' }).set(auth())).body;
  expect(entry).toMatchObject({ type: 'file', size: expected.length });
  const activity = (await t.http.get(`/v1/servers/${id}/files/activity`).set(auth())).body.data as { operation: string; path: string; bytes: number }[];
  expect(activity.find((c) => c.path === 'pipelined.bin')).toMatchObject({ operation: 'upload', bytes: expected.length });
});

test('a staging folder on another file system (tmpfs) is streamed into place instead of renamed', async () => {
  if (!fs.existsSync('/dev/shm')) throw new Error('this test needs /dev/shm (a tmpfs) for a second file system');
  const other = fs.mkdtempSync('/dev/shm/gsh-sftp-writes-');
  try {
    expect(fs.statSync(other).dev).not.toBe(fs.statSync(t.config.dataDir).dev);
    const port = await serve(other);
    const body = crypto.randomBytes(3 * 1024 * KIB + 123);
    const parts: [number, Buffer][] = [];
    for (let at = 0; at < body.length; at += 16 * KIB) parts.push([at, body.subarray(at, at + 16 * KIB)]);
    let stagedIno: number | null = null;
    await writeAll(port, 'streamed.bin', parts, () => {
      const names = fs.readdirSync(path.join(other, 'tmp', 'sftp'));
      expect(names).toHaveLength(1);
      stagedIno = fs.statSync(path.join(other, 'tmp', 'sftp', names[0])).ino;
    });
    const landed = path.join(dir, 'streamed.bin');
    expect(fs.readFileSync(landed).equals(body)).toBe(true);
    expect(stagedIno).not.toBeNull();
    expect(fs.readdirSync(path.join(other, 'tmp', 'sftp'))).toEqual([]);
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('.gsh-'))).toEqual([]);
  } finally {
    fs.rmSync(other, { recursive: true, force: true });
  }
});
