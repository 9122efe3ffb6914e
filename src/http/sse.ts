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
  const open = new Set<OpenStream>();
  let sweeper: NodeJS.Timeout | null = null;

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
      serveStream({ req, res, reply, maxQueuedBytes, maxLifetimeMs, track: (end) => track({ owner, end }) });
    },
    /** How many streams are open (for tests and the benchmark). */
    size: () => open.size,
    closeAll(): void {
      for (const s of [...open]) s.end();
    },
  };
}

export type StreamRegistry = ReturnType<typeof createStreamRegistry>;

interface StreamSetup {
  req: Request;
  res: Response;
  reply: StreamReply;
  maxQueuedBytes: number;
  maxLifetimeMs: number;
  /** Registers the stream's graceful end; returns the function that unregisters it. */
  track: (endGracefully: () => void) => () => void;
}

function serveStream({ req, res, reply, maxQueuedBytes, maxLifetimeMs, track }: StreamSetup): void {
  writeHead(res);
  let done = false;
  // True from a write that returned false until 'drain': Node is buffering what the socket could not take.
  let blocked = false;
  let unsubscribe: (() => void) | undefined;

  /** Runs once, however the stream ends (client gone, closeAll, dropped); says whether this call did it. */
  const cleanup = (): boolean => {
    if (done) return false;
    done = true;
    clearInterval(heartbeat);
    clearTimeout(lifetime);
    untrack();
    unsubscribe?.();
    return true;
  };
  const endGracefully = () => void (cleanup() && res.end());
  // destroy, not end: end() would queue behind the unsent data and wait for the client that is not reading.
  const drop = () => void (cleanup() && res.destroy());

  const send = (chunk: string): void => {
    if (done) return;
    if (blocked && res.writableLength + Buffer.byteLength(chunk) > maxQueuedBytes) return drop();
    blocked = !res.write(chunk);
  };

  const heartbeat = setInterval(() => send(': keep-alive\n\n'), HEARTBEAT_MS);
  const lifetime = setTimeout(endGracefully, maxLifetimeMs);
  res.on('drain', () => (blocked = false));
  req.on('close', cleanup);
  res.on('close', cleanup);
  const untrack = track(endGracefully);
  send(': stream open\n\n');

  // The subscription may replay (a console resuming after Last-Event-ID) and so write, and even be dropped,
  // before it returns its unsubscribe function; then that function is called at once.
  const off = reply.stream((e) => send(formatEvent(e)));
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

/** One event in the HTML Living Standard §9.2.5 format: `event`, `id` and `data` fields, then a blank line. */
function formatEvent(e: SseEvent): string {
  // `data` is one line of JSON, so no event can be split or injected by a newline in a value.
  return `event: ${e.event}\nid: ${e.id}\ndata: ${JSON.stringify(e.data)}\n\n`;
}
