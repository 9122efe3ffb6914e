import fs from 'node:fs';
import path from 'node:path';
import type { Plan } from '../../catalog/plans';
import type { Failure } from '../../store/actions-repo';
import type { Server } from '../../store/servers-repo';
import type { ServerStorage } from './storage';

export const MIB = 1024 * 1024;

/**
 * What one entry costs the host: the larger of its length and its allocated blocks (POSIX stat(3): `st_blocks`
 * counts 512-byte units). Blocks count the slack of small files and folders; length counts a sparse file as
 * what it becomes when it is filled or copied, so a game cannot hide gigabytes behind a hole.
 */
function entryBytes(st: fs.Stats): number {
  return Math.max(st.size, st.blocks * 512);
}

/**
 * The bytes a folder and everything under it take, walked asynchronously one entry at a time, so the event loop
 * is held only for one entry's bookkeeping, never for the walk. Symbolic links are never followed (lstat): a link counts
 * as itself, and nothing outside the folder is walked. Entries that vanish during the walk are skipped; hard
 * links count once per name. Null when `dir` is not a folder (not installed yet, or being deleted) or when
 * `stop()` turns true (the service is shutting down).
 *
 * Each folder's names are read at once (readdir), not through fs.opendir: Node's fs.Dir makes two promisified
 * functions per folder, and at 10,000 servers the disk watcher's first pass left ≈ 36 MB of them in the old
 * generation, which V8's memory reducer then compacted in one 34 ms pause (BENCHMARKS.md §11).
 */
export async function folderBytes(dir: string, stop: () => boolean = () => false): Promise<number | null> {
  const root = await lstatOrNull(dir);
  if (!root?.isDirectory()) return null;
  let total = entryBytes(root);
  const folders = [dir];
  for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
    // Removed or made unreadable since it was listed: nothing of it is counted (its own entry was).
    const names = await fs.promises.readdir(folder).catch(() => [] as string[]);
    for (const name of names) {
      if (stop()) return null;
      const full = path.join(folder, name);
      const st = await lstatOrNull(full);
      if (!st) continue;
      total += entryBytes(st);
      if (st.isDirectory()) folders.push(full);
    }
  }
  return total;
}

/**
 * How one server's disk use is measured (the disk watcher's DiskWatcherDeps.measure): its files through its storage
 * (`usage`, storage.ts: a walk of its folder here, a helper container over its volume on a node), then its backup
 * archives' folder on this host (`backupsFolder`, backups.ts; a missing one, no backup yet, is 0). Null when the
 * server has no files, its node does not answer, or `stop()` turned true during either walk.
 */
export function serverDiskUsage(storage: Pick<ServerStorage, 'usage'>, backupsFolder: (serverId: string) => string) {
  return async (serverId: string, stop: () => boolean): Promise<number | null> => {
    const own = await storage.usage(serverId, stop);
    const archives = await folderBytes(backupsFolder(serverId), stop);
    if (own === null || stop()) return null;
    return own + (archives ?? 0);
  };
}

async function lstatOrNull(file: string): Promise<fs.Stats | null> {
  try {
    return await fs.promises.lstat(file);
  } catch {
    return null;
  }
}

/**
 * Why a server may not start for its disk use: its last measurement is over its plan's disk_mb (disk_used_mb is
 * rounded up, so this compares the bytes exactly). Null when it may, or when it was never measured.
 */
export function diskOverPlan(server: Server | undefined, plans: readonly Plan[]): Failure | null {
  const plan = server && plans.find((p) => p.id === server.plan);
  if (!server || !plan || server.disk_used_mb === null || server.disk_used_mb <= plan.disk_mb) return null;
  return {
    code: 'disk_quota_exceeded',
    detail:
      `The server's folder used ${server.disk_used_mb} MB at ${server.disk_measured_at}, over its plan's ` +
      `${plan.disk_mb} MB. Change it to a plan with more disk, or have files removed; it can start once a ` +
      'measurement is within the limit.',
  };
}
