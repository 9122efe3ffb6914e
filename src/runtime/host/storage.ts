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

export interface ServerStorage {
  /**
   * Service boot, before any other call: finishes or undoes what a previous life left half done (a restore a
   * `kill -9` interrupted: its folders put back). Never rejects; what it cannot reach (a node away) is left for the
   * next boot.
   */
  start(): Promise<void>;
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
   * Replaces `paths` by those of `archive` (a gzipped tar file on this host, whose SHA-256 the caller checked), all
   * or nothing: only plain files and folders inside `paths` are taken (no link, no absolute name, no `..`, else it
   * rejects having changed nothing); they are unpacked beside the live folders and swapped in by renames, which a
   * `kill -9` midway leaves for start() to finish or undo. `tag` names the staging (a backup id).
   */
  importArchive(serverId: string, paths: string[], archive: string, tag: string): Promise<void>;
}
