// The Files API's transfers under load (issue 40 §3; openapi/v1.yaml tag Files, README FILES_TRANSFERS_PER_USER):
// each user has at most N uploads, downloads and extractions under way (one more is 429 too_many_transfers with a
// Retry-After) while other users go on as before; a big upload of one tenant never holds up another's calls; the
// plan's disk holds under uploads side by side (each holds its bytes before its first one is written); and what
// transfers under way at a kill left behind is swept at the next boot. Bodies are sent through node:http by hand,
// so a test decides when each one ends. The runtime tests' fake game (operator software); game ports 28670-28689.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createTestApp, tempDir, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

jest.setTimeout(60_000);
const MIB = 1024 * 1024;
let t: TestApp;
let base: string;
let stop: () => Promise<void>;
let alice: string;
let bob: string;
const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

const software = () => path.join(__dirname, '..', 'runtime', 'fixtures', 'software');

beforeAll(async () => {
  t = await createTestApp({ boot: true, software: software(), env: { GAME_PORT_RANGE: '28670-28679', FILES_TRANSFERS_PER_USER: '2' } });
  alice = t.token('alice-transfers@example.com');
  bob = t.token('bob-transfers@example.com');
  ({ base, close: stop } = await t.listen());
});
afterAll(async () => {
  await stop();
  await t.runtime.idle();
  await t.finish();
});

async function installed(token: string, name: string, app = t): Promise<string> {
  const created = await app.http.post('/v1/servers').set(auth(token)).send({ name, plan: 'micro', version: 'fake-game-1.0' });
  expect(created.status).toBe(201);
  await until('installed', async () => (await app.http.get(`/v1/servers/${created.body.id}`).set(auth(token))).body.state === 'stopped');
  return created.body.id as string;
}

interface Answer { status: number; headers: http.IncomingHttpHeaders; body: Record<string, unknown> }

/**
 * A request whose body of `size` bytes is sent as the test says: `send(n)` writes n more bytes, `end()` the rest.
 * `answer` resolves with the status and the JSON body, whenever the service answers (maybe before the body ended).
 */
function heldUpload(token: string, url: string, size: number, method = 'PUT') {
  const req = http.request(`${base}${url}`, { method, headers: { ...auth(token), 'Content-Type': 'application/octet-stream', 'Content-Length': String(size) } });
  let sent = 0;
  req.on('error', () => undefined); // a body refused early may meet a closed socket
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} }));
      res.on('error', reject);
    });
  });
  return {
    answer,
    send(n: number) {
      const k = Math.min(n, size - sent);
      sent += k;
      return new Promise<void>((resolve) => (req.write(Buffer.alloc(k, 7)) ? resolve() : req.once('drain', resolve)));
    },
    end() {
      req.end(Buffer.alloc(size - sent, 7));
      sent = size;
    },
  };
}

/** A download whose answer is not read (paused): the service's side stays under way until `close()`. */
async function heldDownload(token: string, url: string): Promise<{ status: number; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}${url}`, { headers: auth(token) }, (res) => {
      res.pause();
      resolve({ status: res.statusCode!, close: () => req.destroy() });
    });
    req.on('error', (err) => (err.message.includes('socket hang up') ? undefined : reject(err)));
  });
}

const content = (id: string, p: string) => `/v1/servers/${id}/files/content?path=${encodeURIComponent(p)}`;

test('a user has at most FILES_TRANSFERS_PER_USER transfers under way: one more is 429 with Retry-After, other users unaffected', async () => {
  const a = await installed(alice, 'alice-bound');
  const b = await installed(bob, 'bob-bound');
  // A file too big to sit whole in the socket's buffers: its download stays under way while it is not read.
  fs.writeFileSync(path.join(t.config.dataDir, 'servers', a, 'big.bin'), '');
  fs.truncateSync(path.join(t.config.dataDir, 'servers', a, 'big.bin'), 64 * MIB);
  const upload = heldUpload(alice, content(a, 'one.bin'), MIB);
  await upload.send(1024);
  const download = await heldDownload(alice, content(a, 'big.bin'));
  expect(download.status).toBe(200);

  const third = await t.http.put(content(a, 'two.bin')).set(auth(alice)).set('Content-Type', 'application/octet-stream').send(Buffer.from('x'));
  expect([third.status, third.body.code, third.headers['retry-after']]).toEqual([429, 'too_many_transfers', '2']);
  expect(third.body.detail).toMatch(/At most 2 /);
  const read = await t.http.get(content(a, 'big.bin')).set(auth(alice));
  expect([read.status, read.body.code]).toEqual([429, 'too_many_transfers']);
  const archive = await t.http.get(`/v1/servers/${a}/files/archive`).set(auth(alice));
  expect([archive.status, archive.body.code]).toEqual([429, 'too_many_transfers']);
  const extract = await t.http.post(`/v1/servers/${a}/files/extract?path=x`).set(auth(alice)).set('Content-Type', 'application/gzip').send(Buffer.from('not read'));
  expect([extract.status, extract.body.code]).toEqual([429, 'too_many_transfers']);
  expect(fs.existsSync(path.join(t.config.dataDir, 'servers', a, 'two.bin'))).toBe(false);
  // Calls that move no file's content still answer.
  expect((await t.http.get(`/v1/servers/${a}/files`).set(auth(alice))).status).toBe(200);

  // Another user's transfers go through meanwhile.
  const theirs = await t.http.put(content(b, 'b.bin')).set(auth(bob)).set('Content-Type', 'application/octet-stream').send(Buffer.from('bob'));
  expect(theirs.status).toBe(201);
  expect((await t.http.get(content(b, 'b.bin')).set(auth(bob))).status).toBe(200);

  // Once one of hers ends, her next transfer goes through.
  upload.end();
  expect((await upload.answer).status).toBe(201);
  expect((await t.http.put(content(a, 'two.bin')).set(auth(alice)).set('Content-Type', 'application/octet-stream').send(Buffer.from('x'))).status).toBe(201);
  download.close();
  await until('the download slot given back', async () => (await t.http.put(content(a, 'three.bin')).set(auth(alice)).set('Content-Type', 'application/octet-stream').send(Buffer.from('x'))).status === 201 || undefined);
  t.expectContract();
});

test("one tenant's big upload in progress never holds up another tenant's calls", async () => {
  const a = await installed(alice, 'alice-big');
  const b = await installed(bob, 'bob-calls');
  expect((await t.http.put(content(b, 'hello.txt')).set(auth(bob)).set('Content-Type', 'application/octet-stream').send(Buffer.from('hi'))).status).toBe(201);
  const size = 256 * MIB;
  const big = heldUpload(alice, content(a, 'world.bin'), size);
  let finished = false;
  void big.answer.then(() => (finished = true));
  // Alice's body flows, a MiB at a time, for as long as Bob's calls take.
  let flowing = true;
  const flow = (async () => {
    while (flowing) await big.send(MIB);
  })();
  const seen: number[] = [];
  for (let i = 0; i < 20; i++) {
    const calls = await Promise.all([
      t.http.get(`/v1/servers/${b}/files`).set(auth(bob)).timeout(5_000),
      t.http.get(content(b, 'hello.txt')).set(auth(bob)).timeout(5_000),
      t.http.get(`/v1/servers/${b}`).set(auth(bob)).timeout(5_000),
    ]);
    seen.push(...calls.map((c) => c.status));
  }
  expect(finished).toBe(false); // every one of Bob's calls was answered while Alice's upload was still coming
  flowing = false;
  await flow;
  expect(seen).toEqual(seen.map(() => 200));
  big.end();
  expect((await big.answer).status).toBe(201);
  expect(fs.statSync(path.join(t.config.dataDir, 'servers', a, 'world.bin')).size).toBe(size);
});

test('uploads side by side past the room: the bytes are held before writing, so at most what fits lands', async () => {
  const owner = t.token('carol-transfers@example.com');
  const id = await installed(owner, 'carol-quota');
  const dir = path.join(t.config.dataDir, 'servers', id);
  fs.writeFileSync(path.join(dir, 'filler.bin'), '');
  fs.truncateSync(path.join(dir, 'filler.bin'), 2040 * MIB);
  await t.runtime.diskWatcher.measureNow();
  const used = (await t.http.get(`/v1/servers/${id}`).set(auth(owner))).body.disk_used_mb as number;
  const left = (2048 - used) * MIB;
  const each = Math.floor(left * 0.6); // one fits, two do not
  // Both under way before either's body ends: without holding, both passed the check and both landed.
  const uploads = [heldUpload(owner, content(id, 'q1.bin'), each), heldUpload(owner, content(id, 'q2.bin'), each)];
  await uploads[0].send(1024);
  await uploads[1].send(1024);
  const refused = await Promise.race(uploads.map((u) => u.answer));
  expect([refused.status, refused.body.code]).toEqual([507, 'insufficient_storage']);
  for (const u of uploads) u.end();
  const statuses = (await Promise.all(uploads.map((u) => u.answer))).map((a) => a.status).sort();
  expect(statuses).toEqual([201, 507]);
  const landed = ['q1.bin', 'q2.bin'].filter((n) => fs.existsSync(path.join(dir, n)));
  expect(landed).toHaveLength(1);
  expect(fs.statSync(path.join(dir, landed[0])).size).toBeLessThanOrEqual(left);
});

test('at boot the service sweeps what uploads, extractions and SFTP writes under way at a kill left behind', async () => {
  const id = await installed(alice, 'alice-sweep');
  const dir = path.join(t.config.dataDir, 'servers', id);
  fs.mkdirSync(path.join(dir, 'world'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'world', 'keep.txt'), 'mine');
  // An upload and an extraction under way: their bodies half sent, so their staging is on disk right now.
  const upload = heldUpload(alice, content(id, 'half.bin'), 8 * MIB);
  await upload.send(2 * MIB);
  const bobs = await installed(bob, 'bob-sweep');
  const extractOwn = heldUpload(bob, `/v1/servers/${bobs}/files/extract?path=world`, 8 * MIB, 'POST');
  await extractOwn.send(2 * MIB);
  await until('the staging on disk', async () =>
    (fs.readdirSync(dir).some((n) => n.startsWith('.gsh-upload-')) && fs.existsSync(path.join(t.config.dataDir, 'tmp')) && fs.readdirSync(path.join(t.config.dataDir, 'tmp')).some((n) => n.startsWith('extract-'))) || undefined);
  // What a kill -9 leaves is the disk as it is now: a copy of DATA_DIR taken mid-transfer is that state.
  const crashed = tempDir('crashed');
  fs.cpSync(t.config.dataDir, crashed, { recursive: true });
  upload.end();
  extractOwn.end();
  await Promise.all([upload.answer, extractOwn.answer]);
  // An extraction killed while unpacking (too brief to catch here): its staging folder deep in the folder it went
  // to, and its note at the top; an SFTP session's staged file.
  const copy = path.join(crashed, 'servers', id);
  fs.mkdirSync(path.join(copy, 'world', '.restore-ext_0123abcd', 'region'), { recursive: true });
  fs.writeFileSync(path.join(copy, 'world', '.restore-ext_0123abcd', 'region', 'r.0.0.mca'), Buffer.alloc(1024));
  fs.writeFileSync(path.join(copy, '.gsh-extract-ext_0123abcd'), 'world');
  fs.mkdirSync(path.join(crashed, 'tmp', 'sftp'), { recursive: true });
  fs.writeFileSync(path.join(crashed, 'tmp', 'sftp', 'sftp-leftover'), Buffer.alloc(1024));
  expect(fs.readdirSync(copy).filter((n) => n.startsWith('.gsh-upload-'))).toHaveLength(1);

  const again = await createTestApp({ boot: true, software: software(), env: { DATA_DIR: crashed, GAME_PORT_RANGE: '28680-28689' } });
  try {
    expect(fs.readdirSync(copy).filter((n) => n.startsWith('.'))).toEqual([]);
    expect(fs.readdirSync(path.join(copy, 'world')).filter((n) => n.startsWith('.'))).toEqual([]);
    expect(fs.readFileSync(path.join(copy, 'world', 'keep.txt'), 'utf8')).toBe('mine');
    expect(fs.existsSync(path.join(crashed, 'tmp'))).toBe(false);
    // The files themselves are as they were, and writes go on.
    const token = again.token('alice-transfers@example.com');
    expect((await again.http.get(content(id, 'world/keep.txt')).set(auth(token))).status).toBe(200);
    expect((await again.http.put(content(id, 'after.txt')).set(auth(token)).set('Content-Type', 'application/octet-stream').send(Buffer.from('ok'))).status).toBe(201);
  } finally {
    await again.runtime.idle();
    await again.close();
    fs.rmSync(crashed, { recursive: true, force: true });
  }
});
