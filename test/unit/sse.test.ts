import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import express, { type Response } from 'express';
import { createStreamRegistry, MAX_QUEUED_BYTES, MAX_TOTAL_QUEUED_BYTES, type StreamRegistry } from '../../src/http/sse';
import type { SseEvent, StreamReply } from '../../src/http/types';

/** A small bound keeps the flood tests short; production uses MAX_QUEUED_BYTES. */
const BOUND = 64 * 1024;
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

test('the default bounds are 1 MiB per stream and 16 MiB for the service', () => {
  expect(MAX_QUEUED_BYTES).toBe(1024 * 1024);
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
    const registry = createStreamRegistry({ maxQueuedBytes: BOUND });
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

  test('is not dropped for receiving many times the bound in total', async () => {
    const total = 16 * BOUND;
    const sub: Subscription = { unsubscribed: 0 };
    const registry = createStreamRegistry({ maxQueuedBytes: BOUND });
    let sentBytes = 0;
    let id = 0;
    const port = await listen(registry, (res) => ({
      status: 200,
      stream: (write) => {
        sub.res = res;
        // Writes a batch only once the previous one has left the process, as a producer well under the bound.
        const tick = () => {
          if (sub.unsubscribed || sentBytes >= total) return;
          if (res.writableLength === 0) {
            for (let i = 0; i < 8; i++) {
              const e = { event: 'line', id: String(++id), data: PAYLOAD };
              write(e);
              sentBytes += Buffer.byteLength(formatted(e));
            }
          }
          setTimeout(tick, 1);
        };
        tick();
        return () => void sub.unsubscribed++;
      },
    }));
    const client = await connect(port);
    await client.until((t) => Buffer.byteLength(t) >= total);
    expect(sub.unsubscribed).toBe(0);
    expect(sub.res?.destroyed).toBe(false);
    const ids = eventBlocks(client.text()).map((b) => Number(parseEvent(b).id));
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => i + 1));
  });
});

describe('one event, many streams', () => {
  test('is serialised once for all of them, and the same data under another id or event is another frame', async () => {
    const registry = createStreamRegistry({ maxQueuedBytes: BOUND });
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

interface Flood {
  res?: Response;
  unsubscribed: number;
  /** The most bytes the server had queued for the client, sampled after every write. */
  maxQueued: number;
  maxEventBytes: number;
  writtenBytes: number;
  done: Promise<void>;
}

/**
 * A producer of ~1 KB events that never looks at backpressure, as the console and metrics feeds do: on a short
 * timer (8 events a turn of the event loop), or synchronously inside `stream` (as a console replay writes).
 * It stops when unsubscribed, when the response is destroyed, or after FLOOD_BYTES.
 */
function floodReply(res: Response, mode: 'timer' | 'sync', flood: Flood, finished: () => void, queued: () => number): StreamReply {
  flood.res = res;
  return {
    status: 200,
    stream: (write) => {
      let id = 0;
      let stopped = false;
      const more = () => !stopped && !res.destroyed && flood.writtenBytes < FLOOD_BYTES;
      const batch = (size: number) => {
        for (let i = 0; i < size && more(); i++) {
          const e = { event: 'line', id: String(++id), data: PAYLOAD };
          write(e);
          const bytes = Buffer.byteLength(formatted(e));
          flood.writtenBytes += bytes;
          flood.maxEventBytes = Math.max(flood.maxEventBytes, bytes);
          flood.maxQueued = Math.max(flood.maxQueued, queued());
        }
      };
      const loop = () => (batch(8), more() ? setImmediate(loop) : finished());
      if (mode === 'sync') {
        while (more()) batch(1024);
        finished();
      } else loop();
      return () => {
        flood.unsubscribed++;
        stopped = true;
      };
    },
  };
}

describe('a client that never reads', () => {
  test.each(['timer', 'sync'] as const)(
    'is dropped once its queue passes the bound (producer: %s)',
    async (mode) => {
      let finished!: () => void;
      const flood: Flood = { unsubscribed: 0, maxQueued: 0, maxEventBytes: 0, writtenBytes: 0, done: Promise.resolve() };
      flood.done = new Promise<void>((resolve) => (finished = resolve));
      const registry = createStreamRegistry({ maxQueuedBytes: BOUND });
      const port = await listen(registry, (res) => floodReply(res, mode, flood, finished, registry.queuedBytes));
      connectNeverReading(port);
      await flood.done;
      const res = flood.res as Response;
      if (!res.closed) await new Promise((resolve) => res.once('close', resolve));

      expect(flood.writtenBytes).toBeLessThan(FLOOD_BYTES); // stopped by the drop, not by running out
      expect(res.destroyed).toBe(true);
      expect(flood.unsubscribed).toBe(1);
      expect(flood.maxQueued).toBeGreaterThan(0);
      expect(flood.maxQueued).toBeLessThanOrEqual(BOUND + flood.maxEventBytes);

      // Dropped means gone from the registry too: shutting down does not touch it, nor unsubscribe again.
      const end = jest.spyOn(res, 'end');
      registry.closeAll();
      expect(end).not.toHaveBeenCalled();
      expect(flood.unsubscribed).toBe(1);
    },
  );
});

describe('the service-wide budget', () => {
  const STALLED = 10;
  const ROUND_BYTES = 8 * 1024;

  /**
   * One reading client and STALLED never-reading ones on one registry; every stream gets the same ~1 KB events,
   * 8 per stream per turn of the event loop, until every stalled stream is gone or 20 MiB went to each.
   */
  async function crowd(maxTotalQueuedBytes: number) {
    const registry = createStreamRegistry({ maxQueuedBytes: BOUND, maxTotalQueuedBytes, perUser: STALLED + 1 });
    const subs: Subscription[] = [];
    const port = await listen(registry, (res) => {
      const sub: Subscription = { unsubscribed: 0 };
      subs.push(sub);
      return recordingReply(res, sub);
    });
    const reader = await connect(port);
    await reader.until((t) => t.includes(': stream open'));
    for (let i = 0; i < STALLED; i++) connectNeverReading(port);
    while (subs.filter((s) => s.write).length < STALLED + 1) await new Promise((r) => setTimeout(r, 5));
    let id = 0;
    let maxQueued = 0;
    for (let sent = 0; sent < FLOOD_BYTES && subs.slice(1).some((s) => !s.res?.destroyed); sent += ROUND_BYTES) {
      for (let i = 0; i < 8; i++) {
        const e = { event: 'line', id: String(++id), data: PAYLOAD };
        for (const sub of subs) sub.write?.(e);
      }
      maxQueued = Math.max(maxQueued, registry.queuedBytes());
      await new Promise((r) => setImmediate(r));
    }
    return { subs, reader, maxQueued, sentEvents: id };
  }

  test('without it, stalled streams together hold several times one bound (what the budget prevents)', async () => {
    const { maxQueued } = await crowd(Number.MAX_SAFE_INTEGER);
    expect(maxQueued).toBeGreaterThan(6 * BOUND);
  });

  test('with it, the stalled streams are dropped while the total stays near the budget, and the reader keeps its stream', async () => {
    const budget = BOUND;
    const { subs, reader, maxQueued, sentEvents } = await crowd(budget);
    expect(subs.slice(1).every((s) => s.res?.destroyed && s.unsubscribed === 1)).toBe(true);
    // Beyond the budget only what each stream had handed to Node before it blocked (one event, a socket's worth).
    expect(maxQueued).toBeLessThanOrEqual(budget + (STALLED + 1) * (16 * 1024 + 1100));
    expect(subs[0].unsubscribed).toBe(0);
    await reader.until((t) => eventBlocks(t).length === sentEvents);
    expect(eventBlocks(reader.text()).map((b) => Number(parseEvent(b).id))).toEqual(
      Array.from({ length: sentEvents }, (_, i) => i + 1),
    );
  });
});

describe('ending streams', () => {
  test('closeAll() ends every open stream and unsubscribes each once', async () => {
    const registry = createStreamRegistry({ maxQueuedBytes: BOUND });
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

  test('a client going away unsubscribes once and leaves the registry', async () => {
    const registry = createStreamRegistry({ maxQueuedBytes: BOUND });
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
