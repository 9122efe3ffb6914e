import type { Request, Response } from 'express';
import { AppError } from '../errors';
import type { StreamReply, SseEvent } from './types';

/** Heartbeat comments keep idle proxies from closing the stream (HTML Living Standard §9.2.7 recommends ~15 s). */
export const HEARTBEAT_MS = 15_000;

/**
 * The most unsent bytes the blocked streams of this service together may hold. A stream writes only while its
 * socket takes data (serveStream), so a stalled one holds little: what Node had accepted when its write returned
 * false (the socket's high-water mark, 16 KiB, plus at most one event), and nothing more however long it stalls.
 * That still adds up with the number of stalled streams; with this budget they cost at most this much whoever
 * opened them (about a thousand of them fit). Past it, the stream holding the most is dropped, so a tenant whose
 * clients stop reading loses its own streams first. A stream that is not blocked holds less than the
 * high-water mark and is not counted: a reading client keeps its stream.
 */
export const MAX_TOTAL_QUEUED_BYTES = 16 * 1024 * 1024;

/**
 * Whose a stream is and what it shows: it stays open only while the token is valid and, for a server's stream, the
 * caller still holds `need` on that server (its owner, or a member with that permission; `member`: any member).
 */
export interface StreamOwner {
  userId: string;
  tokenId: string;
  serverId?: string;
  need?: string;
}

/** What the registry asks of the store while streams are open, to end those that lost their authority. */
export interface StreamAuthority {
  /** The ids among `tokenIds` that are neither revoked nor expired. */
  activeTokens(tokenIds: string[]): Set<string>;
  /**
   * Which of these [user id, server id, need] still hold, as JSON keys (`JSON.stringify` of each): the server
   * exists, is not being deleted, and is the user's, or shared with them with that permission.
   */
  holding(pairs: Array<[string, string, string]>): Set<string>;
}

export interface StreamRegistryOptions {
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
 * tokens revoked or expired and another the servers deleted or no longer shared with the stream's user (a member
 * removed, or a permission taken away) since, and their streams end. A write this service answers with success
 * sweeps at once too (sweepSoon), so authority taken away through the API ends its streams without waiting; the
 * periodic sweep covers revocations made by another process (the CLI) on the same database. Graceful shutdown
 * ends them all.
 */
export function createStreamRegistry(options: StreamRegistryOptions = {}) {
  const perUser = options.perUser ?? 10;
  const maxLifetimeMs = options.maxLifetimeMs ?? 30 * 60_000;
  const maxTotalQueued = options.maxTotalQueuedBytes ?? MAX_TOTAL_QUEUED_BYTES;
  const open = new Set<OpenStream>();
  let sweeper: NodeJS.Timeout | null = null;
  let sweepQueued = false;
  // What the blocked streams held when they blocked (see serveStream), kept as streams block and drain.
  let totalHeld = 0;
  const frame = frameMemo();
  const budget: QueueBudget = {
    add(bytes) {
      totalHeld += bytes;
      while (totalHeld > maxTotalQueued && open.size > 0) {
        const longest = [...open].reduce((a, b) => (b.queued() > a.queued() ? b : a));
        longest.drop();
      }
    },
    release(bytes) {
      totalHeld -= bytes;
    },
  };

  const sweep = () => options.authority && sweepStreams([...open], options.authority);

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
      serveStream({ req, res, reply, frame, maxLifetimeMs, budget, track: (hooks) => track({ owner, ...hooks }) });
    },
    /** How many streams are open (for tests and the benchmark). */
    size: () => open.size,
    /** Unsent bytes queued across every stream (for tests and the benchmark). */
    queuedBytes: () => [...open].reduce((sum, s) => sum + s.queued(), 0),
    /**
     * Sweeps on the next turn of the event loop, once however often it is asked within a turn: after a write this
     * service answered, which may have taken authority away (a token revoked, a member removed, a server deleted),
     * so its streams end at once rather than at the next periodic sweep. Nothing to do while no stream is open.
     */
    sweepSoon(): void {
      if (open.size === 0 || sweepQueued) return;
      sweepQueued = true;
      setImmediate(() => {
        sweepQueued = false;
        sweep();
      });
    },
    closeAll(): void {
      for (const s of [...open]) s.end();
    },
  };
}

export type StreamRegistry = ReturnType<typeof createStreamRegistry>;

/** Ends the streams whose token no longer works or whose user no longer holds what the stream needs. */
function sweepStreams(streams: OpenStream[], authority: NonNullable<StreamRegistryOptions['authority']>): void {
  const tokens = authority.activeTokens([...new Set(streams.map((s) => s.owner.tokenId))]);
  const key = (o: StreamOwner) => JSON.stringify([o.userId, o.serverId, o.need ?? 'member']);
  const pairs = [...new Set(streams.flatMap((s) => (s.owner.serverId ? [key(s.owner)] : [])))];
  const holding = pairs.length > 0 ? authority.holding(pairs.map((p) => JSON.parse(p) as [string, string, string])) : new Set<string>();
  for (const s of streams) {
    if (!tokens.has(s.owner.tokenId) || (s.owner.serverId && !holding.has(key(s.owner)))) s.end();
  }
}

/** The service-wide budget: `add` may drop streams (the one holding most first) until the total fits. */
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
  maxLifetimeMs: number;
  budget: QueueBudget;
  /** Registers the stream's hooks; returns the function that unregisters it. */
  track: (hooks: { end: () => void; drop: () => void; queued: () => number }) => () => void;
}

/**
 * One stream, pulled by its client (docs/conventions.md "Real-time"). It follows its source only while the socket
 * takes data: when a write returns false it unsubscribes and keeps just its cursor, the id of the last event it
 * wrote; at 'drain' it subscribes again after that cursor, and the source replays what came meanwhile. So nothing
 * is formatted or held for a client that is not reading: the events wait in the source (the console's ring
 * buffer, the metrics store), which holds them anyway. If they are no longer all there when the client reads
 * again, the stream ends and the client reconnects with `Last-Event-ID` (HTML Living Standard §9.2.4).
 */
function serveStream({ req, res, reply, frame, maxLifetimeMs, budget, track }: StreamSetup): void {
  writeHead(res);
  let done = false;
  let cursor: string | undefined;
  // From a write that returned false until 'drain'; meanwhile the stream is unsubscribed and writes nothing.
  let blocked = false;
  let unsubscribe: (() => void) | null = null;
  // What Node held unsent when the stream blocked, counted against the service-wide budget until 'drain'.
  let held = 0;

  /** Runs once, however the stream ends (client gone, closeAll, dropped); says whether this call did it. */
  const cleanup = (): boolean => {
    if (done) return false;
    done = true;
    clearInterval(heartbeat);
    clearTimeout(lifetime);
    untrack();
    unsubscribe?.();
    unsubscribe = null;
    budget.release(held);
    held = 0;
    return true;
  };
  const endGracefully = () => {
    if (cleanup()) res.end();
  };
  // destroy, not end: end() would queue behind the unsent data and wait for the client that is not reading.
  const drop = () => {
    if (cleanup()) res.destroy();
  };
  const queued = () => (done ? 0 : res.writableLength);

  const write = (chunk: Buffer): void => {
    if (done || blocked || res.write(chunk)) return;
    blocked = true;
    unsubscribe?.();
    unsubscribe = null;
    held = res.writableLength;
    budget.add(held); // may drop this stream, or another holding more
  };
  // A replay goes on calling this after a block: those events are read again from the source at 'drain'.
  const onEvent = (e: SseEvent): void => {
    if (done || blocked) return;
    cursor = e.id;
    write(frame(e));
  };
  /**
   * Subscribes after the cursor (the first time, where the client asked); may replay, block, or be dropped before
   * it returns. When the events after the cursor are gone, or the source is (its server deleted, which the sweep
   * would soon notice), the stream ends: the client has every event written so far, reconnects with the last one
   * as `Last-Event-ID`, and gets what is still held (or its 404).
   */
  const follow = (): void => {
    let off: (() => void) | null = null;
    try {
      off = reply.stream(onEvent, cursor);
    } catch {
      // ended below
    }
    if (off === null) { endGracefully(); return; }
    if (done || blocked) off();
    else unsubscribe = off;
  };
  res.on('drain', () => {
    if (done || !blocked) return;
    blocked = false;
    budget.release(held);
    held = 0;
    follow();
  });

  const heartbeat = setInterval(() => write(KEEP_ALIVE), HEARTBEAT_MS);
  const lifetime = setTimeout(endGracefully, maxLifetimeMs);
  req.on('close', cleanup);
  res.on('close', cleanup);
  const untrack = track({ end: endGracefully, drop, queued });
  write(STREAM_OPEN);
  follow();
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
 * is built once per event and the same bytes go to every stream instead of one copy each (a write the socket
 * does not take at once keeps a reference to them, not a copy). One entry, not a map of every event: a frame
 * must not live as long as the console line it was built from.
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
