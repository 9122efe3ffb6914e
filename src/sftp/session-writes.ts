import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../errors';
import { M, S, answer, apiPath, handleOf, openHandle, opening, type Session, type WriteHandle } from './session-state';
import { batchedWrites } from './write-batches';

/**
 * Opening and closing files (OPEN, CLOSE) and writing them (WRITE): a file opened for writing is staged on this host
 * and uploaded whole when its handle closes (docs/architecture.md "SFTP").
 */
export function serveWrites(s: Session): void {
  const { sftp, serverId } = s;
  sftp.on('OPEN', (reqid, p, flags) => void answer(s, reqid, async () => {
    const file = apiPath(p);
    if (!(flags & M.WRITE)) {
      const entry = await opening(s, () => s.as(() => s.deps.files.stat(serverId, file)));
      if (entry.type !== 'file') throw new AppError('file_conflict', `${p} is a ${entry.type}, not a file.`);
      sftp.handle(reqid, openHandle(s, { kind: 'read', path: file, stream: null, at: -1, queue: Promise.resolve() }));
      return;
    }
    sftp.handle(reqid, openHandle(s, await opening(s, () => openForWrite(s, file, flags))));
  }));
  sftp.on('WRITE', (reqid, buf, offset, data) => void answer(s, reqid, async () => {
    const h = handleOf(s, buf);
    if (h?.kind !== 'write') { sftp.status(reqid, S.FAILURE, 'Not a handle open for writing.'); return; }
    // SSH_FXF_APPEND: each write lands at the end, in the order they came (OpenSSH's `reput` opens so), the end
    // counted here as each arrives, since writes run concurrently.
    const at = h.append ? h.end : offset;
    if (at + data.length > s.deps.maxBytes) throw new AppError('payload_too_large', `A file may be at most ${s.deps.maxBytes} bytes.`);
    // The staged bytes count in the plan's disk as they come (507's message: how much room is left).
    h.room.grow(at + data.length);
    h.end = Math.max(h.end, at + data.length);
    await h.writes.write(at, data);
    h.dirty = true;
    sftp.status(reqid, S.OK);
  }));
  sftp.on('CLOSE', (reqid, buf) => void answer(s, reqid, async () => {
    const key = buf.toString('hex');
    const h = s.handles.get(key);
    s.handles.delete(key);
    if (!h) { sftp.status(reqid, S.FAILURE, 'No such handle.'); return; }
    if (h.kind === 'read') h.stream?.destroy();
    if (h.kind === 'write') await finish(s, h);
    sftp.status(reqid, S.OK);
  }));
}

/** A write handle: a staging file, started from the file's content unless truncated or new (SSH_FXF_*). */
async function openForWrite(s: Session, file: string, flags: number): Promise<WriteHandle> {
  const { deps, serverId } = s;
  const entry = await s.as(() => deps.files.stat(serverId, file)).catch((err: unknown) => {
    if (err instanceof AppError && err.code === 'file_not_found') return null;
    throw err;
  });
  if (entry && flags & M.EXCL) throw new AppError('file_conflict', `${file} exists already.`);
  if (!entry && !(flags & M.CREAT)) throw new AppError('file_not_found', `There is no ${file}.`);
  if (entry && entry.type !== 'file') throw new AppError('file_conflict', `${file} is a ${entry.type}, not a file.`);
  await fs.promises.mkdir(deps.stagingDir, { recursive: true, mode: 0o700 });
  const staging = path.join(deps.stagingDir, `sftp-${crypto.randomBytes(9).toString('base64url')}`);
  const keep = entry !== null && !(flags & M.TRUNC);
  const headers: Record<string, string> = entry === null ? { 'if-none-match': '*' } : keep && entry.etag ? { 'if-match': entry.etag } : {};
  // Held 8 MiB ahead where that fits: the plan's disk looked up once per 256 writes of 32 KiB, not each.
  const room = deps.files.reserve(serverId, 8 * 1024 * 1024);
  try {
    if (keep) {
      room.grow(entry.size);
      const { content } = await s.as(() => deps.files.read(serverId, file, () => undefined));
      await pipeline(content, fs.createWriteStream(staging, { flags: 'wx', mode: 0o600 }));
    }
    const fd = await fs.promises.open(staging, keep ? 'r+' : 'wx+', 0o600);
    const end = keep ? (await fd.stat()).size : 0;
    return { kind: 'write', path: file, staging, fd, writes: batchedWrites(fd), headers, dirty: entry === null || !keep, append: (flags & M.APPEND) !== 0, end, room };
  } catch (err) {
    room.release();
    await fs.promises.rm(staging, { force: true });
    throw err;
  }
}

/**
 * Uploads a staged file through the files service (only if it changed), then drops the staging. The staged file is
 * given whole: with RUNTIME=local it is renamed into the server's files rather than copied (storage.ts fileAdopt),
 * still appearing whole at its path at once.
 */
async function finish(s: Session, h: WriteHandle): Promise<void> {
  try {
    await h.writes.idle(); // writes a client sent before its CLOSE without waiting for their answers
    await h.fd.close();
    if (!h.dirty) return;
    const size = (await fs.promises.stat(h.staging)).size;
    await s.as(() => s.deps.files.upload(s.serverId, h.path, { file: h.staging }, { ...h.headers, 'content-length': String(size) }, h.room));
  } finally {
    h.room.release();
    await fs.promises.rm(h.staging, { force: true });
  }
}
