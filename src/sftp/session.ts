import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { utils, type Attributes, type SFTPWrapper } from 'ssh2';
import type { Actor } from '../actors';
import { AppError } from '../errors';
import type { Logger } from '../log';
import type { FileEntry } from '../runtime/host/storage';
import type { Files } from '../runtime/services/files';

const { STATUS_CODE: S, OPEN_MODE: M } = utils.sftp;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;

export interface SessionDeps {
  files: Pick<Files, 'stat' | 'list' | 'read' | 'upload' | 'mkdir' | 'move' | 'remove'>;
  run: <T>(actor: Actor, fn: () => T) => T;
  log: Logger;
  /** Where a file written over SFTP waits, on this host, until its handle is closed (DATA_DIR/tmp/sftp). */
  stagingDir: string;
  /** The largest file a session writes (the Files API's upload limit). */
  maxBytes: number;
}

type Handle =
  | { kind: 'dir'; path: string; cursor: string | null; done: boolean }
  | { kind: 'read'; path: string; stream: Readable | null; at: number; queue: Promise<unknown> }
  | { kind: 'write'; path: string; staging: string; fd: fs.promises.FileHandle; headers: Record<string, string>; dirty: boolean; append: boolean; end: number };

/**
 * One SFTP session (draft-ietf-secsh-filexfer-02, version 3, as ssh2 parses it): each request is one call of the
 * files service (src/runtime/services/files.ts) on the session's one server, run as the session's actor, so the
 * checks, limits and activity records are the Files API's. `/` is the top of the server's files; `..` never goes
 * above it. A file opened for writing is staged on this host and uploaded whole when its handle closes (the API's
 * one way of writing, which puts a file in place at once, docs/architecture.md "SFTP"); writing at an offset of an
 * existing file (a resumed upload) starts the staging from its content, and the upload then asks for that same
 * content still to be there (If-Match with its etag), so a change made meanwhile is never overwritten.
 */
export function serveSftp(sftp: SFTPWrapper, serverId: string, actor: Actor, deps: SessionDeps): () => Promise<void> {
  const handles = new Map<string, Handle>();
  let next = 0;
  const files = deps.files;
  const as = <T>(fn: () => Promise<T>): Promise<T> => deps.run(actor, fn);

  function answer(reqid: number, work: () => Promise<void>): Promise<void> {
    return work().catch((err: unknown) => {
      const [code, message] = statusOf(err);
      if (code === S.FAILURE && !(err instanceof AppError)) deps.log.error('an SFTP request failed', { server_id: serverId, error: String(err) });
      sftp.status(reqid, code, message);
    });
  }
  const handleOf = (buf: Buffer) => handles.get(buf.toString('hex'));
  function open(h: Handle): Buffer {
    const id = Buffer.alloc(4);
    id.writeUInt32BE(next++);
    handles.set(id.toString('hex'), h);
    return id;
  }

  sftp.on('REALPATH', (reqid, p) => answer(reqid, async () => sftp.name(reqid, [{ filename: `/${apiPath(p)}`, longname: `/${apiPath(p)}`, attrs: {} as Attributes }])));
  sftp.on('STAT', (reqid, p) => answer(reqid, async () => sftp.attrs(reqid, attrsOf(await as(() => files.stat(serverId, apiPath(p)))))));
  sftp.on('LSTAT', (reqid, p) => answer(reqid, async () => sftp.attrs(reqid, attrsOf(await as(() => files.stat(serverId, apiPath(p)))))));
  sftp.on('OPENDIR', (reqid, p) => answer(reqid, async () => {
    const entry = await as(() => files.stat(serverId, apiPath(p)));
    if (entry.type !== 'directory') throw new AppError('file_conflict', `${p} is not a folder.`);
    sftp.handle(reqid, open({ kind: 'dir', path: entry.path, cursor: null, done: false }));
  }));
  sftp.on('READDIR', (reqid, buf) => answer(reqid, async () => {
    const h = handleOf(buf);
    if (h?.kind !== 'dir') return void sftp.status(reqid, S.FAILURE, 'Not a folder handle.');
    if (h.done) return void sftp.status(reqid, S.EOF);
    const page = await as(() => files.list(serverId, h.path, 100, h.cursor ?? undefined));
    h.cursor = page.next_cursor;
    h.done = !page.has_more;
    if (page.data.length === 0) return void sftp.status(reqid, S.EOF);
    sftp.name(reqid, page.data.map((e) => ({ filename: e.name, longname: longname(e), attrs: attrsOf(e) })));
  }));
  sftp.on('OPEN', (reqid, p, flags) => answer(reqid, async () => {
    const file = apiPath(p);
    if (!(flags & M.WRITE)) {
      const entry = await as(() => files.stat(serverId, file));
      if (entry.type !== 'file') throw new AppError('file_conflict', `${p} is a ${entry.type}, not a file.`);
      return void sftp.handle(reqid, open({ kind: 'read', path: file, stream: null, at: -1, queue: Promise.resolve() }));
    }
    sftp.handle(reqid, open(await openForWrite(file, flags)));
  }));
  sftp.on('READ', (reqid, buf, offset, length) => {
    const h = handleOf(buf);
    if (h?.kind === 'write') return answer(reqid, async () => {
      const chunk = Buffer.alloc(Math.min(length, 256 * 1024));
      const { bytesRead } = await h.fd.read(chunk, 0, chunk.length, offset).catch(() => ({ bytesRead: 0 }));
      return bytesRead === 0 ? void sftp.status(reqid, S.EOF) : void sftp.data(reqid, chunk.subarray(0, bytesRead));
    });
    if (h?.kind !== 'read') return void sftp.status(reqid, S.FAILURE, 'Not a file handle.');
    // Reads of one handle are served in order from one stream while they follow each other (a client reads ahead
    // in many requests); a read elsewhere opens the file again at its offset.
    const work = h.queue.then(() => answer(reqid, async () => {
      if (!h.stream || h.at !== offset) {
        h.stream?.destroy();
        h.stream = null;
        const opened = await as(() => files.read(serverId, h.path, (size) => {
          if (offset >= size) throw EOF;
          return { start: offset, end: size - 1 };
        })).catch((err: unknown) => (err === EOF ? null : Promise.reject(err)));
        if (!opened) return void sftp.status(reqid, S.EOF);
        h.stream = opened.content;
        h.at = offset;
      }
      const chunk = await take(h.stream, Math.min(length, 256 * 1024));
      if (!chunk) return void sftp.status(reqid, S.EOF);
      h.at += chunk.length;
      sftp.data(reqid, chunk);
    }));
    h.queue = work;
  });
  sftp.on('WRITE', (reqid, buf, offset, data) => answer(reqid, async () => {
    const h = handleOf(buf);
    if (h?.kind !== 'write') return void sftp.status(reqid, S.FAILURE, 'Not a handle open for writing.');
    // SSH_FXF_APPEND: each write lands at the end, in the order they came (OpenSSH's `reput` opens so), the end
    // counted here as each arrives, since writes run concurrently.
    const at = h.append ? h.end : offset;
    h.end = Math.max(h.end, at + data.length);
    if (at + data.length > deps.maxBytes) throw new AppError('payload_too_large', `A file may be at most ${deps.maxBytes} bytes.`);
    await h.fd.write(data, 0, data.length, at);
    h.dirty = true;
    sftp.status(reqid, S.OK);
  }));
  sftp.on('FSTAT', (reqid, buf) => answer(reqid, async () => {
    const h = handleOf(buf);
    if (!h) return void sftp.status(reqid, S.FAILURE, 'No such handle.');
    if (h.kind === 'write') {
      const st = await fs.promises.stat(h.staging);
      return void sftp.attrs(reqid, { mode: S_IFREG | 0o644, uid: 0, gid: 0, size: st.size, atime: st.mtimeMs / 1000 | 0, mtime: st.mtimeMs / 1000 | 0 });
    }
    sftp.attrs(reqid, attrsOf(await as(() => files.stat(serverId, h.path))));
  }));
  sftp.on('CLOSE', (reqid, buf) => answer(reqid, async () => {
    const key = buf.toString('hex');
    const h = handles.get(key);
    handles.delete(key);
    if (!h) return void sftp.status(reqid, S.FAILURE, 'No such handle.');
    if (h.kind === 'read') h.stream?.destroy();
    if (h.kind === 'write') await finish(h);
    sftp.status(reqid, S.OK);
  }));
  sftp.on('MKDIR', (reqid, p) => answer(reqid, async () => {
    await as(() => files.mkdir(serverId, apiPath(p)));
    sftp.status(reqid, S.OK);
  }));
  sftp.on('RMDIR', (reqid, p) => answer(reqid, async () => {
    const entry = await as(() => files.stat(serverId, apiPath(p)));
    if (entry.type !== 'directory') throw new AppError('file_conflict', `${p} is not a folder.`);
    await as(() => files.remove(serverId, entry.path, false));
    sftp.status(reqid, S.OK);
  }));
  sftp.on('REMOVE', (reqid, p) => answer(reqid, async () => {
    const entry = await as(() => files.stat(serverId, apiPath(p)));
    if (entry.type === 'directory') throw new AppError('file_conflict', `${p} is a folder; remove it with rmdir.`);
    await as(() => files.remove(serverId, entry.path, false));
    sftp.status(reqid, S.OK);
  }));
  sftp.on('RENAME', (reqid, from, to) => answer(reqid, async () => {
    await as(() => files.move(serverId, apiPath(from), apiPath(to)));
    sftp.status(reqid, S.OK);
  }));
  // Refused cleanly (openapi/v1.yaml tag "SSH keys"): the service keeps the files' modes, owners and times itself,
  // and no link is ever made through it (docs/architecture.md "Server files").
  sftp.on('SETSTAT', (reqid) => sftp.status(reqid, S.PERMISSION_DENIED, 'Changing attributes (mode, owner, times) is not supported.'));
  sftp.on('FSETSTAT', (reqid) => sftp.status(reqid, S.PERMISSION_DENIED, 'Changing attributes (mode, owner, times) is not supported.'));
  sftp.on('SYMLINK', (reqid) => sftp.status(reqid, S.PERMISSION_DENIED, 'Symbolic links cannot be made.'));
  sftp.on('READLINK', (reqid) => sftp.status(reqid, S.OP_UNSUPPORTED, 'Links are shown, never followed.'));
  sftp.on('EXTENDED', (reqid) => sftp.status(reqid, S.OP_UNSUPPORTED, 'Not supported.'));

  /** A write handle: a staging file, started from the file's content unless truncated or new (SSH_FXF_*). */
  async function openForWrite(file: string, flags: number): Promise<Handle> {
    const entry = await as(() => files.stat(serverId, file)).catch((err: unknown) => (err instanceof AppError && err.code === 'file_not_found' ? null : Promise.reject(err)));
    if (entry && flags & M.EXCL) throw new AppError('file_conflict', `${file} exists already.`);
    if (!entry && !(flags & M.CREAT)) throw new AppError('file_not_found', `There is no ${file}.`);
    if (entry && entry.type !== 'file') throw new AppError('file_conflict', `${file} is a ${entry.type}, not a file.`);
    await fs.promises.mkdir(deps.stagingDir, { recursive: true, mode: 0o700 });
    const staging = path.join(deps.stagingDir, `sftp-${crypto.randomBytes(9).toString('base64url')}`);
    const keep = entry !== null && !(flags & M.TRUNC);
    const headers: Record<string, string> = entry === null ? { 'if-none-match': '*' } : keep && entry.etag ? { 'if-match': entry.etag } : {};
    try {
      if (keep) {
        const { content } = await as(() => files.read(serverId, file, () => undefined));
        await pipeline(content, fs.createWriteStream(staging, { flags: 'wx', mode: 0o600 }));
      }
      const fd = await fs.promises.open(staging, keep ? 'r+' : 'wx+', 0o600);
      const end = keep ? (await fd.stat()).size : 0;
      return { kind: 'write', path: file, staging, fd, headers, dirty: entry === null || !keep, append: (flags & M.APPEND) !== 0, end };
    } catch (err) {
      await fs.promises.rm(staging, { force: true });
      throw err;
    }
  }

  /** Uploads a staged file through the files service (only if it changed), then drops the staging. */
  async function finish(h: Extract<Handle, { kind: 'write' }>): Promise<void> {
    try {
      await h.fd.close();
      if (!h.dirty) return;
      const size = (await fs.promises.stat(h.staging)).size;
      await as(() => files.upload(serverId, h.path, fs.createReadStream(h.staging), { ...h.headers, 'content-length': String(size) }));
    } finally {
      await fs.promises.rm(h.staging, { force: true });
    }
  }

  /** The session's end: streams closed, staged writes that were never closed dropped (nothing half written lands). */
  return async () => {
    for (const h of handles.values()) {
      if (h.kind === 'read') h.stream?.destroy();
      if (h.kind === 'write') {
        await h.fd.close().catch(() => undefined);
        await fs.promises.rm(h.staging, { force: true });
      }
    }
    handles.clear();
  };
}

const EOF = Symbol('eof');

/** A client's path as the files service names it: relative to the top, `/`-separated, never above the top. */
export function apiPath(p: string): string {
  return path.posix.normalize(`/${p}`).replace(/^\/+|\/+$/g, '');
}

/** Up to `n` bytes of `stream`, fewer at its end, or null once it has ended. */
function take(stream: Readable, n: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const done = (value: Buffer | null, err?: unknown) => {
      stream.off('readable', attempt).off('end', ended).off('error', failed);
      return err ? reject(err) : resolve(value);
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

function attrsOf(e: FileEntry): Attributes {
  const mode = e.type === 'directory' ? S_IFDIR | 0o755 : e.type === 'symlink' ? S_IFLNK | 0o777 : S_IFREG | 0o644;
  const time = Math.floor(Date.parse(e.modified_at) / 1000) || 0;
  return { mode, uid: 0, gid: 0, size: e.size, atime: time, mtime: time };
}

/** `ls -l`'s line, which OpenSSH's `ls -l` prints as it is (draft-ietf-secsh-filexfer-02 §7). */
function longname(e: FileEntry): string {
  const kind = e.type === 'directory' ? 'drwxr-xr-x' : e.type === 'symlink' ? 'lrwxrwxrwx' : '-rw-r--r--';
  const d = new Date(e.modified_at);
  const when = `${d.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' })} ${String(d.getUTCDate()).padStart(2)} ${d.getUTCFullYear()}`;
  return `${kind}    1 game     game     ${String(e.size).padStart(8)} ${when} ${e.name}`;
}

/** An SFTP status for a refusal of the files service (version 3 has few: the message says the rest). */
function statusOf(err: unknown): [number, string] {
  if (!(err instanceof AppError)) return [S.FAILURE, 'The service could not do this.'];
  if (err.code === 'file_not_found') return [S.NO_SUCH_FILE, err.detail];
  if (['file_read_only', 'missing_permission', 'server_not_found'].includes(err.code)) return [S.PERMISSION_DENIED, err.detail];
  return [S.FAILURE, err.detail];
}
