import type fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { utils, type Attributes, type SFTPWrapper } from 'ssh2';
import type { Actor } from '../actors';
import { AppError } from '../errors';
import type { Logger } from '../log';
import type { FileEntry } from '../runtime/host/storage';
import type { Reservation } from '../runtime/services/file-guards';
import type { Files } from '../runtime/services/files';
import type { BatchedWrites } from './write-batches';

/** SFTP's status codes and open flags (draft-ietf-secsh-filexfer-02 §7, §6.3), as ssh2 names them. */
export const { STATUS_CODE: S, OPEN_MODE: M } = utils.sftp;
const S_IFDIR = 0o040000;
export const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;

export interface SessionDeps {
  files: Pick<Files, 'stat' | 'list' | 'read' | 'upload' | 'mkdir' | 'move' | 'remove' | 'reserve'>;
  run: <T>(actor: Actor, fn: () => T) => T;
  log: Logger;
  /** Where a file written over SFTP waits, on this host, until its handle is closed (DATA_DIR/tmp/sftp). */
  stagingDir: string;
  /** The largest file a session writes (the Files API's upload limit). */
  maxBytes: number;
}

/**
 * `room`: the staged bytes held in the server's disk as they come (the plan's disk counts them before the upload);
 * `writes`: the staged file's writes, batched (write-batches.ts).
 */
export type WriteHandle = { kind: 'write'; path: string; staging: string; fd: fs.promises.FileHandle; writes: BatchedWrites; headers: Record<string, string>; dirty: boolean; append: boolean; end: number; room: Reservation };
export type Handle =
  | { kind: 'dir'; path: string; cursor: string | null; done: boolean }
  | { kind: 'read'; path: string; stream: Readable | null; at: number; queue: Promise<unknown> }
  | WriteHandle;

/**
 * What one session's request handlers share (session.ts): its channel, its one server, its open handles, and `as`,
 * which runs a call of the files service as the session's actor.
 */
export interface Session {
  sftp: SFTPWrapper;
  serverId: string;
  deps: SessionDeps;
  handles: Map<string, Handle>;
  /** OPEN and OPENDIR requests under way, each to become a handle (counted against MAX_HANDLES). */
  opening: number;
  next: number;
  as: <T>(fn: () => Promise<T>) => Promise<T>;
}

/** Runs one request's work; a refusal or failure becomes the request's status (statusOf). */
export function answer(s: Session, reqid: number, work: () => Promise<void>): Promise<void> {
  return work().catch((err: unknown) => {
    const [code, message] = statusOf(err);
    if (code === S.FAILURE && !(err instanceof AppError)) s.deps.log.error('an SFTP request failed', { server_id: s.serverId, error: String(err) });
    s.sftp.status(reqid, code, message);
  });
}

export const handleOf = (s: Session, buf: Buffer): Handle | undefined => s.handles.get(buf.toString('hex'));

/**
 * Open handles one session may hold (OpenSSH's sftp-server allows 512; a client keeps a few): each may hold a
 * staging file and a file descriptor on this host. Past it an OPEN or OPENDIR fails with a message.
 */
export const MAX_HANDLES = 64;

/** Runs an OPEN's or OPENDIR's `work` while the session has room for one more handle, else refuses it. */
export async function opening<T>(s: Session, work: () => Promise<T>): Promise<T> {
  if (s.handles.size + s.opening >= MAX_HANDLES) throw new AppError('file_conflict', `At most ${MAX_HANDLES} files and folders may be open at once in one session; close one first.`);
  s.opening++;
  try {
    return await work();
  } finally {
    s.opening--;
  }
}

/** Keeps `h` open under a new handle string (4 bytes; version 3 allows up to 256). */
export function openHandle(s: Session, h: Handle): Buffer {
  const id = Buffer.alloc(4);
  id.writeUInt32BE(s.next++);
  s.handles.set(id.toString('hex'), h);
  return id;
}

/** A client's path as the files service names it: relative to the top, `/`-separated, never above the top. */
export function apiPath(p: string): string {
  return path.posix.normalize(`/${p}`).replace(/^\/+|\/+$/g, '');
}

export function attrsOf(e: FileEntry): Attributes {
  const mode = e.type === 'directory' ? S_IFDIR | 0o755 : e.type === 'symlink' ? S_IFLNK | 0o777 : S_IFREG | 0o644;
  const time = Math.floor(Date.parse(e.modified_at) / 1000) || 0;
  return { mode, uid: 0, gid: 0, size: e.size, atime: time, mtime: time };
}

/** An SFTP status for a refusal of the files service (version 3 has few: the message says the rest). */
function statusOf(err: unknown): [utils.sftp.STATUS_CODE, string] {
  if (!(err instanceof AppError)) return [S.FAILURE, 'The service could not do this.'];
  if (err.code === 'file_not_found') return [S.NO_SUCH_FILE, err.detail];
  if (['file_read_only', 'missing_permission', 'server_not_found'].includes(err.code)) return [S.PERMISSION_DENIED, err.detail];
  return [S.FAILURE, err.detail];
}
