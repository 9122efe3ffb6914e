// A server's own files through the API (openapi/v1.yaml tag Files; docs/architecture.md "Server files"): the checks
// every operation passes (paths, the files the service writes, the server's state, the plan's disk: file-guards.ts),
// then one call of its storage (host/storage.ts), then the change recorded with its actor (file-changes-repo.ts).
// Reads and writes are here, the world import in file-extract.ts. The SFTP server and the dashboard build on these
// same methods.
import type { Readable } from 'node:stream';
import type { Plan } from '../../catalog/plans';
import { AppError } from '../../errors';
import type { Actor } from '../../actors';
import type { FileChangesRepo } from '../../store/file-changes-repo';
import type { ServersRepo } from '../../store/servers-repo';
import type { FileEntry, ServerStorage } from '../host/storage';
import type { Doors } from '../server/doors';
import type { SoftwareCatalog } from '../software/software-catalog';
import { folderArchive } from './file-archives';
import { createExtract } from './file-extract';
import { bodySize, call, createWriteGate, expectOf, readOnly, type WriteGate } from './file-guards';
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
}

/** A server's files: reads, writes and the world import, each checked then one call of the storage. */
export function createFiles(deps: FilesDeps) {
  const gate = createWriteGate(deps);
  return {
    ...fileReads(deps),
    ...fileWrites(deps, gate),
    extract: createExtract(deps, gate),
    activity: (serverId: string, viewer: string, limit: number, after: string | null) => deps.changes.list(serverId, viewer, limit, after),
  };
}

const opts = (deps: FilesDeps, top: boolean) => ({ top, hidden: deps.hidden });

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
      const last = page.entries[page.entries.length - 1];
      const next = page.more && last ? Buffer.from(JSON.stringify([last.type === 'directory' ? 0 : 1, last.name])).toString('base64url') : null;
      return { path: dir, data: page.entries, has_more: page.more, next_cursor: next };
    },
    stat: (serverId: string, p: string | undefined) => call(storage.fileStat(serverId, checkedPath(p, '/query/path', opts(deps, true)))),
    /** The entry (for its size and etag), then its content from `range` when the caller asks for part of it. */
    async read(serverId: string, p: string | undefined, range: (size: number, etag: string | null) => { start: number; end: number } | undefined) {
      const file = checkedPath(p, '/query/path', opts(deps, false));
      const entry = await call(storage.fileStat(serverId, file));
      if (entry.type !== 'file') throw new AppError('file_conflict', `${file} is a ${entry.type}, not a file.`);
      const part = range(entry.size, entry.etag);
      const opened = await call(storage.fileRead(serverId, file, part));
      return { ...opened, part };
    },
    async archive(serverId: string, p: string | undefined, format: 'zip' | 'tar.gz'): Promise<Readable> {
      const dir = checkedPath(p, '/query/path', opts(deps, true));
      const tar = await call(storage.fileExportFolder(serverId, dir));
      return folderArchive(tar, format, (name) => dir === '' && deps.hidden.includes(name.split('/')[0]));
    },
  };
}

/** Upload, new folder, move, delete: checked, then one at a time per server through the gate, recorded. */
function fileWrites(deps: FilesDeps, gate: WriteGate) {
  const { storage } = deps;
  return {
    upload(serverId: string, p: string | undefined, body: Readable, headers: Record<string, string | string[] | undefined>): Promise<{ entry: FileEntry; created: boolean }> {
      const file = checkedPath(p, '/query/path', opts(deps, false));
      readOnly(deps, serverId, file);
      const bytes = bodySize(deps, headers);
      gate.claim(serverId, bytes);
      const expect = expectOf(headers);
      return gate.write(serverId, () => ({ operation: 'upload', path: file, to: null, bytes }), async () => {
        const result = await storage.fileWrite(serverId, file, body, bytes, expect);
        gate.wrote(serverId, bytes);
        return result;
      });
    },
    mkdir(serverId: string, p: string) {
      const dir = checkedPath(p, '/body/path', opts(deps, false));
      return gate.write(serverId, () => ({ operation: 'create_folder', path: dir, to: null, bytes: 0 }), () => storage.fileMkdir(serverId, dir));
    },
    move(serverId: string, from: string, to: string) {
      const a = checkedPath(from, '/body/from', opts(deps, false));
      const b = checkedPath(to, '/body/to', opts(deps, false));
      readOnly(deps, serverId, a);
      readOnly(deps, serverId, b);
      return gate.write(serverId, () => ({ operation: 'move', path: a, to: b, bytes: 0 }), () => storage.fileMove(serverId, a, b));
    },
    remove(serverId: string, p: string | undefined, recursive: boolean) {
      const target = checkedPath(p, '/query/path', opts(deps, false));
      readOnly(deps, serverId, target);
      return gate.write(serverId, () => ({ operation: 'delete', path: target, to: null, bytes: 0 }), () => storage.fileRemove(serverId, target, recursive));
    },
  };
}

export type Files = ReturnType<typeof createFiles>;
