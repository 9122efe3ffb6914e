import fs from 'node:fs';
import type { Response } from 'express';
import type { FileReply } from './types';

/**
 * Streams a file as the answer with its Content-Length, respecting backpressure (stream.pipe), so a large archive
 * never sits in memory. The file is opened before the status is sent: one that vanished in between is a problem
 * document through the error handler, not a truncated 200; a read error after the headers ends the connection.
 */
export async function sendFile(res: Response, reply: FileReply): Promise<void> {
  const handle = await fs.promises.open(reply.file, 'r');
  const { size } = await handle.stat();
  for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
  res.setHeader('Content-Type', reply.contentType);
  res.setHeader('Content-Length', String(size));
  res.status(reply.status);
  const stream = handle.createReadStream();
  stream.on('error', () => res.destroy());
  res.on('close', () => stream.destroy());
  stream.pipe(res);
}
