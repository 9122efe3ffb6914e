import type { Request, Response } from 'express';
import { AppError } from '../errors';
import type { StreamReply, SseEvent } from './types';

/** Heartbeat comments keep idle proxies from closing the stream (HTML Living Standard §9.2.7 recommends ~15 s). */
export const HEARTBEAT_MS = 15_000;

/**
 * The most unsent bytes one stream may have queued in this process before its client is dropped.
 *
 * `res.write` never refuses data: when it returns false it still queues the chunk in memory (Node.js stream docs,
 * "Buffering" and writable.write()), so without a bound a client that stops reading grows the service's memory for
 * as long as events keep coming. Dropping such a client loses nothing it cannot fetch again: an EventSource
 * reconnects and sends the id of the last event it received as `Last-Event-ID` (HTML Living Standard §9.2.3,
 * §9.2.4), from which the stream resumes. 1 MiB is far more than a client that is reading ever has queued (a few
 * socket buffers' worth of console lines), and small enough that many stalled clients cost little.
 */
export const MAX_QUEUED_BYTES = 1024 * 1024;

/**
 * The most unsent bytes all streams of this service together may have queued. Without it the bound above grows
 * with the number of streams (60 stalled streams could hold 60 MiB); with it, stalled clients cost at most this
 * much whoever opened them. Past it, the stream with the longest queue is dropped, so a tenant whose clients stop
 * reading loses its own streams first, and a reading client (whose queue stays near empty) keeps its stream.
 */
export const MAX_TOTAL_QUEUED_BYTES = 16 * 1024 * 1024;

/** Whose a stream is and what it shows: it stays open only while the token is valid and the server exists. */
export interface StreamOwner {
  userId: string;
  tokenId: string;
  serverId?: string;
}

/** What the registry asks of the store while streams are open, to end those that lost their authority. */
export interface StreamAuthority {
  /** The ids among `tokenIds` that are neither revoked nor expired. */
  activeTokens(tokenIds: string[]): Set<string>;
  /** The ids among `serverIds` whose server exists and is not being deleted. */
  liveServers(serverIds: string[]): Set<string>;
}

export interface StreamRegistryOptions {
  /** Overrides MAX_QUEUED_BYTES (tests use a small bound); production uses the default. */
  maxQueuedBytes?: number;
  /** Overrides MAX_TOTAL_QUEUED_BYTES (tests use a small budget); production uses the default. */
  maxTotalQueuedBytes?: number;
  /** Open streams per user (STREAMS_PER_USER); past it, 429 too_many_streams. Default 10. */
  perUser?: number;
  /** A stream ends after this long (STREAM_MAX_LIFETIME_S); the client reconnects with Last-Event-ID. */
  maxLifetimeMs?: number;
  /** Checked every sweepMs while a stream is open; without it, streams end only by lifetime or disconnect. */
  authority?: StreamAuthority;
  sweepMs?: number;
}

interface OpenStream {
  owner: StreamOwner;
  /** Ends the stream as a server would: the client sees the end and reconnects. */
  end(): void;
  /** Ends it at once, unsent data discarded (the client resumes with Last-Event-ID). */
  drop(): void;
  /** Bytes written for this client that have not reached the socket. */
  queued(): number;
}

/**
 * The streams one service has open (docs/conventions.md "Real-time"): at most `perUser` per user, each for at most
 * `maxLifetimeMs`, and none past its authority: every `sweepMs` (500 ms, so within a second) one query finds the
 * tokens revoked or expired and the servers deleted since, and their streams end. The sweep also covers
 * revocations made by another process (the CLI) on the same database. Graceful shutdown ends them all.
 */
export function createStreamRegistry(options: StreamRegistryOptions = {}) {
  const maxQueuedBytes = options.maxQueuedBytes ?? MAX_QUEUED_BYTES;
  const perUser = options.perUser ?? 10;
  const maxLifetimeMs = options.maxLifetimeMs ?? 30 * 60_000;
  const maxTotalQueued = options.maxTotalQueuedBytes ?? MAX_TOTAL_QUEUED_BYTES;
  const open = new Set<OpenStream>();
  let sweeper: NodeJS.Timeout | null = null;
  // The sum of every stream's own pending queue (see serveStream), kept as streams queue and flush.
  let totalPending = 0;
  const frame = frameMemo();
  const budget: QueueBudget = {
    add(bytes) {
      totalPending += bytes;
      while (totalPending > maxTotalQueued && open.size > 0) {
        const longest = [...open].reduce((a, b) => (b.queued() > a.queued() ? b : a));
        longest.drop();
      }
    },
    release(bytes) {
      totalPending -= bytes;
    },
  };

  function sweep(): void {
    const authority = options.authority;
    if (!authority) return;
    const streams = [...open];
    const tokens = authority.activeTokens([...new Set(streams.map((s) => s.owner.tokenId))]);
    const serverIds = [...new Set(streams.flatMap((s) => (s.owner.serverId ? [s.owner.serverId] : [])))];
    const servers = serverIds.length > 0 ? authority.liveServers(serverIds) : new Set<string>();
    for (const s of streams) {
      if (!tokens.has(s.owner.tokenId) || (s.owner.serverId && !servers.has(s.owner.serverId))) s.end();
    }
  }

  function track(stream: OpenStream): () => void {
    open.add(stream);
    if (!sweeper && options.authority) sweeper = setInterval(sweep, options.sweepMs ?? 500).unref();
    return () => {
      open.delete(stream);
      if (open.size === 0 && sweeper) {
        clearInterval(sweeper);
        sweeper = null;
      }
    };
  }

  return {
    /**
     * Serves a StreamReply as `text/event-stream` until the client disconnects, its lifetime or authority ends, or
     * closeAll() is called. Throws too_many_streams (before writing anything) when the owner has perUser open.
     */
    serve(req: Request, res: Response, reply: StreamReply, owner: StreamOwner): void {
      const mine = [...open].filter((s) => s.owner.userId === owner.userId).length;
      if (mine >= perUser) {
        throw new AppError('too_many_streams', `At most ${perUser} event streams may be open at once per user; close one first.`, undefined, {
          'Retry-After': '5',
        });
      }
      serveStream({ req, res, reply, frame, maxQueuedBytes, maxLifetimeMs, budget, track: (hooks) => track({ owner, ...hooks }) });
    },
    /** How many streams are open (for tests and the benchmark). */
    size: () => open.size,
    /** Unsent bytes queued across every stream (for tests and the benchmark). */
    queuedBytes: () => [...open].reduce((sum, s) => sum + s.queued(), 0),
    closeAll(): void {
      for (const s of [...open]) s.end();
    },
  };
}

export type StreamRegistry = ReturnType<typeof createStreamRegistry>;

/** The service-wide queue budget: `add` may drop streams (the longest queue first) until the total fits. */
interface QueueBudget {
  add(bytes: number): void;
  release(bytes: number): void;
}

interface StreamSetup {
  req: Request;
  res: Response;
  reply: StreamReply;
  /** The frame of an event, built once for every stream it goes to (frameMemo). */
  frame: (e: SseEvent) => Buffer;
  maxQueuedBytes: number;
  maxLifetimeMs: number;
  budget: QueueBudget;
  /** Registers the stream's hooks; returns the function that unregisters it. */
  track: (hooks: { end: () => void; drop: () => void; queued: () => number }) => () => void;
}

function serveStream({ req, res, reply, frame, maxQueuedBytes, maxLifetimeMs, budget, track }: StreamSetup): void {
  writeHead(res);
  let done = false;
  // True from a write that returned false until 'drain': the socket takes nothing more for now. Events that come
  // meanwhile wait here, joined into one write at 'drain': Node would keep each as its own buffered chunk, with
  // a per-chunk overhead larger than a console line, so the bytes counted would not be the memory used.
  let blocked = false;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  // Bytes counted against the service-wide budget: the pending ones, plus a joined write until it drains.
  let owed = 0;
  let unsubscribe: (() => void) | undefined;

  /** Runs once, however the stream ends (client gone, closeAll, dropped); says whether this call did it. */
  const cleanup = (): boolean => {
    if (done) return false;
    done = true;
    clearInterval(heartbeat);
    clearTimeout(lifetime);
    untrack();
    unsubscribe?.();
    budget.release(owed);
    owed = 0;
    pending = [];
    pendingBytes = 0;
    return true;
  };
  const endGracefully = () => void (cleanup() && res.end());
  // destroy, not end: end() would queue behind the unsent data and wait for the client that is not reading.
  const drop = () => void (cleanup() && res.destroy());
  const queued = () => (done ? 0 : res.writableLength + pendingBytes);

  const send = (chunk: Buffer): void => {
    if (done) return;
    if (!blocked) return void (blocked = !res.write(chunk));
    const bytes = chunk.length;
    if (queued() + bytes > maxQueuedBytes) return drop();
    pending.push(chunk);
    pendingBytes += bytes;
    owed += bytes;
    budget.add(bytes); // may drop this stream, or another with a longer queue
  };
  // 'drain': everything handed to Node has left, so only the pending bytes are still owed; they go out as one write.
  const flush = () => {
    if (done) return;
    const text = Buffer.concat(pending);
    budget.release(owed - pendingBytes);
    owed = pendingBytes;
    pending = [];
    pendingBytes = 0;
    blocked = text.length > 0 && !res.write(text);
    if (!blocked) {
      budget.release(owed);
      owed = 0;
    }
  };

  const heartbeat = setInterval(() => send(KEEP_ALIVE), HEARTBEAT_MS);
  const lifetime = setTimeout(endGracefully, maxLifetimeMs);
  res.on('drain', flush);
  req.on('close', cleanup);
  res.on('close', cleanup);
  const untrack = track({ end: endGracefully, drop, queued });
  send(STREAM_OPEN);

  // The subscription may replay (a console resuming after Last-Event-ID) and so write, and even be dropped,
  // before it returns its unsubscribe function; then that function is called at once.
  const off = reply.stream((e) => send(frame(e)));
  if (done) off();
  else unsubscribe = off;
}

function writeHead(res: Response): void {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('Connection', 'keep-alive');
  res.setHeader('X-Accel-Buffering', 'no'); // nginx: do not buffer the stream
  res.flushHeaders();
}

const STREAM_OPEN = Buffer.from(': stream open\n\n');
const KEEP_ALIVE = Buffer.from(': keep-alive\n\n');

/** One event in the HTML Living Standard §9.2.5 format: `event`, `id` and `data` fields, then a blank line. */
function formatEvent(e: SseEvent): Buffer {
  // `data` is one line of JSON, so no event can be split or injected by a newline in a value.
  return Buffer.from(`event: ${e.event}\nid: ${e.id}\ndata: ${JSON.stringify(e.data)}\n\n`);
}

/**
 * formatEvent, remembering the last frame built. A source hands the same data object to every stream that
 * follows it, one event at a time (a console line to each subscriber in turn, a sample likewise), so the frame
 * is built once per event and the same bytes go to every stream instead of one copy each (a stalled stream's
 * pending chunks are these shared buffers too, so the budgets count more than the memory they take, never less).
 * One entry, not a map of every event: a frame must not live as long as the console line it was built from.
 */
function frameMemo(): (e: SseEvent) => Buffer {
  let last: { data: unknown; event: string; id: string; frame: Buffer } | null = null;
  return (e) => {
    if (last && last.data === e.data && last.event === e.event && last.id === e.id) return last.frame;
    const frame = formatEvent(e);
    last = { data: e.data, event: e.event, id: e.id, frame };
    return frame;
  };
}
