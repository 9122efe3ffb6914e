import type { Response } from 'express';
import type { ContentReply } from './types';

/**
 * Streams a download made while it is sent (src/http/types.ts ContentReply), respecting backpressure: with its
 * length when known (a file; its part for a Range, 206 with Content-Range, RFC 9110 §14.4), chunked otherwise (an
 * archive). A read error after the headers ends the connection, so a client never takes a cut answer as whole.
 */
export function sendContent(res: Response, reply: ContentReply): void {
  for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
  res.setHeader('Content-Type', reply.contentType);
  if (reply.part) {
    res.setHeader('Content-Range', `bytes ${reply.part.start}-${reply.part.end}/${reply.part.size}`);
    res.setHeader('Content-Length', String(reply.part.end - reply.part.start + 1));
    res.status(206);
  } else {
    if (reply.length !== undefined) res.setHeader('Content-Length', String(reply.length));
    res.status(reply.status);
  }
  reply.content.on('error', () => res.destroy());
  res.on('close', () => reply.content.destroy());
  reply.content.pipe(res);
}
