import crypto from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { requestContext } from '../log';

/** What a client may send as its own Request-Id: 1–200 visible ASCII characters (the spec's RequestId). */
const CLIENT_ID = /^[\x21-\x7E]{1,200}$/;

/** A fresh id: `req_` and 20 random base64url characters. */
export function newRequestId(): string {
  return `req_${crypto.randomBytes(15).toString('base64url')}`;
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
