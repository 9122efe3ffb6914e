import type { Request, Response } from 'express';
import type { StreamReply, SseEvent } from './types';

/** Heartbeat comments keep idle proxies from closing the stream (HTML Living Standard §9.2.7 recommends ~15 s). */
export const HEARTBEAT_MS = 15_000;

/** Every stream that is open, so a graceful shutdown can end them (they would otherwise hold the server open). */
const open = new Set<Response>();

export function closeAllStreams(): void {
  for (const res of open) res.end();
}

/**
 * Serves a StreamReply as `text/event-stream`. The subscription ends when the client disconnects or the
 * service shuts down.
 */
export function serveStream(req: Request, res: Response, reply: StreamReply): void {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('Connection', 'keep-alive');
  res.setHeader('X-Accel-Buffering', 'no'); // nginx: do not buffer the stream
  res.flushHeaders();
  res.write(': stream open\n\n');
  open.add(res);

  const write = (e: SseEvent) => {
    // `data` is one line of JSON, so no event can be split or injected by a newline in a value.
    res.write(`event: ${e.event}\nid: ${e.id}\ndata: ${JSON.stringify(e.data)}\n\n`);
  };
  const unsubscribe = reply.stream(write);
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
  const end = () => {
    clearInterval(heartbeat);
    unsubscribe();
    open.delete(res);
  };
  req.on('close', end);
  res.on('close', end);
}
