import { required, type Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { quotaExceeded } from '../errors';
import type { ListName } from '../runtime/software/player-list-definitions';
import type { EventsRepo } from './events-repo';

/** One name on a list. */
export interface ListEntry {
  name: string;
  added_at: string;
}

/** How many names one list of one server may hold (docs/conventions.md "Collections": small, bounded lists). */
export const MAX_LIST_ENTRIES = 1000;

/**
 * The `player_list_entries` and `player_list_switches` tables (migration 015). The runtime's player lists
 * (src/runtime/services/player-lists.ts) are the only writer. Each change raises `player_list.changed` in its own
 * transaction, as its actor (docs/architecture.md "Events and webhooks"); a write that changes nothing raises none.
 */
export function createPlayerListsRepo(db: Db, clock: Clock, events: Pick<EventsRepo, 'raise'>) {
  const q = {
    entries: db.prepare<unknown[], ListEntry>('SELECT name, added_at FROM player_list_entries WHERE server_id = ? AND list = ? ORDER BY added_at, name'),
    count: db.prepare<unknown[], { n: number }>('SELECT COUNT(*) AS n FROM player_list_entries WHERE server_id = ? AND list = ?'),
    has: db.prepare<unknown[], ListEntry>('SELECT name, added_at FROM player_list_entries WHERE server_id = ? AND list = ? AND name = ?'),
    add: db.prepare('INSERT INTO player_list_entries (server_id, list, name, added_at) VALUES (?, ?, ?, ?)'),
    remove: db.prepare('DELETE FROM player_list_entries WHERE server_id = ? AND list = ? AND name = ?'),
    enabled: db.prepare<unknown[], { enabled: number }>('SELECT enabled FROM player_list_switches WHERE server_id = ? AND list = ?'),
    setEnabled: db.prepare(`INSERT INTO player_list_switches (server_id, list, enabled) VALUES (?, ?, ?)
      ON CONFLICT (server_id, list) DO UPDATE SET enabled = excluded.enabled`),
  };
  return {
    entries: (serverId: string, list: ListName): ListEntry[] => q.entries.all(serverId, list),
    /**
     * Adds a name (the existing entry if it is there already, whatever its case); quota_exceeded past
     * MAX_LIST_ENTRIES. The count and the insert are one transaction.
     */
    add(serverId: string, list: ListName, name: string): { entry: ListEntry; added: boolean } {
      return db.transaction(() => {
        const existing = q.has.get(serverId, list, name);
        if (existing) return { entry: existing, added: false };
        const used = required(q.count.get(serverId, list)).n;
        if (used >= MAX_LIST_ENTRIES) {
          throw quotaExceeded('player_list_entries', MAX_LIST_ENTRIES, used, `A list holds at most ${MAX_LIST_ENTRIES} names.`);
        }
        const entry = { name, added_at: iso(clock.now()) };
        q.add.run(serverId, list, name, entry.added_at);
        events.raise('player_list.changed', { list, change: 'added', entry }, { serverId });
        return { entry, added: true };
      }).immediate();
    },
    /** True if the name was on the list (whatever its case). */
    remove(serverId: string, list: ListName, name: string): boolean {
      return db.transaction(() => {
        const entry = q.has.get(serverId, list, name);
        if (!entry || q.remove.run(serverId, list, name).changes === 0) return false;
        events.raise('player_list.changed', { list, change: 'removed', entry }, { serverId });
        return true;
      }).immediate();
    },
    enabled: (serverId: string, list: ListName): boolean => q.enabled.get(serverId, list)?.enabled === 1,
    setEnabled(serverId: string, list: ListName, on: boolean): void {
      db.transaction(() => {
        const was = q.enabled.get(serverId, list)?.enabled === 1;
        q.setEnabled.run(serverId, list, on ? 1 : 0);
        if (was !== on) events.raise('player_list.changed', { list, change: on ? 'enabled' : 'disabled', entry: null }, { serverId });
      }).immediate();
    },
  };
}

export type PlayerListsRepo = ReturnType<typeof createPlayerListsRepo>;
