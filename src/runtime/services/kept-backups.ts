import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../../errors';
import type { KeptBackup, KeptBackupsRepo } from '../../store/kept-backups-repo';

/**
 * Backups kept after their server is gone (deleteServer `keep_backups=true`; docs/architecture.md "Backups"): rows
 * in `kept_backups`, archives in `<DATA_DIR>/kept-backups/<backup id>.tar.gz`, moved there from the server's archive
 * folder while the server's removal runs. They count toward no server's disk; each account keeps at most `perUser`.
 */
export function createKeptBackups(deps: {
  repo: KeptBackupsRepo;
  dataDir: string;
  /** KEPT_BACKUPS_PER_USER. */
  perUser: number;
  /** True while a restore action uses this backup: it cannot be deleted then. */
  inUse: (id: string) => boolean;
}) {
  const folder = path.join(deps.dataDir, 'kept-backups');
  const file = (id: string) => path.join(folder, `${id}.tar.gz`);

  function get(userId: string, id: string): KeptBackup {
    const backup = deps.repo.get(userId, id);
    if (!backup) throw new AppError('backup_not_found', `No kept backup ${id}.`);
    return backup;
  }

  return {
    file,
    /** deleteServer with keep_backups=true (KeptBackupsRepo.promise): 403 quota_exceeded past the limit. */
    promise: (serverId: string): void => deps.repo.promise(serverId, deps.perUser),
    /**
     * The server's removal, before its archive folder and its row go: the promised backups become kept, and their
     * archives move out of `serverFolder`. Safe to run again after a crash: a moved archive is not moved twice.
     */
    async release(serverId: string, serverFolder: string): Promise<void> {
      const ids = deps.repo.transfer(serverId);
      if (ids.length === 0) return;
      await fs.promises.mkdir(folder, { recursive: true });
      for (const id of ids) {
        await fs.promises.rename(path.join(serverFolder, `${id}.tar.gz`), file(id)).catch((err: unknown) => {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !fs.existsSync(file(id))) throw err;
        });
      }
    },
    list: (userId: string, opts: { limit: number; startingAfter?: string }) => deps.repo.page(userId, opts),
    get,
    /** The kept backup `id` of the owner of `serverId`, for a restore into it; undefined if there is none. */
    forServer: (serverId: string, id: string): KeptBackup | undefined => deps.repo.forServer(serverId, id),
    archive: (userId: string, id: string): { file: string; backup: KeptBackup } => ({ backup: get(userId, id), file: file(id) }),
    async remove(userId: string, id: string): Promise<void> {
      get(userId, id);
      if (deps.inUse(id)) throw new AppError('action_conflict', `A restore action is restoring backup ${id}; wait for it.`);
      if (deps.repo.remove(userId, id)) await fs.promises.rm(file(id), { force: true });
    },
  };
}

export type KeptBackupsService = ReturnType<typeof createKeptBackups>;
