import fs from 'node:fs';
import type { Readable } from 'node:stream';
import type { Attributes } from 'ssh2';
import { S, S_IFREG, answer, apiPath, attrsOf, handleOf, type Handle, type Session } from './session-state';

/** Thrown from the range callback of a read that starts at or past the end; caught again in readAt. */
const EOF = new Error('read past the end');

/** Names and attributes (REALPATH, STAT, LSTAT, FSTAT) and the reads of an open file (READ). */
export function serveReads(s: Session): void {
  const { sftp, serverId } = s;
  const files = s.deps.files;
  sftp.on('REALPATH', (reqid, p) => sftp.name(reqid, [{ filename: `/${apiPath(p)}`, longname: `/${apiPath(p)}`, attrs: {} as Attributes }]));
  sftp.on('STAT', (reqid, p) => void answer(s, reqid, async () => sftp.attrs(reqid, attrsOf(await s.as(() => files.stat(serverId, apiPath(p)))))));
  sftp.on('LSTAT', (reqid, p) => void answer(s, reqid, async () => sftp.attrs(reqid, attrsOf(await s.as(() => files.stat(serverId, apiPath(p)))))));
  sftp.on('FSTAT', (reqid, buf) => void answer(s, reqid, async () => {
    const h = handleOf(s, buf);
    if (!h) { sftp.status(reqid, S.FAILURE, 'No such handle.'); return; }
    if (h.kind === 'write') {
      const st = await fs.promises.stat(h.staging);
      sftp.attrs(reqid, { mode: S_IFREG | 0o644, uid: 0, gid: 0, size: st.size, atime: st.mtimeMs / 1000 | 0, mtime: st.mtimeMs / 1000 | 0 });
      return;
    }
    sftp.attrs(reqid, attrsOf(await s.as(() => files.stat(serverId, h.path))));
  }));
  sftp.on('READ', (reqid, buf, offset, length) => {
    const h = handleOf(s, buf);
    if (h?.kind === 'write') return void answer(s, reqid, async () => {
      const chunk = Buffer.alloc(Math.min(length, 256 * 1024));
      const { bytesRead } = await h.fd.read(chunk, 0, chunk.length, offset).catch(() => ({ bytesRead: 0 }));
      if (bytesRead === 0) sftp.status(reqid, S.EOF);
      else sftp.data(reqid, chunk.subarray(0, bytesRead));
    });
    if (h?.kind !== 'read') { sftp.status(reqid, S.FAILURE, 'Not a file handle.'); return; }
    // Reads of one handle are served in order from one stream while they follow each other (a client reads ahead
    // in many requests); a read elsewhere opens the file again at its offset.
    h.queue = h.queue.then(() => answer(s, reqid, () => readAt(s, h, reqid, offset, length)));
  });
}

/** One READ of a file open for reading: from its stream if it follows the last read, else from a new one. */
async function readAt(s: Session, h: Extract<Handle, { kind: 'read' }>, reqid: number, offset: number, length: number): Promise<void> {
  if (!h.stream || h.at !== offset) {
    h.stream?.destroy();
    h.stream = null;
    const opened = await s.as(() => s.deps.files.read(s.serverId, h.path, (size) => {
      if (offset >= size) throw EOF;
      return { start: offset, end: size - 1 };
    })).catch((err: unknown) => {
      if (err === EOF) return null;
      throw err;
    });
    if (!opened) { s.sftp.status(reqid, S.EOF); return; }
    h.stream = opened.content;
    h.at = offset;
  }
  const chunk = await take(h.stream, Math.min(length, 256 * 1024));
  if (!chunk) { s.sftp.status(reqid, S.EOF); return; }
  h.at += chunk.length;
  s.sftp.data(reqid, chunk);
}

/** Up to `n` bytes of `stream`, fewer at its end, or null once it has ended. */
function take(stream: Readable, n: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const done = (value: Buffer | null, err?: Error) => {
      stream.off('readable', attempt).off('end', ended).off('error', failed);
      if (err) reject(err);
      else resolve(value);
    };
    const attempt = () => {
      const chunk = stream.read(n) as Buffer | null;
      if (chunk) done(chunk);
      else if (stream.readableEnded) done(null);
    };
    const ended = () => done(null);
    const failed = (err: Error) => done(null, err);
    stream.on('readable', attempt).on('end', ended).on('error', failed);
    attempt();
  });
}
