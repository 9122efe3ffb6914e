import fs from 'node:fs';
import type { Response } from 'express';
import { AppError } from '../errors';
import type { FileReply } from './types';

/**
 * Streams a file as the answer with its Content-Length, respecting backpressure (stream.pipe), so a large archive
 * never sits in memory. The file is opened before the status is sent: one that vanished in between is a problem
 * document through the error handler, not a truncated 200; a read error after the headers ends the connection.
 *
 * With `ranges`, a request's `Range` is honoured (RFC 9110 §14): one byte range is a 206 with its Content-Range;
 * a range starting past the end is a 416 problem whose Content-Range gives the file's size; several ranges, or a
 * header that is not a byte range, are ignored (a server may, §14.2) and the whole file is sent. Only files that
 * never change once served take ranges (a ready backup's archive), so resumed parts always fit together.
 */
export async function sendFile(res: Response, reply: FileReply): Promise<void> {
  const handle = await fs.promises.open(reply.file, 'r');
  let size: number;
  try {
    ({ size } = await handle.stat());
  } catch (err) {
    await handle.close();
    throw err;
  }
  // Express's req.range (the range-parser package): -1 unsatisfiable, -2 malformed, else the ranges asked for.
  const asked = reply.ranges && res.req.headers.range !== undefined ? res.req.range(size, { combine: true }) : undefined;
  if (asked === -1) {
    await handle.close();
    throw new AppError('range_not_satisfiable', `The archive has ${size} bytes; the range ${String(res.req.headers.range).slice(0, 100)} is not within it.`, undefined, { 'Content-Range': `bytes */${size}` });
  }
  const part = Array.isArray(asked) && asked.length === 1 && asked.type === 'bytes' ? asked[0] : null;
  for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
  if (reply.ranges) res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('Content-Type', reply.contentType);
  if (part) {
    res.setHeader('Content-Range', `bytes ${part.start}-${part.end}/${size}`);
    res.setHeader('Content-Length', String(part.end - part.start + 1));
    res.status(206);
  } else {
    res.setHeader('Content-Length', String(size));
    res.status(reply.status);
  }
  const stream = handle.createReadStream(part ? { start: part.start, end: part.end } : {});
  stream.on('error', () => res.destroy());
  res.on('close', () => stream.destroy());
  stream.pipe(res);
}
