import type { BackupsService } from '../../runtime/services/backups';
import type { KeptBackupsService } from '../../runtime/services/kept-backups';
import type { Handlers } from '../types';
import { page, withCursor } from './paging';

/**
 * Backups tag: listServerBackups, createServerBackup, getServerBackup, deleteServerBackup, getServerBackupArchive;
 * and the account's kept backups: listKeptBackups, getKeptBackup, deleteKeptBackup, getKeptBackupArchive.
 */
export function backupHandlers(deps: { backups: BackupsService; keptBackups: KeptBackupsService }): Handlers {
  const { backups, keptBackups: kept } = deps;
  return {
    listServerBackups: ({ server, query }) => {
      return { status: 200, body: withCursor(backups.list(server.id, page(query))) };
    },
    createServerBackup: ({ server, body }) => {
      const backup = backups.create(server.id, body.name ?? null);
      return { status: 202, body: backup, headers: { Location: `/v1/servers/${server.id}/backups/${backup.id}` } };
    },
    getServerBackup: ({ server, path }) => {
      return { status: 200, body: backups.get(server.id, path.backup_id) };
    },
    deleteServerBackup: async ({ server, path }) => {
      await backups.remove(server.id, path.backup_id);
      return { status: 204, body: undefined };
    },
    getServerBackupArchive: ({ server, path }) => {
      return archiveReply(backups.archive(server.id, path.backup_id));
    },
    listKeptBackups: ({ principal, query }) => ({ status: 200, body: withCursor(kept.list(principal.userId, page(query))) }),
    getKeptBackup: ({ principal, path }) => ({ status: 200, body: kept.get(principal.userId, path.backup_id) }),
    deleteKeptBackup: async ({ principal, path }) => {
      await kept.remove(principal.userId, path.backup_id);
      return { status: 204, body: undefined };
    },
    getKeptBackupArchive: ({ principal, path }) => archiveReply(kept.archive(principal.userId, path.backup_id)),
  };
}

/** A ready archive, streamed from disk (src/http/send-file.ts). */
function archiveReply({ file, backup }: { file: string; backup: { id: string; sha256: string | null } }) {
  return {
    status: 200 as const,
    file,
    contentType: 'application/gzip',
    ranges: true, // a ready archive never changes (its id is never reused)
    headers: {
      'Content-Disposition': `attachment; filename="${backup.id}.tar.gz"`,
      // RFC 9530 §3: the representation's SHA-256, base64 between colons.
      'Repr-Digest': `sha-256=:${Buffer.from(backup.sha256 ?? '', 'hex').toString('base64')}:`,
    },
  };
}
