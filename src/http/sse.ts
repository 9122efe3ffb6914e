import type { Request, Response } from 'express';
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

export interface StreamRegistryOptions {
  /** Overrides MAX_QUEUED_BYTES (tests use a small bound); production uses the default. */
  maxQueuedBytes?: number;
}

/**
 * The streams one service has open, so its graceful shutdown can end them (they would otherwise hold the HTTP
 * server open). Created by buildService and passed to createApp.
 */
export function createStreamRegistry(options: StreamRegistryOptions = {}) {
  const maxQueuedBytes = options.maxQueuedBytes ?? MAX_QUEUED_BYTES;
  /** One "end gracefully" function per open stream; each removes itself when its stream closes. */
  const open = new Set<() => void>();
  return {
    /** Serves a StreamReply as `text/event-stream` until the client disconnects or closeAll() is called. */
    serve: (req: Request, res: Response, reply: StreamReply) => serveStream(open, req, res, reply, maxQueuedBytes),
    closeAll(): void {
      for (const end of [...open]) end();
    },
  };
}

export type StreamRegistry = ReturnType<typeof createStreamRegistry>;

function serveStream(
  open: Set<() => void>,
  req: Request,
  res: Response,
  reply: StreamReply,
  maxQueuedBytes: number,
): void {
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
    open.delete(endGracefully);
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
  res.on('drain', () => (blocked = false));
  req.on('close', cleanup);
  res.on('close', cleanup);
  open.add(endGracefully);
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
