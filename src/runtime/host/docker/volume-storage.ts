import fs from 'node:fs';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import type { Logger } from '../../../log';
import { folderBytes } from '../disk-usage';
import { LOGS, serverFolder, tarOf } from '../local-storage';
import { checkedArchive } from '../restore';
import { forEachEntry, repack } from '../tar-entries';
import type { ServerStorage } from '../storage';
import { removeContainer } from './container-process';
import { EngineError, type Engine } from './engine';
import type { Helpers } from './helper-containers';
import type { KeptHelpers } from './kept-helpers';
import { GAME_DIR } from './image';
import { volumeCopies, type MoveHelper } from './volume-copies';
import { volumeFiles } from './volume-files';

export interface VolumeStorageOptions {
  engine: Engine;
  helpers: Helpers;
  /** Each server's kept helper for its files (kept-helpers.ts): removed before its volume goes. */
  kept: KeptHelpers;
  /** The labels that make a volume ours: this instance, and its server. */
  labels: (serverId: string) => Record<string, string>;
  /** The volume's name of a server (docker-environment.ts volumeName). */
  volumeName: (serverId: string) => string;
  /** The service's DATA_DIR: where each server's console log is, and where a previous release kept its folder. */
  dataDir: string;
  /** The games' user: every file put into a volume is given to it (the entries name it as owner). */
  user: { uid: number; gid: number };
  log: Logger;
}

/** A server's files on one node, with what a move between two nodes needs of each (nodes-environment.ts). */
export interface NodeVolumes extends ServerStorage {
  /**
   * The server's volume exists, with its files: made if missing, and the folder a previous release kept under
   * DATA_DIR (bind-mounted into its containers) moved in first, then deleted there (README "Nodes"). Only while no
   * game of the server runs. Idempotent: a move in a `kill -9` interrupted is made again whole.
   */
  ensure(serverId: string): Promise<void>;
  /** Whether this node holds a volume of the server. */
  has(serverId: string): Promise<boolean>;
  /** The whole volume as a tar stream (entries `./…`); with `ready`, its helper made at once and read once that resolves. */
  exportVolume(serverId: string, ready?: Promise<unknown>): Promise<Readable>;
  /**
   * A new volume of the server holding `content` (exportVolume's), any volume it had here removed first. The volume
   * and its helper are made before `content` is awaited, so a caller may start this while it waits for the source.
   */
  importVolume(serverId: string, content: Readable | Promise<Readable>): Promise<void>;
  /** A digest of every file's path, kind, size, mode and content (folder-ops.cjs manifest), to compare two copies. */
  manifest(serverId: string): Promise<{ digest: string; files: number; bytes: number }>;
  /** Removes the volume (not the console log, which is the control plane's). A missing one is a no-op. */
  drop(serverId: string): Promise<void>;
  /** A live move's helper on the server's volume here, for the whole move (move-helpers.ts); the volume exists. */
  moveHelper(serverId: string): Promise<MoveHelper>;
  /** A new, empty volume of the server (any it had here removed first) and a move's helper on it. */
  freshVolume(serverId: string): Promise<MoveHelper>;
  /** A live move's record of every entry, kept in the volume, before its first pass (folder-ops.cjs snapshot). */
  snapshot(helper: MoveHelper): Promise<{ files: number; bytes: number }>;
  /**
   * `content` unpacked into the helper's volume, each file written to the disk as it lands (folder-ops.cjs `flush DIR
   * TAG`); resolves once it is all in, with `flushed`: once it is all on the disk too.
   */
  land(helper: MoveHelper, content: Readable | Promise<Readable>): Promise<{ flushed: Promise<void> }>;
  /** What changed since snapshot(), as a tar stream for importChanges, and the volume's listing (folder-ops.cjs delta); no game may run. */
  exportChanges(helper: MoveHelper): Promise<{ content: Readable; files: number; bytes: number; removed: number; listing: Listing }>;
  /** exportChanges' content unpacked into the volume, the paths it names as removed removed; its listing then (folder-ops.cjs apply). */
  importChanges(helper: MoveHelper, content: Readable | Promise<Readable>): Promise<Listing>;
  /** ServerStorage.write through a move's helper on the volume: the start on the new node, without a helper of its own. */
  writeWith(helper: MoveHelper, serverId: string, subdirs: string[], files: Record<string, string>): Promise<void>;
}

/** folder-ops.cjs listing: a digest of every path, kind, size, mode and mtime, and the files' count and bytes. */
export type Listing = { digest: string; files: number; bytes: number };

/**
 * A server's files as a Docker volume on one node (storage.ts states the contract): every operation goes through the
 * node's engine, the archive endpoints of a helper container that mounts the volume (never started), or folder-ops.cjs
 * run in one (helper-containers.ts). Nothing of the control plane's host is mounted anywhere. The console log stays
 * under DATA_DIR (`servers/<id>/logs`), the control plane's own record. A half-done restore inside a volume is
 * finished or undone by the next operation that reads or writes its world (`prepare` runs first), not at boot,
 * where walking every volume would take a helper each. What a server's operations would otherwise ask every time is
 * asked once per service life (Volumes): whether its volume was made, whether its folder holds a previous release's.
 */
export function createVolumeStorage(options: VolumeStorageOptions): NodeVolumes {
  const o: Volumes = { ...options, made: new Set(), plain: new Set() };
  return {
    ensure: (serverId) => ensure(o, serverId),
    has: (serverId) => has(o, serverId),
    drop: (serverId) => drop(o, serverId),
    async start() {
      // Nothing at boot: an interrupted restore is put right by the volume's next `prepare` (the comment above).
    },
    gameDir: () => GAME_DIR,
    ...gameFiles(o),
    ...archives(o),
    ...volumeCopies(o, { streamOut, drop, create, filesToWrite }),
    ...volumeFiles(o),
  };
}

/** The server's folder under DATA_DIR: its console log, and what a previous release kept there. */
const folder = (o: VolumeStorageOptions, serverId: string) => serverFolder(o.dataDir, serverId);
const archiveOf = (containerId: string, p: string) => `/containers/${containerId}/archive?path=${encodeURIComponent(p)}`;

/**
 * The options, and what this storage remembers of each server for the service's life, so that a server's operations
 * do not ask it again each time: a volume, once made, stays; a folder that holds nothing of a previous release
 * (README "Nodes") never gets anything again, as no release writes there any more but for the console log. Both are
 * forgotten when the volume goes (drop), and when a backup finds a previous release's files in the folder after all.
 */
export interface Volumes extends VolumeStorageOptions {
  /** Servers whose volume this storage made: `create` is not asked again. */
  made: Set<string>;
  /** Servers whose folder under DATA_DIR was found holding only the console log, or was moved in: `legacy` is []. */
  plain: Set<string>;
}

/** What a previous release kept in the server's folder under DATA_DIR, but for the console log. */
async function legacy(o: Volumes, serverId: string): Promise<string[]> {
  if (o.plain.has(serverId)) return [];
  const names = (await fs.promises.readdir(folder(o, serverId)).catch(() => [] as string[])).filter((n) => n !== LOGS);
  if (names.length === 0) o.plain.add(serverId);
  return names;
}

/** Forgets what was remembered of the server (Volumes): its volume is gone, or its folder is to be looked at again. */
function forget(o: Volumes, serverId: string): void {
  o.made.delete(serverId);
  o.plain.delete(serverId);
}

async function has(o: VolumeStorageOptions, serverId: string): Promise<boolean> {
  try {
    await o.engine.json('GET', `/volumes/${o.volumeName(serverId)}`);
    return true;
  } catch (err) {
    if (err instanceof EngineError && err.status === 404) return false;
    throw err;
  }
}

async function create(o: Volumes, serverId: string): Promise<void> {
  await o.engine.json('POST', '/volumes/create', { Name: o.volumeName(serverId), Labels: o.labels(serverId) });
  o.made.add(serverId);
}

/**
 * Deletes the server's volume. The engine refuses (409) while any container mounts it, and a container can outlive
 * what made it when its engine went away mid-way: a helper whose run was cut off, a game container a failed spawn
 * could not remove. Its server is being removed, so every container that mounts its volume (a volume of this
 * instance: the name says so) goes first, then the volume.
 */
async function drop(o: Volumes, serverId: string): Promise<void> {
  forget(o, serverId);
  await o.kept.release(serverId);
  const name = o.volumeName(serverId);
  const gone = (err: unknown) => err instanceof EngineError && err.status === 404;
  try {
    await o.engine.json('DELETE', `/volumes/${name}`);
    return;
  } catch (err) {
    if (gone(err)) return;
    if (!(err instanceof EngineError && err.status === 409)) throw err;
  }
  const filters = encodeURIComponent(JSON.stringify({ volume: [name] }));
  const users = await o.engine.json<Array<{ Id: string }>>('GET', `/containers/json?all=1&filters=${filters}`);
  for (const c of users) await removeContainer(o.engine, c.Id);
  if (users.length > 0) o.log.warn('removed containers left mounting a deleted server\'s volume', { serverId, count: users.length });
  await o.engine.json('DELETE', `/volumes/${name}`).catch((err: unknown) => {
    if (!gone(err)) throw err;
  });
}

/** NodeVolumes.ensure: asks the engine nothing once this storage made the volume and found no folder to move in. */
async function ensure(o: Volumes, serverId: string): Promise<void> {
  if (!o.made.has(serverId)) await create(o, serverId);
  await moveIn(o, serverId);
}

/**
 * Moves a previous release's folder into the server's volume (made first, with its labels, whatever was
 * remembered), then deletes it here but for the console log. Only while no game of the server runs.
 */
async function moveIn(o: Volumes, serverId: string): Promise<void> {
  const names = await legacy(o, serverId);
  if (names.length === 0) return;
  await create(o, serverId);
  // Copied whole again after an interruption: the files still in the folder are whole ones, the others are in.
  const content = owned(await tarOf(folder(o, serverId), names), o.user);
  await o.helpers.withVolume(o.volumeName(serverId), serverId, (c) => o.engine.upload(archiveOf(c, GAME_DIR), content, 'application/x-tar', 'PUT'));
  for (const name of names) await fs.promises.rm(path.join(folder(o, serverId), name), { recursive: true, force: true });
  o.plain.add(serverId);
  o.log.info('moved a server\'s folder into its volume', { serverId, entries: names.length });
}

/**
 * A stream of the engine's archive of `paths` (absolute in the helper: each entry named from the path's last
 * part; one tar, repacked when several); the helper goes when it ends. With `ready`, the helper is made at once
 * and read once `ready` resolves (what it is to read is being written meanwhile); none is read if it rejects.
 */
function streamOut(o: VolumeStorageOptions, serverId: string, paths: string[], ready?: Promise<unknown>): Promise<Readable> {
  const { engine } = o;
  return new Promise<Readable>((resolve, reject) => {
    o.helpers
      .withVolume(o.volumeName(serverId), serverId, async (c) => {
        await ready;
        const out = paths.length === 1 ? await engine.download(archiveOf(c, paths[0])) : concatenated(paths.map((p) => () => engine.download(archiveOf(c, p))));
        resolve(out);
        await finished(out).catch(() => undefined); // read to its end, or given up by its reader
      })
      .catch(reject);
  });
}

/** What ServerStorage.write puts into a volume (also by a move's helper, writeWith): the files, owned by the games' user. */
async function filesToWrite(o: Volumes, serverId: string, files: Record<string, string>): Promise<Readable> {
  await fs.promises.mkdir(path.join(folder(o, serverId), LOGS), { recursive: true });
  const pack = tar.pack();
  for (const [name, content] of Object.entries(files)) pack.entry({ name, mode: 0o644, ...o.user }, content);
  pack.finalize();
  return Readable.from(pack);
}

/** ServerStorage.write, remove and usage: the files the runtime writes (settings, player lists) and measures. */
function gameFiles(o: Volumes): Pick<ServerStorage, 'write' | 'remove' | 'usage'> {
  const { engine, helpers, log } = o;
  return {
    async write(serverId, subdirs, files) {
      await ensure(o, serverId);
      const pack = await filesToWrite(o, serverId, files);
      // The engine's extraction replaces a name the game turned into a symlink instead of following it, and gives
      // each file the owner its entry names, the games' user (API "Extract an archive of files or folders").
      await helpers.run(o.volumeName(serverId), serverId, ['prepare', GAME_DIR, ...subdirs], (c) =>
        engine.upload(archiveOf(c, GAME_DIR), pack, 'application/x-tar', 'PUT').then(() => undefined),
      );
    },
    async remove(serverId) {
      await drop(o, serverId);
      await fs.promises.rm(folder(o, serverId), { recursive: true, force: true });
    },
    async usage(serverId, stop = () => false) {
      try {
        if ((await legacy(o, serverId)).length > 0) return await folderBytes(folder(o, serverId), stop);
        if (!(await has(o, serverId))) {
          forget(o, serverId); // not made yet, or gone: the next write makes it (Volumes)
          return null;
        }
        if (stop()) return null;
        const { bytes } = await helpers.run<{ bytes: number }>(o.volumeName(serverId), serverId, ['usage', GAME_DIR]);
        return stop() ? null : bytes + ((await folderBytes(path.join(folder(o, serverId), LOGS), stop)) ?? 0);
      } catch (err) {
        log.warn('could not measure a server\'s volume', { serverId, error: String(err) });
        return null;
      }
    },
  };
}

/** ServerStorage.exportTar and importArchive: a backup's files out, a restore's archive in. */
function archives(o: Volumes): Pick<ServerStorage, 'exportTar' | 'importArchive'> {
  const { engine, helpers } = o;
  const volume = (serverId: string) => o.volumeName(serverId);
  return {
    async exportTar(serverId, paths) {
      // A backup reads the files where they are, so it looks at the folder itself (one readdir, beside a helper and
      // an archive): a previous release's files found there are archived, and the next write makes the volume (with
      // its labels, whatever was remembered) and moves them in.
      o.plain.delete(serverId);
      if ((await legacy(o, serverId)).length > 0) {
        forget(o, serverId);
        return tarOf(folder(o, serverId), paths); // a running game's, still bind-mounted
      }
      await helpers.run(volume(serverId), serverId, ['prepare', GAME_DIR]); // an interrupted restore put right first
      return streamOut(o, serverId, paths.map((p) => `${GAME_DIR}/${p}`));
    },
    async importArchive(serverId, paths, archive, beforeSwap) {
      if (!o.made.has(serverId)) await create(o, serverId);
      // Read once: each entry is checked before it is sent to the node, the digest at the end (checkedArchive), and
      // the engine unpacks it into the staging folder while the game may still run; the swap needs it stopped.
      const content = staged(checkedArchive(archive, paths), `.restore-${archive.tag}`, o.user);
      try {
        await helpers.run(volume(serverId), serverId, ['swap', GAME_DIR, archive.tag, ...paths], async (c) => {
          await engine.upload(archiveOf(c, GAME_DIR), content, 'application/x-tar', 'PUT');
          await beforeSwap();
          await moveIn(o, serverId); // a previous release's folder, now that no game of the server runs
        });
      } catch (err) {
        // What reached the staging folder before a check failed goes, as the next `prepare` would delete it.
        await helpers.run(volume(serverId), serverId, ['prepare', GAME_DIR]).catch(() => undefined);
        throw err;
      }
    },
  };
}

/** The entries of several tar streams, one after the other, as one tar. */
function concatenated(sources: Array<() => Promise<Readable>>): Readable {
  return repack(async (put) => {
    for (const source of sources) await forEachEntry(await source(), put);
  });
}

/** The tar `source` with every entry owned by `user`. */
function owned(source: Readable, user: { uid: number; gid: number }): Readable {
  return repack((put) => forEachEntry(source, (header, content) => put({ ...header, uid: user.uid, gid: user.gid, uname: '', gname: '' }, content)));
}

/** The tar `source` with its entries inside `folder` (a restore's staging), each owned by `user`. */
function staged(source: Readable, folder: string, user: { uid: number; gid: number }): Readable {
  const owner = { uid: user.uid, gid: user.gid, uname: '', gname: '' };
  return repack(async (put) => {
    await put({ name: `${folder}/`, type: 'directory', mode: 0o755, ...owner }, Readable.from([]));
    await forEachEntry(source, (header, content) => put({ ...header, ...owner, name: `${folder}/${header.name.replace(/^\.?\//, '')}` }, content));
  });
}
