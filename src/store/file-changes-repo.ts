import type { components } from '../../generated/v1';
import { actorFor, type Actor } from '../actors';
import type { Clock } from '../clock';
import { newId } from '../ids';
import type { Db } from './db';

// Answers show `operation` and `actor` open (x-open-enum, OtherActor); the service records the known sets.
export type FileChange = Omit<components['schemas']['FileChange'], 'operation' | 'actor'> & { operation: components['schemas']['FileOperation']; actor: Actor };
/** How many changes a server keeps (openapi/v1.yaml listServerFileActivity). */
export const FILE_CHANGES_KEPT = 1000;

interface Row {
  id: string;
  at: string;
  actor: string;
  operation: FileChange['operation'];
  path: string;
  to_path: string | null;
  bytes: number;
}

/**
 * `file_changes` (migration 034), its one writer: the Files API's record of who changed what in a server's files
 * (docs/architecture.md "Server files"). Each insert drops the server's changes past the newest FILE_CHANGES_KEPT.
 */
export function createFileChangesRepo(db: Db, clock: Clock) {
  const insert = db.prepare(`INSERT INTO file_changes (id, server_id, at, actor, operation, path, to_path, bytes)
    VALUES (@id, @server_id, @at, @actor, @operation, @path, @to_path, @bytes)`);
  const trim = db.prepare(`DELETE FROM file_changes WHERE server_id = ? AND id < (
    SELECT id FROM file_changes WHERE server_id = ? ORDER BY id DESC LIMIT 1 OFFSET ${FILE_CHANGES_KEPT - 1})`);
  const page = db.prepare<unknown[], Row>(`SELECT id, at, actor, operation, path, to_path, bytes FROM file_changes
    WHERE server_id = @server_id AND (@after IS NULL OR id < @after) ORDER BY id DESC LIMIT @limit`);
  const record = db.transaction((serverId: string, actor: Actor, change: Pick<FileChange, 'operation' | 'path' | 'to' | 'bytes'>) => {
    const now = clock.now();
    insert.run({ id: newId('fch', now), server_id: serverId, at: new Date(now).toISOString(), actor: JSON.stringify(actor), operation: change.operation, path: change.path, to_path: change.to, bytes: change.bytes });
    trim.run(serverId, serverId);
  });
  return {
    record: (serverId: string, actor: Actor, change: Pick<FileChange, 'operation' | 'path' | 'to' | 'bytes'>) => record(serverId, actor, change),
    /** A page, newest first, each actor as `viewer` may see it (a token id only to its own account). */
    list(serverId: string, viewer: string, limit: number, after: string | null): { data: FileChange[]; hasMore: boolean } {
      const rows = page.all({ server_id: serverId, after, limit: limit + 1 });
      const data = rows.slice(0, limit).map((r) => ({
        id: r.id, at: r.at, actor: actorFor(JSON.parse(r.actor) as Actor, viewer), operation: r.operation, path: r.path, to: r.to_path, bytes: r.bytes,
      }));
      return { data, hasMore: rows.length > limit };
    },
  };
}

export type FileChangesRepo = ReturnType<typeof createFileChangesRepo>;
