import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import express, { type Response } from 'express';
import { createStreamRegistry, MAX_TOTAL_QUEUED_BYTES, type StreamRegistry } from '../../src/http/sse';
import type { SseEvent, StreamReply } from '../../src/http/types';

/** Past what the kernel buffers for a client that stops reading: a flood that has not blocked a stream by then fails. */
const FLOOD_BYTES = 20 * 1024 * 1024;
const PAYLOAD = 'x'.repeat(1000);

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** A real HTTP server (express, for the real Response) whose one route serves `replyFor(res)` as a stream. */
async function listen(registry: StreamRegistry, replyFor: (res: Response) => StreamReply): Promise<number> {
  const app = express();
  app.get('/events', (req, res) => registry.serve(req, res, replyFor(res), { userId: 'usr_a', tokenId: 'tok_a' }));
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return (server.address() as AddressInfo).port;
}

interface Client {
  response: http.IncomingMessage;
  text: () => string;
  /** Resolves once the body received so far satisfies `pred`. */
  until: (pred: (text: string) => boolean) => Promise<void>;
  ended: Promise<void>;
  close: () => void;
}

/** A client that reads everything it is sent. */
function connect(port: number): Promise<Client> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/events', agent: false }, (response) => {
      let text = '';
      const waiters = new Set<() => void>();
      response.setEncoding('utf8');
      response.on('error', () => {}); // "aborted" when a test closes it early
      response.on('data', (chunk: string) => {
        text += chunk;
        for (const check of [...waiters]) check();
      });
      const ended = new Promise<void>((done) => response.on('end', done));
      const until = (pred: (t: string) => boolean) =>
        new Promise<void>((done) => {
          const check = () => void (pred(text) && waiters.delete(check) && done());
          waiters.add(check);
          check();
        });
      resolve({ response, text: () => text, until, ended, close: () => req.destroy() });
    });
    req.on('error', reject);
    cleanups.push(() => req.destroy());
  });
}

/** A client that sends its request and then never reads a byte of the answer. */
function connectNeverReading(port: number): net.Socket {
  const socket = net.connect(port, '127.0.0.1');
  socket.pause();
  socket.on('error', () => {});
  socket.write('GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n');
  cleanups.push(() => socket.destroy());
  return socket;
}

/** The complete events in a stream body (HTML Living Standard §9.2.5), comments skipped, each as its lines. */
function eventBlocks(text: string): string[][] {
  const blocks = text.split('\n\n').slice(0, -1); // the last piece is unterminated (or empty)
  return blocks.filter((b) => !b.startsWith(':')).map((b) => b.split('\n'));
}

function parseEvent(lines: string[]): SseEvent {
  expect(lines.map((line) => line.slice(0, line.indexOf(': ')))).toEqual(['event', 'id', 'data']);
  const [event, id, data] = lines.map((line) => line.slice(line.indexOf(': ') + 2));
  return { event, id, data: JSON.parse(data) };
}

function formatted(e: SseEvent): string {
  return `event: ${e.event}\nid: ${e.id}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

interface Subscription {
  res?: Response;
  write?: (e: SseEvent) => void;
  unsubscribed: number;
}

/** A reply that only records its writer and how often it was unsubscribed. */
function recordingReply(res: Response, sub: Subscription): StreamReply {
  sub.res = res;
  return {
    status: 200,
    stream: (write) => {
      sub.write = write;
      return () => void sub.unsubscribed++;
    },
  };
}

/** One stream of a Feed: its response, whether it is subscribed now, and how often it subscribed. */
interface Follower {
  res: Response;
  live: boolean;
  follows: number;
  /** `stream` calls answered null: the events after the stream's cursor were gone. */
  refused: number;
}

/**
 * A source shaped like the console (src/runtime/server/console-buffer.ts): events with ids 1, 2, …, the newest
 * `capacity` of them held, fanned out to subscribers; `stream(write, after)` replays the held ones after `after`
 * (all held ones without it), or answers null if some after it are gone.
 */
class Feed {
  readonly events: SseEvent[] = [];
  readonly followers: Follower[] = [];
  /** Set, `stream` throws, as the console does for a server deleted meanwhile. */
  gone = false;
  private readonly listeners = new Set<(e: SseEvent) => void>();

  constructor(private readonly capacity = Infinity) {}

  push(data: unknown = PAYLOAD): void {
    const e = { event: 'line', id: String(this.events.length + 1), data };
    this.events.push(e);
    for (const fn of this.listeners) fn(e);
  }

  reply(res: Response): StreamReply {
    const me: Follower = { res, live: false, follows: 0, refused: 0 };
    this.followers.push(me);
    return {
      status: 200,
      stream: (write, after) => {
        if (this.gone) throw new Error('No server srv_x.');
        const oldest = Math.max(0, this.events.length - this.capacity); // index of the oldest held event
        const from = after === undefined ? oldest : Number(after);
        if (from < oldest) {
          me.refused++;
          return null;
        }
        me.follows++;
        for (const e of this.events.slice(from)) write(e);
        me.live = true;
        this.listeners.add(write);
        return () => {
          me.live = false;
          this.listeners.delete(write);
        };
      },
    };
  }
}

const frameBytes = (e: SseEvent) => Buffer.byteLength(formatted(e));
const ONE_KB_EVENT: SseEvent = { event: 'line', id: '99999', data: PAYLOAD };
const ids = (text: string) => eventBlocks(text).map((b) => Number(parseEvent(b).id));
const oneTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Pushes ~1 KB events, 8 a turn of the event loop, until `stalled()` has held for 50 turns in a row (a stream
 * that blocked may drain again while the kernel still takes data) or FLOOD_BYTES; returns the most bytes the
 * registry held unsent, sampled after every turn.
 */
async function flood(feed: Feed, registry: StreamRegistry, stalled: () => boolean): Promise<number> {
  let maxQueued = 0;
  let inARow = 0;
  for (let sent = 0; sent < FLOOD_BYTES && inARow < 50; sent += 8 * frameBytes(ONE_KB_EVENT)) {
    for (let i = 0; i < 8; i++) feed.push();
    maxQueued = Math.max(maxQueued, registry.queuedBytes());
    await turn();
    inARow = stalled() ? inARow + 1 : 0;
  }
  expect(inARow).toBe(50); // stopped by the streams stalling, not by running out
  return maxQueued;
}

/**
 * Whether a client's body is as long as the opening comment and every event of `feed` (all ASCII): checked on
 * every chunk, so it must not parse or copy the whole body, which runs to megabytes.
 */
const hasAllOf = (feed: Feed) => {
  const total = feed.events.reduce((n, e) => n + frameBytes(e), ': stream open\n\n'.length);
  return (t: string) => t.length >= total;
};

/** What a blocked stream may hold: the socket's high-water mark, the event whose write returned false, framing. */
const blockedBound = (res: Response) => res.writableHighWaterMark + frameBytes(ONE_KB_EVENT) + 64;

test('the service-wide budget is 16 MiB', () => {
  expect(MAX_TOTAL_QUEUED_BYTES).toBe(16 * 1024 * 1024);
});

describe('a client that reads', () => {
  const values: unknown[] = [
    'plain',
    'two\nlines\r\nand a blank one\n\n',
    'data: not a field',
    { nested: { list: [1, 2, 3] }, text: 'é ✓ 🎮' },
    null,
    42,
    [],
  ];

  test('receives every event in order, each with its event, id and data lines', async () => {
    const sent: SseEvent[] = Array.from({ length: 300 }, (_, i) => ({
      event: i % 2 ? 'line' : 'state',
      id: String(i + 1),
      data: values[i % values.length],
    }));
    const registry = createStreamRegistry();
    const port = await listen(registry, () => ({
      status: 200,
      stream: (write) => {
        let next = 0;
        const timer = setInterval(() => {
          for (const stop = next + 10; next < stop && next < sent.length; next++) write(sent[next]);
        }, 1);
        return () => clearInterval(timer);
      },
    }));
    const client = await connect(port);
    expect(client.response.statusCode).toBe(200);
    expect(client.response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(client.response.headers['cache-control']).toBe('no-cache, no-transform');
    await client.until((t) => eventBlocks(t).length >= sent.length);
    expect(client.text().startsWith(': stream open\n\n')).toBe(true);
    expect(eventBlocks(client.text()).map(parseEvent)).toEqual(sent);
  });

  test('that stops reading for a while gets every event once, in order; meanwhile its stream holds one socket buffer and follows nothing', async () => {
    const feed = new Feed();
    const registry = createStreamRegistry();
    const port = await listen(registry, (res) => feed.reply(res));
    const client = await connect(port);
    await client.until((t) => t.includes(': stream open'));
    const [me] = feed.followers;
    client.response.pause();
    const maxQueued = await flood(feed, registry, () => !me.live);
    // Stalled: more events come, and the stream neither takes them nor holds more.
    for (let i = 0; i < 2000; i++) feed.push();
    await turn();
    expect(me.live).toBe(false);
    expect(Math.max(maxQueued, registry.queuedBytes())).toBeLessThanOrEqual(blockedBound(me.res));
    expect(registry.size()).toBe(1);

    client.response.resume();
    await client.until(hasAllOf(feed));
    expect(ids(client.text())).toEqual(oneTo(feed.events.length));
    expect(me.follows).toBeGreaterThan(1);
    expect(me.live).toBe(true);
    expect(me.res.destroyed).toBe(false);
  });

  test.each(['its events left the source', 'its source is gone'] as const)(
    'that falls behind ends once it reads again (%s), having had every event up to then',
    async (cause) => {
      const feed = new Feed(2000);
      const registry = createStreamRegistry();
      const port = await listen(registry, (res) => feed.reply(res));
      const client = await connect(port);
      await client.until((t) => t.includes(': stream open'));
      const [me] = feed.followers;
      client.response.pause();
      await flood(feed, registry, () => !me.live);
      if (cause === 'its source is gone') feed.gone = true;
      else for (let i = 0; i < 2000; i++) feed.push(); // the stream's cursor is no longer held
      await turn();
      expect(registry.size()).toBe(1); // not ended for being behind: only once it reads again

      client.response.resume();
      await client.ended;
      expect(registry.size()).toBe(0);
      expect(me.refused).toBe(cause === 'its events left the source' ? 1 : 0);
      const got = ids(client.text());
      expect(got.length).toBeGreaterThan(0);
      expect(got).toEqual(oneTo(got.length));
    },
  );
});

describe('one event, many streams', () => {
  test('is serialised once for all of them, and the same data under another id or event is another frame', async () => {
    const registry = createStreamRegistry();
    const subs: Subscription[] = [];
    const port = await listen(registry, (res) => {
      const sub: Subscription = { unsubscribed: 0 };
      subs.push(sub);
      return recordingReply(res, sub);
    });
    const clients = await Promise.all([connect(port), connect(port), connect(port)]);
    await Promise.all(clients.map((c) => c.until((t) => t.includes(': stream open\n\n'))));
    // As the console hands one line object to each subscriber in turn.
    const line = { seq: 1, text: 'hello' };
    const stringify = jest.spyOn(JSON, 'stringify');
    for (const sub of subs) sub.write?.({ event: 'line', id: '1', data: line });
    const serialised = stringify.mock.calls.filter(([value]) => value === line).length;
    stringify.mockRestore();
    expect(serialised).toBe(1);

    const others: SseEvent[] = [
      { event: 'line', id: '2', data: line },
      { event: 'state', id: '2', data: line },
      { event: 'line', id: '3', data: 'text' },
      { event: 'line', id: '4', data: 'text' },
      { event: 'line', id: '4', data: 'other text' },
    ];
    for (const e of others) for (const sub of subs) sub.write?.(e);
    const expected = [{ event: 'line', id: '1', data: line }, ...others];
    await Promise.all(clients.map((c) => c.until((t) => eventBlocks(t).length === expected.length)));
    for (const c of clients) expect(eventBlocks(c.text()).map(parseEvent)).toEqual(expected);
  });
});

async function until(pred: () => boolean): Promise<void> {
  while (!pred()) await new Promise((r) => setTimeout(r, 5));
}

describe('a client that never reads', () => {
  test.each(['live events', 'a replay'] as const)(
    'blocks its stream, which then holds one socket buffer and follows nothing, and stays open (%s)',
    async (source) => {
      const feed = new Feed();
      // A replay: more events than the socket takes are already there when the stream opens (a console resuming).
      if (source === 'a replay') for (let i = 0; i < FLOOD_BYTES / 1024; i++) feed.push();
      const registry = createStreamRegistry();
      const port = await listen(registry, (res) => feed.reply(res));
      connectNeverReading(port);
      await until(() => feed.followers.length === 1 && feed.followers[0].follows > 0);
      const [me] = feed.followers;
      const maxQueued = await flood(feed, registry, () => !me.live);
      for (let i = 0; i < 2000; i++) feed.push();
      await new Promise((r) => setTimeout(r, 50));

      expect(me.live).toBe(false);
      expect(Math.max(maxQueued, registry.queuedBytes())).toBeLessThanOrEqual(blockedBound(me.res));
      expect(me.res.destroyed).toBe(false);
      expect(registry.size()).toBe(1);
    },
  );
});

describe('the service-wide budget', () => {
  const STALLED = 10;

  /**
   * One reading client and STALLED never-reading ones on one registry and one feed of ~1 KB events, 8 a turn of
   * the event loop, until every stalled stream is blocked or dropped.
   */
  async function crowd(maxTotalQueuedBytes: number) {
    const feed = new Feed();
    const registry = createStreamRegistry({ maxTotalQueuedBytes, perUser: STALLED + 1 });
    const port = await listen(registry, (res) => feed.reply(res));
    const reader = await connect(port);
    await reader.until((t) => t.includes(': stream open'));
    for (let i = 0; i < STALLED; i++) connectNeverReading(port);
    await until(() => feed.followers.length === STALLED + 1 && feed.followers.every((f) => f.live));
    const stalled = feed.followers.slice(1);
    await flood(feed, registry, () => stalled.every((f) => !f.live || f.res.destroyed));
    return { feed, registry, reader, stalled };
  }

  test('without it, stalled streams stay open, each holding one socket buffer', async () => {
    const { registry, stalled } = await crowd(Number.MAX_SAFE_INTEGER);
    expect(stalled.every((f) => !f.res.destroyed)).toBe(true);
    expect(registry.queuedBytes()).toBeGreaterThanOrEqual(STALLED * stalled[0].res.writableHighWaterMark);
  });

  test('with it, stalled streams are dropped until what they hold fits, and the reader keeps its stream', async () => {
    const budget = 40 * 1024;
    const { feed, registry, reader, stalled } = await crowd(budget);
    const hwm = stalled[0].res.writableHighWaterMark;
    // A blocked stream holds at least the high-water mark, so at most two fit in 40 KiB.
    expect(stalled.filter((f) => !f.res.destroyed).length).toBeLessThanOrEqual(Math.floor(budget / hwm));
    expect(registry.queuedBytes()).toBeLessThanOrEqual(budget + hwm); // the reader holds less than one
    expect(feed.followers[0].res.destroyed).toBe(false);
    await reader.until(hasAllOf(feed));
    expect(ids(reader.text())).toEqual(oneTo(feed.events.length));
  });
});

describe('ending streams', () => {
  test('closeAll() ends every open stream and unsubscribes each once', async () => {
    const registry = createStreamRegistry();
    const subs: Subscription[] = [];
    const port = await listen(registry, (res) => {
      const sub: Subscription = { unsubscribed: 0 };
      subs.push(sub);
      return recordingReply(res, sub);
    });
    const clients = await Promise.all([connect(port), connect(port)]);
    await Promise.all(clients.map((c) => c.until((t) => t.includes(': stream open\n\n'))));
    subs[0].write?.({ event: 'line', id: '1', data: 'before' });
    await clients[0].until((t) => eventBlocks(t).length === 1);

    registry.closeAll();
    await Promise.all(clients.map((c) => c.ended));
    expect(subs.map((s) => s.unsubscribed)).toEqual([1, 1]);
    expect(() => subs[0].write?.({ event: 'line', id: '2', data: 'after' })).not.toThrow();
    registry.closeAll();
    expect(subs.map((s) => s.unsubscribed)).toEqual([1, 1]);
    expect(eventBlocks(clients[0].text()).map(parseEvent)).toEqual([{ event: 'line', id: '1', data: 'before' }]);
  });

  test('sweepSoon() ends, on the next turn, the streams whose token no longer holds, long before the periodic sweep', async () => {
    const active = new Set(['tok_a']);
    const registry = createStreamRegistry({ sweepMs: 600_000, authority: { activeTokens: (ids) => new Set(ids.filter((id) => active.has(id))), holding: () => new Set() } });
    const sub: Subscription = { unsubscribed: 0 };
    const port = await listen(registry, (res) => recordingReply(res, sub));
    const client = await connect(port);
    await client.until((t) => t.includes(': stream open\n\n'));
    registry.sweepSoon(); // the token still holds: nothing ends
    await new Promise((r) => setImmediate(r));
    expect(registry.size()).toBe(1);
    active.delete('tok_a');
    registry.sweepSoon();
    registry.sweepSoon(); // asked twice in one turn, swept once
    await client.ended;
    expect([registry.size(), sub.unsubscribed]).toEqual([0, 1]);
  });

  test('a client going away unsubscribes once and leaves the registry', async () => {
    const registry = createStreamRegistry();
    const sub: Subscription = { unsubscribed: 0 };
    const port = await listen(registry, (res) => recordingReply(res, sub));
    const client = await connect(port);
    await client.until((t) => t.includes(': stream open\n\n'));
    const res = sub.res as Response;
    const closed = new Promise((resolve) => res.once('close', resolve));
    client.close();
    await closed;
    expect(sub.unsubscribed).toBe(1);
    expect(() => sub.write?.({ event: 'line', id: '1', data: 'late' })).not.toThrow();
    const end = jest.spyOn(res, 'end');
    registry.closeAll();
    expect(end).not.toHaveBeenCalled();
    expect(sub.unsubscribed).toBe(1);
  });
});
