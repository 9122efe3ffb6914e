import http from 'node:http';
import { createTestApp, manualClock, type TestApp, type TestAppOptions } from '../helpers/app';
import { until } from '../helpers/wait';

/**
 * Event streams are bounded and end with their authority (docs/conventions.md "Real-time"): a cap per user, a
 * maximum lifetime, and an end within a second once the token is revoked or expires or the server is deleted.
 * Over real sockets: an event stream never ends by itself, so supertest cannot read one.
 */

interface OpenStream {
  status: number;
  body: string;
  /** Resolves when the service ends the stream (or the socket closes). */
  ended: Promise<void>;
  close(): void;
}

function openStream(base: string, path: string, token: string): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}${path}`, { headers: { Authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      const ended = new Promise<void>((done) => {
        res.on('end', done);
        res.on('close', done);
      });
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      // The first bytes (the opening comment, or a whole problem document) are enough to tell which it is.
      res.once('data', () => resolve({ status: res.statusCode ?? 0, get body() { return body; }, ended, close: () => req.destroy() }));
    });
    req.on('error', reject);
  });
}

let t: TestApp;
let base: string;
let stop: () => Promise<void>;
const streams: OpenStream[] = [];

async function start(options: TestAppOptions = {}) {
  t = await createTestApp(options);
  ({ base, close: stop } = await t.listen());
}

// Each test changes what is open, so each gets its own service (docs/conventions.md "Tests").
afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  await stop?.();
  await t.finish();
});

async function serverOf(token: string): Promise<string> {
  const res = await t.http.post('/v1/servers').set('Authorization', `Bearer ${token}`).send({ name: 'streamed', plan: 'micro', version: 'flying-squid-1.20' });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function follow(path: string, token: string): Promise<OpenStream> {
  const s = await openStream(base, path, token);
  streams.push(s);
  return s;
}

test('a user may have STREAMS_PER_USER streams open; one more is 429 too_many_streams, others are unaffected', async () => {
  await start({ env: { STREAMS_PER_USER: '3' } });
  const alice = t.token('alice@example.com');
  const bob = t.token('bob@example.com');
  const mine = await serverOf(alice);
  const open = [];
  for (const path of ['metrics/stream', 'console/stream', 'metrics/stream']) open.push(await follow(`/v1/servers/${mine}/${path}`, alice));
  expect(open.map((s) => s.status)).toEqual([200, 200, 200]);
  // All of a user's tokens share the cap.
  const fourth = await follow(`/v1/servers/${mine}/console/stream`, t.token('alice@example.com'));
  expect(fourth.status).toBe(429);
  await fourth.ended;
  expect(JSON.parse(fourth.body)).toMatchObject({ status: 429, code: 'too_many_streams' });
  expect((await follow(`/v1/servers/${await serverOf(bob)}/console/stream`, bob)).status).toBe(200);
  // A stream that closes frees its place.
  open[0].close();
  await until('the freed place', async () => (await follow(`/v1/servers/${mine}/metrics/stream`, alice)).status === 200, 10_000);
});

test('a stream ends after STREAM_MAX_LIFETIME_S, and the client can reconnect', async () => {
  await start({ env: { STREAM_MAX_LIFETIME_S: '1' } });
  const alice = t.token('alice@example.com');
  const server = await serverOf(alice);
  const s = await follow(`/v1/servers/${server}/console/stream`, alice);
  expect(s.status).toBe(200);
  await s.ended;
  expect((await follow(`/v1/servers/${server}/console/stream`, alice)).status).toBe(200);
});

// The periodic sweep is put ten minutes away in the two tests below: the answer's own sweep ends the streams
// (StreamRegistry.sweepSoon, after every successful write).
test('revoking the token ends its streams at once; the user\'s other tokens keep theirs', async () => {
  await start({ streamSweepMs: 600_000 });
  const alice = t.token('alice@example.com');
  const other = t.token('alice@example.com');
  const server = await serverOf(alice);
  const doomed = await follow(`/v1/servers/${server}/console/stream`, alice);
  const kept = await follow(`/v1/servers/${server}/console/stream`, other);
  const tokens = await t.http.get('/v1/tokens').set('Authorization', `Bearer ${other}`);
  const id = tokens.body.data.find((x: { prefix: string }) => alice.startsWith(x.prefix) && !other.startsWith(x.prefix)).id;
  expect((await t.http.delete(`/v1/tokens/${id}`).set('Authorization', `Bearer ${other}`)).status).toBe(204);
  await doomed.ended;
  expect(t.streams.size()).toBe(1);
  expect(kept.status).toBe(200);
});

test('a token that expires ends its streams', async () => {
  const clock = manualClock(Date.now());
  await start({ clock });
  const alice = t.token('alice@example.com', undefined, 60);
  const server = await serverOf(alice);
  const s = await follow(`/v1/servers/${server}/metrics/stream`, alice);
  expect(s.status).toBe(200);
  clock.advance(61_000);
  await s.ended;
  expect(t.streams.size()).toBe(0);
});

test('deleting the server ends its streams at once, and only its own', async () => {
  await start({ streamSweepMs: 600_000 });
  const alice = t.token('alice@example.com');
  const [gone, staying] = [await serverOf(alice), await serverOf(alice)];
  const a = await follow(`/v1/servers/${gone}/console/stream`, alice);
  const b = await follow(`/v1/servers/${gone}/metrics/stream`, alice);
  await follow(`/v1/servers/${staying}/console/stream`, alice);
  expect((await t.http.delete(`/v1/servers/${gone}`).set('Authorization', `Bearer ${alice}`)).status).toBe(202);
  await Promise.all([a.ended, b.ended]);
  expect(t.streams.size()).toBe(1);
});
