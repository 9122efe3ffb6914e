import type { Request, Response } from 'express';
import type { StreamReply, SseEvent } from './types';

/** Heartbeat comments keep idle proxies from closing the stream (HTML Living Standard §9.2.7 recommends ~15 s). */
export const HEARTBEAT_MS = 15_000;

/**
 * The streams one service has open, so its graceful shutdown can end them (they would otherwise hold the HTTP
 * server open). Created by buildService and passed to createApp.
 */
export function createStreamRegistry() {
  const open = new Set<Response>();
  return {
    /** Serves a StreamReply as `text/event-stream` until the client disconnects or closeAll() is called. */
    serve: (req: Request, res: Response, reply: StreamReply) => serveStream(open, req, res, reply),
    closeAll(): void {
      for (const res of open) res.end();
    },
  };
}

export type StreamRegistry = ReturnType<typeof createStreamRegistry>;

function serveStream(open: Set<Response>, req: Request, res: Response, reply: StreamReply): void {
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
