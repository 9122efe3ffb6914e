/**
 * Where a server's files live, and every operation on them (docs/architecture.md "Server files"): the world, the
 * settings and player lists a launch writes, what a backup archives and a restore puts back, what the disk quota
 * measures. Handlers, the supervisor, the backups and the disk watcher reach a server's files only through this
 * interface, so none of them knows which implementation it has:
 *   - local-storage.ts: a folder per server under DATA_DIR (RUNTIME=local);
 *   - docker/volume-storage.ts: a Docker volume per server on its node, every operation through the node's engine
 *     (RUNTIME=docker), so a node shares nothing with the control plane's host.
 *
 * A server's console log is not here: it is the control plane's own record (written by the service from what the
 * game prints, with the sender of every command), kept under DATA_DIR in both cases (console-buffer.ts).
 *
 * Every method takes the server's id; none is called for a server that a removal already deleted. The door (door.ts)
 * runs one command at a time per server, so two of these never race on one server, except `usage` and
 * `exportTar`, which may run while the game writes (the disk watcher; a live backup, after the game paused saving).
 */
import type { Readable } from 'node:stream';

/** One entry of a server's files as the Files API shows it (openapi/v1.yaml FileEntry). */
export interface FileEntry {
  /** Relative to the server's files, `/`-separated; `''` for the top. */
  path: string;
  name: string;
  /** A symbolic link (the game's) is shown as itself and never followed; `other`: a device, socket or FIFO. */
  type: 'file' | 'directory' | 'symlink' | 'other';
  /** Bytes, for a file; 0 otherwise. */
  size: number;
  modified_at: string;
  /** A strong validator of a file's content (RFC 9110 §8.8.3), null for anything else. */
  etag: string | null;
}

/** Why a file operation was refused (file-ops.cjs OpError), a customer's mistake rather than a fault. */
export type FileRefusal = 'not_found' | 'exists' | 'not_a_folder' | 'is_a_folder' | 'symlink' | 'not_empty' | 'precondition' | 'invalid';

export class FileOpError extends Error {
  constructor(readonly refusal: FileRefusal, message: string) {
    super(message);
  }
}

/** An upload's precondition (RFC 9110 §13.1): If-None-Match: *, If-Match: *, If-Match with entity tags. */
export type Expect = null | { absent: true } | { any: true } | { etags: string[] };

/**
 * The part of a file a read gives (fileRead): bytes `start` to `end` inclusive; or a function of the entry the read
 * opened that gives it (or none, the whole file), for a download whose Range and If-Range depend on its size and etag.
 */
export type ReadRange = { start: number; end: number } | ((entry: FileEntry) => { start: number; end: number } | undefined);

/** A backup's archive, as a restore hands it to its storage (importArchive). */
export interface RestoreArchive {
  /** A gzipped tar file on this host. */
  file: string;
  /** Its SHA-256 in hex, as recorded when it was made. */
  sha256: string;
  /** Names the staging folder, `.restore-<tag>` (the backup's id). */
  tag: string;
}

/** The methods of a customer's files below, for a storage that forwards each as it is (nodes-environment.ts). */
export const FILE_METHODS = ['fileStat', 'fileList', 'fileRead', 'fileWrite', 'fileMkdir', 'fileMove', 'fileRemove', 'fileExportFolder', 'fileExtract'] as const;

export interface ServerStorage {
  /**
   * Service boot, before any other call: finishes or undoes what a previous life left half done (a restore a
   * `kill -9` interrupted: its folders put back). Never rejects; what it cannot reach (a node away) is left for the
   * next boot.
   */
  start(): Promise<void>;
  /**
   * Top-level names in the server's files that are the service's own, not the customer's: hidden from the Files API
   * (the local folder's `logs`, the console log; a volume has none).
   */
  readonly ownNames?: readonly string[];
  /** Where the game sees its folder: its working directory and the `{dir}` of its command (LaunchSpec.cwd). */
  gameDir(serverId: string): string;
  /**
   * Creates the server's files if they do not exist, with `subdirs`, and writes `files` (relative path → content),
   * replacing what is there: a name the game turned into a symlink is replaced, never written through. Everything
   * else (the world) is kept. Also makes the folder of its console log on this host. Rejects on an I/O or engine
   * error, having written nothing it reports as done.
   */
  write(serverId: string, subdirs: string[], files: Record<string, string>): Promise<void>;
  /** Deletes every file of the server, and its console log's folder. Deleting what does not exist is a no-op. */
  remove(serverId: string): Promise<void>;
  /**
   * The bytes the server's files take (and its console log), each file counting the larger of its length and its
   * allocated blocks (docs/architecture.md "Disk"). Null when it has no files (not installed yet), when the place
   * they are in does not answer, or when `stop()` turned true during the walk.
   */
  usage(serverId: string, stop?: () => boolean): Promise<number | null>;
  /**
   * A tar stream (not compressed) of `paths` (folders of the server's files), each entry named `<path>/…`. Rejects
   * if a path is missing or the files cannot be reached; the stream errors if reading fails midway. The caller reads
   * it to its end (or destroys it).
   */
  exportTar(serverId: string, paths: string[]): Promise<Readable>;
  /**
   * Replaces `paths` by those of `archive`, all or nothing, reading its file once: as it is read, its entries are
   * checked (only plain files and folders inside `paths`: no link, no absolute name, no `..`; a bad one is never
   * unpacked) and unpacked beside the live folders, and its SHA-256 is compared with `archive.sha256`. Only when all
   * of that held does `beforeSwap` run (a restore stops the game there, so a damaged archive does not even stop it)
   * and are the folders swapped in by renames, which a `kill -9` midway leaves for start() to finish or undo. Any
   * failure before rejects having changed nothing, without calling `beforeSwap`.
   */
  importArchive(serverId: string, paths: string[], archive: RestoreArchive, beforeSwap: () => Promise<void>): Promise<void>;

  // A customer's own files (openapi/v1.yaml tag Files; docs/architecture.md "Server files"). Each `path` is relative
  // and already checked (services/file-paths.ts: no `..`, no absolute name, no control character, no backslash, no
  // reserved name). Every folder on the way must be a real folder: a symbolic link there is refused (`symlink`),
  // never followed; a link as the last name is shown, moved or deleted as itself. A refusal rejects with a
  // FileOpError; anything else is a fault. None of these creates the server's files: a server whose files do not
  // exist (not installed, or removed) answers `not_found`. Callers serialize writes to one server (services/files.ts).

  /** The entry at `path`. */
  fileStat(serverId: string, path: string): Promise<FileEntry>;
  /**
   * One page of the folder `path`: folders first, then the rest, each by name; after the entry `after` (the
   * previous page's last, as [folder ? 0 : 1, name]). The service's own names (staging, and `hide`) are left out.
   */
  fileList(serverId: string, path: string, after: [number, string] | null, limit: number, hide: string[]): Promise<{ entries: FileEntry[]; more: boolean }>;
  /**
   * The content of the file at `path` (a regular file, not a link), the part `range` says when given (a function of
   * it is called with the entry first, before the check that it is a file, and may throw). Resolves once the file is
   * open, with the entry it opened (its etag says which content it is). One look at the entry serves the caller's
   * checks and the read: on a Docker node each look is a helper container (BENCHMARKS.md §13).
   */
  fileRead(serverId: string, path: string, range?: ReadRange): Promise<{ entry: FileEntry; content: Readable }>;
  /**
   * Writes `size` bytes of `content` to `path` (its folder must exist): streamed into a staging file of the server's
   * files, then renamed in place if `expect` holds (checked just before the rename; else `precondition`), so a
   * reader never sees half a file and a failure leaves the old one. Rejects if `content` ends early or errors.
   */
  fileWrite(serverId: string, path: string, content: Readable, size: number, expect: Expect): Promise<{ entry: FileEntry; created: boolean }>;
  /**
   * fileWrite of a whole file of this host (`file`, the service's own to take: an SFTP session's staged file) by
   * moving it rather than copying it: renamed into the server's files as their staging file, then in place as
   * fileWrite does. Resolves null, leaving `file` where it was, where it cannot be moved (another file system), and
   * the caller streams it instead. Only a storage on this host has it (RUNTIME=local).
   */
  fileAdopt?(serverId: string, path: string, file: string, size: number, expect: Expect): Promise<{ entry: FileEntry; created: boolean } | null>;
  /** Makes the folder `path` (its parent must exist; `exists` if the name is taken). */
  fileMkdir(serverId: string, path: string): Promise<FileEntry>;
  /** Renames `from` to `to` within the server's files; `to` must not exist (`exists`), its folder must. */
  fileMove(serverId: string, from: string, to: string): Promise<FileEntry>;
  /** Deletes a file, a link, or a folder (with its entries only when `recursive`, else `not_empty`). */
  fileRemove(serverId: string, path: string, recursive: boolean): Promise<void>;
  /**
   * A tar stream (not compressed) of the folder `path`, every entry named `<its last name>/…` (`./…` for the top);
   * links are entries of their own, never followed. The stream errors if reading fails midway.
   */
  fileExportFolder(serverId: string, path: string): Promise<Readable>;
  /**
   * Puts the tar stream `content` into the folder `folder`, all or nothing: its entries (plain files and folders
   * only, relative names, checked by the caller) are unpacked into a staging folder beside them (`.restore-<tag>`)
   * and each top-level name of `names` is then renamed in, a name that was there renamed aside and deleted once
   * every rename worked (folder-ops.cjs swap), so a failure midway leaves the folder as it was.
   */
  fileExtract(serverId: string, folder: string, tag: string, names: string[], content: Readable): Promise<void>;
}
