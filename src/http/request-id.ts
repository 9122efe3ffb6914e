import crypto from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { requestContext } from '../log';

/** What a client may send as its own Request-Id: 1–200 visible ASCII characters (the spec's RequestId). */
const CLIENT_ID = /^[\x21-\x7E]{1,200}$/;

const ID_BYTES = 15;
/** Random bytes for 256 ids at a time: one randomFillSync per 256 requests instead of a randomBytes call each. */
const pool = Buffer.alloc(ID_BYTES * 256);
let offset = pool.length;

/** A fresh id: `req_` and 20 random base64url characters (120 bits from the CSPRNG). */
export function newRequestId(): string {
  if (offset === pool.length) {
    crypto.randomFillSync(pool);
    offset = 0;
  }
  offset += ID_BYTES;
  return `req_${pool.toString('base64url', offset - ID_BYTES, offset)}`;
}

/**
 * Gives every answer a `Request-Id` (docs/conventions.md "Request ids"): the client's own when it sent a valid
 * one, so it can match our logs to its own, else a fresh one. The rest of the request runs inside
 * `requestContext`, so every log line written while answering it carries the id, and the problem document
 * repeats it (`request_id`) for support.
 */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction) {
  const sent = req.headers['request-id'];
  const id = typeof sent === 'string' && CLIENT_ID.test(sent) ? sent : newRequestId();
  res.setHeader('Request-Id', id);
  requestContext.run({ requestId: id }, next);
}
