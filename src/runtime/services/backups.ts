import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import { AppError } from '../../errors';
import type { Plan } from '../../catalog/plans';
import type { Logger } from '../../log';
import type { Backup, BackupsRepo } from '../../store/backups-repo';
import type { ServersRepo } from '../../store/servers-repo';
import type { ServerAccess } from '../../store/server-view';
import type { ActionType, Failure } from '../../store/actions-repo';
import type { BackupDefinition, LiveBackup } from '../software/backup-definitions';
import type { Command, CommandContext } from '../server/door';
import type { Doors } from '../server/doors';
import type { KeptBackupsService } from './kept-backups';
import type { ServerSupervisor } from '../server/server-supervisor';
import type { SoftwareCatalog } from '../software/software-catalog';
import type { ServerStorage } from '../host/storage';

export type { BackupDefinition } from '../software/backup-definitions';

/** How long a live backup's archive may take: past it the backup fails (the game resumes saving by itself soon after). */
export const LIVE_ARCHIVE_LIMIT_MS = 30 * 60_000;
/** How long the game may hold its world saving (`{seconds}` of the pause command): the archive's limit and a minute. */
export const LIVE_HOLD_S = LIVE_ARCHIVE_LIMIT_MS / 1000 + 60;
/** How long the game has to flush its world and say it paused. */
const PAUSE_TIMEOUT_MS = 60_000;

/** The backup a restore action restores: one of the server's own, or one its owner kept (`kept`). */
export interface RestoreTarget {
  id: string;
  kept: boolean;
}

export interface BackupsDeps {
  repo: BackupsRepo;
  /** Reads the server; `filesChanged` tells the disk watcher an archive or the world changed (docs/architecture.md "Disk"). */
  servers: Pick<ServersRepo, 'find' | 'filesChanged'>;
  catalog: SoftwareCatalog;
  plans: readonly Plan[];
  /** The account's kept backups: a restore may use one, and a removal hands the promised ones over. */
  kept: KeptBackupsService;
  /** A backup is a command on the server's door (door.ts). */
  doors: Pick<Doors, 'of'>;
  /** The servers' files (storage.ts): what an archive is made of, and where a restore puts it. */
  storage: Pick<ServerStorage, 'exportTar' | 'importArchive'>;
  dataDir: string;
  log: Logger;
  /** Tracks background work so Runtime idle() waits for it. */
  track: (p: Promise<unknown>) => void;
}

/** The folder of a server's archives, and one archive in it. */
const folderOf = (dataDir: string, serverId: string) => path.join(dataDir, 'backups', serverId);
const archivePath = (dataDir: string, serverId: string, id: string) => path.join(folderOf(dataDir, serverId), `${id}.tar.gz`);

/** The server's backup, or backup_not_found. */
function backupOf(repo: BackupsRepo, serverId: string, id: string): Backup {
  const backup = repo.get(serverId, id);
  if (!backup) throw new AppError('backup_not_found', `No backup ${id} on server ${serverId}.`);
  return backup;
}

/**
 * Makes the archive (docs/architecture.md "Backups"). A running game whose software backs up `live` pauses its
 * world saving and stays up (its players stay connected); otherwise a running game is stopped (its players leave
 * with reason `backup`) and started again after. The row records which (Backup.consistency).
 */
function backupCommand(deps: BackupsDeps, def: BackupDefinition, id: string): Command {
  return {
    kind: 'backup',
    backupId: id,
    holds: true,
    keepsRestart: true,
    async run(server, ctx) {
      await server.whenInstalled();
      const live = def.consistency === 'live' && server.state === 'running' ? def.live : null;
      const stopFirst = !live && (server.state === 'running' || server.state === 'starting');
      const file = archivePath(deps.dataDir, server.id, id);
      const source = () => deps.storage.exportTar(server.id, def.paths);
      try {
        if (stopFirst) await server.halt('stop', 'backup');
        const made = live ? await liveArchive(server, live, id, source, file) : await archive(source, file);
        deps.repo.markReady(id, { consistency: live ? 'live' : 'stop', sizeBytes: made.size, sha256: made.sha256 });
        server.console.push('system', `backup ${id} ready (${made.size} bytes${live ? ', made while the game ran' : ''})`);
      } catch (err) {
        // The failure is recorded whatever the cleanup meets: where the archive's folder cannot be made (a file in
        // its place, no permission), removing the partial file fails too (ENOTDIR, EACCES), and the backup would
        // stay pending for good.
        await fs.promises.rm(`${file}.partial`, { force: true }).catch(() => undefined);
        deps.repo.markFailed(id, `The archive could not be made: ${(err as Error).message}`);
      }
      deps.servers.filesChanged(server.id); // its archives count toward its disk use
      ctx.release(); // the backup has ended: an action asked for now waits for the start below, not refused
      if (stopFirst && !ctx.overtaken) {
        const failure = await server.start(); // not after a kill, a removal or the shutdown overtook it
        if (failure) deps.log.warn('a server stopped for a backup did not start again', { server_id: server.id, code: failure.code });
      }
      return null;
    },
    cancelled: (by) => deps.repo.markFailed(id, `Cancelled before it began by ${by.kind}${by.actionId ? ` ${by.actionId}` : ''}.`),
  };
}

/**
 * The archive of a running game, made while it holds its world saving (backup-definitions.ts): the pause command,
 * its `paused` sign within PAUSE_TIMEOUT_MS, the archive within LIVE_ARCHIVE_LIMIT_MS, and the resume command
 * whatever happened. Throws, having archived nothing it would call ready, when the game does not pause.
 */
async function liveArchive(server: ServerSupervisor, live: LiveBackup, id: string, source: () => Promise<Readable>, file: string) {
  const game = server.running('a live backup needs it running');
  const pause = live.pause.replace(/\{seconds\}/g, String(LIVE_HOLD_S));
  server.console.push('input', pause);
  try {
    if (!(await game.request(pause, live.paused, PAUSE_TIMEOUT_MS))) {
      throw new Error(`the game did not pause its world saving within ${PAUSE_TIMEOUT_MS / 1000} s; nothing was archived`);
    }
    server.console.push('system', `backup ${id}: world saving paused; archiving while the game runs`);
    return await archive(source, file, LIVE_ARCHIVE_LIMIT_MS);
  } finally {
    server.console.push('input', live.resume);
    try {
      game.send(live.resume);
    } catch {
      // Its console is closed: the game is exiting, and holds nothing any more.
    }
  }
}

/** Runs a restore action: stop, swap the backup in (or leave everything as it was), start again if it ran. */
async function restoreBackup(deps: BackupsDeps, server: ServerSupervisor, ctx: CommandContext, { id, kept }: RestoreTarget): Promise<Failure | null> {
  const backup = kept ? deps.kept.forServer(server.id, id) : deps.repo.get(server.id, id);
  const def = deps.catalog.get(deps.servers.find(server.id)?.software ?? '').backup;
  if (!backup || ('status' in backup && backup.status !== 'ready') || !def) return { code: 'invalid_state', detail: `Backup ${id} is not ready to restore.` };
  const file = kept ? deps.kept.file(id) : archivePath(deps.dataDir, server.id, id);
  const wasRunning = server.state === 'running' || server.state === 'starting';
  let failure: Failure | null = null;
  try {
    await server.whenInstalled();
    // The archive is read once, its entries and SHA-256 checked as it is unpacked beside the world, and the game is
    // stopped only then (storage.ts importArchive): a damaged archive changes nothing, not even whether it runs.
    const stop = async () => {
      if (wasRunning) await server.halt('stop', 'restore');
    };
    await deps.storage.importArchive(server.id, def.paths, { file, sha256: backup.sha256 ?? '', tag: id }, stop);
    server.console.push('system', `backup ${id} restored`);
  } catch (err) {
    failure = { code: 'restore_failed', detail: `Nothing was changed: ${(err as Error).message}`.slice(0, 500) };
    server.console.push('system', `restoring backup ${id} failed; nothing was changed`);
  }
  deps.servers.filesChanged(server.id);
  return wasRunning && !ctx.overtaken ? ((await server.start()) ?? failure) : failure;
}

/**
 * A restore action's backup, checked before the action is recorded: `backupId` of a ready backup of this server
 * (backup_not_found, invalid_state), or of a backup its owner kept from a deleted server of the same version
 * (invalid_state otherwise), which only the owner may restore: kept backups are the owner's account's, never
 * a member's to see (docs/architecture.md "Sharing"; to anyone else one is backup_not_found). Whether the caller is
 * the owner is the access check's answer (`access`, src/http/access.ts), not looked up again; no `access` (the
 * service's own actions) is not the owner. Undefined for any other action (checkRestoreShape checked that none
 * takes one).
 */
function restoreTargetOf(deps: BackupsDeps, serverId: string, type: ActionType, backupId: string | undefined, access?: ServerAccess): RestoreTarget | undefined {
  if (type !== 'restore' || backupId === undefined) return undefined;
  const ownerAsks = access?.role === 'owner';
  const kept = deps.repo.get(serverId, backupId) || !ownerAsks ? undefined : deps.kept.forServer(serverId, backupId);
  if (kept) {
    const version = deps.servers.find(serverId)?.version;
    if (kept.version !== version) {
      throw new AppError('invalid_state', `Backup ${backupId} is of a ${kept.version} server; it can only be restored into a ${kept.version} server, and this one is ${version}.`);
    }
    return { id: backupId, kept: true };
  }
  const backup = backupOf(deps.repo, serverId, backupId);
  if (backup.status !== 'ready') throw new AppError('invalid_state', `Backup ${backupId} is ${backup.status}; only a ready backup can be restored.`);
  return { id: backupId, kept: false };
}

/** createBackups' begin: the checks in this order, the row (pruning the oldest automatic ones), the door's command. */
function beginBackup(deps: BackupsDeps, serverId: string, name: string | null, automatic: boolean): { backup: Backup; done: Promise<unknown> } {
  const server = deps.servers.find(serverId);
  if (!server) throw new AppError('server_not_found', `No server ${serverId}.`);
  const def = deps.catalog.get(server.software).backup;
  if (!def) throw new AppError('not_found', `${server.software} servers cannot be backed up.`);
  const door = deps.doors.of(serverId);
  if (['installing', 'deleting', 'unreachable', 'stopping'].includes(door.state)) {
    throw new AppError('invalid_state', `The server is ${door.state}; a backup needs it installed and settled.`);
  }
  const holder = door.holder();
  if (holder) throw new AppError('action_conflict', holder.actionId ? `Action ${holder.actionId} (${holder.kind}) is still under way.` : `A ${holder.kind} is under way.`);
  const limit = deps.plans.find((p) => p.id === server.plan)?.backups ?? 1;
  const created = deps.repo.create(serverId, name, { limit, automatic, keep: server.backup_schedule?.keep });
  if ('busy' in created) throw new AppError('action_conflict', `Backup ${created.busy.id} is still pending.`);
  for (const id of created.pruned) {
    door.console.push('system', `backup ${id} deleted to make room (the oldest automatic one)`);
    deps.track(fs.promises.rm(archivePath(deps.dataDir, serverId, id), { force: true }).then(() => deps.servers.filesChanged(serverId)));
  }
  return { backup: created.backup, done: door.submit(backupCommand(deps, def, created.backup.id)) };
}

/**
 * The one owner of backups: rows in `backups`, archives in `<DATA_DIR>/backups/<server id>/<backup id>.tar.gz`.
 * Making one and restoring one are commands on the server's door, so while either waits or runs the server is held
 * (power actions answer action_conflict, kill aside; the reconcile loop leaves it alone). An archive is written as
 * `.partial`, flushed to disk and renamed before its row says `ready`, so a `kill -9` leaves no `ready` backup
 * without a whole archive; at boot (`recover`) every `pending` row becomes `failed`.
 */
export function createBackups(deps: BackupsDeps) {
  const { repo, dataDir } = deps;
  const folder = (serverId: string) => folderOf(dataDir, serverId);
  const get = (serverId: string, id: string): Backup => backupOf(repo, serverId, id);
  const begin = (serverId: string, name: string | null, automatic = false) => beginBackup(deps, serverId, name, automatic);

  return {
    /** Runs a restore action (restoreBackup). */
    restore: (server: ServerSupervisor, ctx: CommandContext, target: RestoreTarget): Promise<Failure | null> => restoreBackup(deps, server, ctx, target),
    /** A restore action's backup, checked before the action is recorded (restoreTargetOf). */
    restoreTarget: (serverId: string, type: ActionType, backupId: string | undefined, access?: ServerAccess): RestoreTarget | undefined =>
      restoreTargetOf(deps, serverId, type, backupId, access),
    /** The folder of the server's archives: the disk watcher counts it in the server's disk use. */
    folder,
    /**
     * Starts a backup and returns it `pending` (`automatic`: for the server's schedule, backup-schedule.ts).
     * action_conflict while a power action or another backup holds the server; invalid_state unless the server is
     * installed and reachable; not_found for software without backups; backup_limit_reached at the plan's limit with
     * no automatic backup to delete (BackupsRepo.create deletes the oldest automatic ones to make room).
     */
    create: (serverId: string, name: string | null, automatic = false): Backup => begin(serverId, name, automatic).backup,
    /** create, also answering when the backup's command has ended (a schedule's task waits for it). */
    begin,
    list: (serverId: string, opts: { limit: number; startingAfter?: string }) => repo.page(serverId, opts),
    get,
    /** The archive of a `ready` backup, to stream; invalid_state otherwise. */
    archive(serverId: string, id: string): { file: string; backup: Backup } {
      const backup = get(serverId, id);
      if (backup.status !== 'ready') throw new AppError('invalid_state', `Backup ${id} is ${backup.status}; only a ready backup has an archive.`);
      return { file: archivePath(dataDir, serverId, id), backup };
    },
    async remove(serverId: string, id: string): Promise<void> {
      const backup = get(serverId, id);
      if (backup.status === 'pending') throw new AppError('invalid_state', `Backup ${id} is still pending.`);
      repo.remove(serverId, id);
      await fs.promises.rm(archivePath(dataDir, serverId, id), { force: true });
      deps.servers.filesChanged(serverId);
    },
    /** Boot: backups a previous life left `pending` were interrupted; they fail, and their partial files go. */
    async recover(): Promise<void> {
      for (const { serverId, id } of repo.allPending()) {
        repo.markFailed(id, 'Interrupted by a restart of the service.');
        await fs.promises.rm(`${archivePath(dataDir, serverId, id)}.partial`, { force: true });
      }
    },
    /**
     * A removed server's archives (its rows go with its row), but for those its owner asked to keep, which move to
     * the kept backups first (KeptBackupsService.release).
     */
    async removeAll(serverId: string): Promise<void> {
      await deps.kept.release(serverId, folder(serverId));
      await fs.promises.rm(folder(serverId), { recursive: true, force: true });
    },
  };
}

/**
 * Checks a power action's shape before anything else: a restore needs the backup to restore, and only a restore
 * takes one (validation_failed, pointing at /body/backup_id).
 */
export function checkRestoreShape(type: ActionType, backupId: string | undefined): void {
  if ((type === 'restore') !== (backupId !== undefined)) {
    const detail = type === 'restore' ? 'a restore needs the backup to restore' : 'only a restore takes a backup';
    throw new AppError('validation_failed', `The action is not valid: ${detail}.`, [{ pointer: '/body/backup_id', detail }]);
  }
}

/**
 * Writes the gzipped tar `source()` gives to `file`.partial while hashing it, flushes it to disk and renames it to
 * `file`; never holds the archive in memory. Rejects if the source fails, or takes longer than `limitMs`.
 */
export async function archive(source: () => Promise<Readable>, file: string, limitMs?: number): Promise<{ size: number; sha256: string }> {
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  const partial = `${file}.partial`;
  // The file is opened before the source starts, and the source piped without an await in between: a child
  // process's unread output is discarded once it exits (local-storage.ts tarOf), so a small archive, whole in the
  // pipe's buffer, could be lost to a busy event loop and leave an empty file marked ready.
  const out = await fs.promises.open(partial, 'w');
  const tarStream = await source();
  const hash = crypto.createHash('sha256');
  let size = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  const limit = limitMs === undefined ? undefined : AbortSignal.timeout(limitMs);
  await pipeline(tarStream, zlib.createGzip(), counter, out.createWriteStream(), { signal: limit });
  if (size === 0) throw new Error('the archive is empty'); // a gzip stream is never empty
  const sync = await fs.promises.open(partial, 'r+');
  await sync.sync();
  await sync.close();
  await fs.promises.rename(partial, file);
  return { size, sha256: hash.digest('hex') };
}

export type BackupsService = ReturnType<typeof createBackups>;
