// A server's own files through the API (openapi/v1.yaml tag Files; docs/architecture.md "Server files"): the checks
// every operation passes (paths, the files the service writes, the server's state, the plan's disk: file-guards.ts),
// then one call of its storage (host/storage.ts), then the change recorded with its actor (file-changes-repo.ts).
// Reads and writes are here, the world import in file-extract.ts. The SFTP server and the dashboard build on these
// same methods.
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import type { Plan } from '../../catalog/plans';
import { AppError } from '../../errors';
import type { Actor } from '../../actors';
import type { FileChangesRepo } from '../../store/file-changes-repo';
import type { ServersRepo } from '../../store/servers-repo';
import type { Expect, FileEntry, ServerStorage } from '../host/storage';
import type { Doors } from '../server/doors';
import type { SoftwareCatalog } from '../software/software-catalog';
import { folderArchive } from './file-archives';
import { createExtract } from './file-extract';
import { bodySize, call, createWriteGate, expectOf, isReadOnly, readOnly, readOnlyRule, type Reservation, type WriteGate } from './file-guards';
import type { Transfers } from './file-transfers';
import { checkedPath } from './file-paths';

export interface FilesDeps {
  storage: ServerStorage;
  servers: Pick<ServersRepo, 'find' | 'filesChanged'>;
  plans: readonly Plan[];
  doors: Pick<Doors, 'of'>;
  catalog: SoftwareCatalog;
  changes: FileChangesRepo;
  current: () => Actor;
  /** FILES_MAX_UPLOAD_MB in bytes: an upload or an archive at most this. */
  maxUploadBytes: number;
  /** Where an uploaded archive waits on this host while it is checked (DATA_DIR/tmp). */
  tmpDir: string;
  /** Top-level names the storage keeps for the service (the console log's `logs` with RUNTIME=local). */
  hidden: readonly string[];
  /** The transfers each user has under way (FILES_TRANSFERS_PER_USER, file-transfers.ts). */
  transfers: Transfers;
}

/** A server's files: reads, writes and the world import, each checked then one call of the storage. */
export function createFiles(deps: FilesDeps) {
  const gate = createWriteGate(deps);
  return {
    ...fileReads(deps),
    ...fileWrites(deps, gate),
    extract: createExtract(deps, gate),
    /**
     * Room in the plan's disk held for bytes not written yet (an SFTP session's staged file), grown as they come,
     * `step` bytes ahead when that fits (file-guards.ts).
     */
    reserve: (serverId: string, step?: number): Reservation => gate.reserve(serverId, step),
    activity: (serverId: string, viewer: string, limit: number, after: string | null) => deps.changes.list(serverId, viewer, limit, after),
    /**
     * At boot, before any transfer (SFTP listens after it): removes what transfers under way at a `kill -9` left in
     * DATA_DIR/tmp, the files service's own (archives being extracted, SFTP sessions' staged files).
     */
    sweep: () => fs.promises.rm(deps.tmpDir, { recursive: true, force: true }),
  };
}

const opts = (deps: FilesDeps, top: boolean) => ({ top, hidden: deps.hidden });

/** An entry as the API shows it (openapi/v1.yaml FileEntry): `read_only` by the rule the writes enforce (isReadOnly). */
export type ShownEntry = FileEntry & { read_only: boolean };
const shown = (deps: FilesDeps, serverId: string, e: FileEntry): ShownEntry => ({ ...e, read_only: isReadOnly(deps, serverId, e.path) });

/** Listing, metadata, a file's content and a folder's archive: no write, no lock. */
function fileReads(deps: FilesDeps) {
  const { storage } = deps;
  return {
    async list(serverId: string, p: string | undefined, limit: number, cursor: string | undefined) {
      const dir = checkedPath(p, '/query/path', opts(deps, true));
      let after: [number, string] | null = null;
      if (cursor) {
        try {
          after = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [number, string];
        } catch {
          throw new AppError('validation_failed', 'The cursor is not one this API gave.', [{ pointer: '/query/starting_after', detail: 'Not a cursor of this list.' }]);
        }
      }
      const page = await call(storage.fileList(serverId, dir, after, limit, [...deps.hidden]));
      const last = page.entries.at(-1);
      const next = page.more && last ? Buffer.from(JSON.stringify([last.type === 'directory' ? 0 : 1, last.name])).toString('base64url') : null;
      const ro = readOnlyRule(deps, serverId);
      return { path: dir, data: page.entries.map((e) => ({ ...e, read_only: ro(e.path) })), has_more: page.more, next_cursor: next };
    },
    stat: async (serverId: string, p: string | undefined) => shown(deps, serverId, await call(storage.fileStat(serverId, checkedPath(p, '/query/path', opts(deps, true))))),
    /**
     * The file's content from `range` when the caller asks for part of it (by its size and etag): the entry the read
     * opened answers both, no stat before it (on a Docker node that is a helper container more, storage.ts fileRead).
     */
    async read(serverId: string, p: string | undefined, range: (size: number, etag: string | null) => { start: number; end: number } | undefined) {
      const file = checkedPath(p, '/query/path', opts(deps, false));
      let part: { start: number; end: number } | undefined;
      const opened = await deps.transfers.reading(deps.current(), () => call(storage.fileRead(serverId, file, (entry) => {
        if (entry.type !== 'file') throw new AppError('file_conflict', `${file} is a ${entry.type}, not a file.`);
        return (part = range(entry.size, entry.etag));
      })));
      return { ...opened, part };
    },
    async archive(serverId: string, p: string | undefined, format: 'zip' | 'tar.gz'): Promise<Readable> {
      const dir = checkedPath(p, '/query/path', opts(deps, true));
      const { content } = await deps.transfers.reading(deps.current(), async () => {
        const tar = await call(storage.fileExportFolder(serverId, dir));
        return { content: folderArchive(tar, format, (name) => dir === '' && deps.hidden.includes(name.split('/')[0])) };
      });
      return content;
    },
  };
}

/** Upload, new folder, move, delete: checked, then one at a time per server through the gate, recorded. */
function fileWrites(deps: FilesDeps, gate: WriteGate) {
  const { storage } = deps;
  return {
    /**
     * The body's bytes are held in the plan's disk before the first one is written (`held`: a reservation the
     * caller made already, an SFTP session's), so uploads side by side never together pass it. The body is a
     * stream, or a whole file of this host that is the caller's to give away (an SFTP session's staged file: put in
     * place by a rename where the storage can, storage.ts fileAdopt, else streamed).
     */
    async upload(serverId: string, p: string | undefined, body: Readable | { file: string }, headers: Record<string, string | string[] | undefined>, held?: Reservation): Promise<{ entry: ShownEntry; created: boolean }> {
      const file = checkedPath(p, '/query/path', opts(deps, false));
      readOnly(deps, serverId, file);
      const bytes = bodySize(deps, headers);
      const expect = expectOf(headers);
      return deps.transfers.during(deps.current(), async () => {
        const room = held ?? gate.reserve(serverId);
        try {
          room.grow(bytes);
          return await gate.write(serverId, () => ({ operation: 'upload', path: file, to: null, bytes }), async () => {
            const result = 'file' in body ? await landFile(storage, serverId, file, body.file, bytes, expect) : await storage.fileWrite(serverId, file, body, bytes, expect);
            gate.wrote(serverId, bytes);
            return { ...result, entry: shown(deps, serverId, result.entry) };
          });
        } finally {
          if (!held) room.release();
        }
      });
    },
    async mkdir(serverId: string, p: string) {
      const dir = checkedPath(p, '/body/path', opts(deps, false));
      return shown(deps, serverId, await gate.write(serverId, () => ({ operation: 'create_folder', path: dir, to: null, bytes: 0 }), () => storage.fileMkdir(serverId, dir)));
    },
    async move(serverId: string, from: string, to: string) {
      const a = checkedPath(from, '/body/from', opts(deps, false));
      const b = checkedPath(to, '/body/to', opts(deps, false));
      readOnly(deps, serverId, a);
      readOnly(deps, serverId, b);
      return shown(deps, serverId, await gate.write(serverId, () => ({ operation: 'move', path: a, to: b, bytes: 0 }), () => storage.fileMove(serverId, a, b)));
    },
    remove(serverId: string, p: string | undefined, recursive: boolean) {
      const target = checkedPath(p, '/query/path', opts(deps, false));
      readOnly(deps, serverId, target);
      return gate.write(serverId, () => ({ operation: 'delete', path: target, to: null, bytes: 0 }), () => storage.fileRemove(serverId, target, recursive));
    },
  };
}

/**
 * A whole file of this host put at `file`: moved where the storage can (fileAdopt: the same file system), else
 * streamed, the stream closed whatever the storage did with it (a refusal before reading leaves it unread).
 */
async function landFile(storage: ServerStorage, serverId: string, file: string, host: string, bytes: number, expect: Expect) {
  const moved = await storage.fileAdopt?.(serverId, file, host, bytes, expect);
  if (moved) return moved;
  const content = fs.createReadStream(host, { highWaterMark: 1024 * 1024 });
  try {
    return await storage.fileWrite(serverId, file, content, bytes, expect);
  } finally {
    content.destroy();
  }
}

export type Files = ReturnType<typeof createFiles>;
