import type { Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import type { EventsRepo } from './events-repo';
import type { components } from '../../generated/v1';

type Values = Record<string, unknown>;

/** What a `settings.changed` event says (openapi/v1.yaml SettingsChangedEvent): the names, and the values but secret ones. */
export type SettingsChange = components['schemas']['SettingsChangedEvent']['data'];

/** A server's settings row: what its owner chose, and what its game last got (null before its first launch). */
export interface StoredSettings {
  chosen: Values;
  launched: Values | null;
}

/**
 * The `server_settings` table (migration 014). The runtime's settings (src/runtime/services/server-settings.ts) are its
 * only writer; a server without a row has every setting at its default. A change of values raises `settings.changed` in
 * its transaction, as its actor (docs/architecture.md "Events and webhooks").
 */
export function createSettingsRepo(db: Db, clock: Clock, events: Pick<EventsRepo, 'raise'>) {
  const q = {
    get: db.prepare<unknown[], { chosen: string; launched: string | null }>('SELECT chosen, launched FROM server_settings WHERE server_id = ?'),
    choose: db.prepare(`INSERT INTO server_settings (server_id, chosen, updated_at) VALUES (?, ?, ?)
      ON CONFLICT (server_id) DO UPDATE SET chosen = excluded.chosen, updated_at = excluded.updated_at`),
    launched: db.prepare(`INSERT INTO server_settings (server_id, launched, updated_at) VALUES (?, ?, ?)
      ON CONFLICT (server_id) DO UPDATE SET launched = excluded.launched, updated_at = excluded.updated_at`),
  };
  return {
    get(serverId: string): StoredSettings {
      const row = q.get.get(serverId);
      return { chosen: row ? (JSON.parse(row.chosen) as Values) : {}, launched: row?.launched ? (JSON.parse(row.launched) as Values) : null };
    },
    /** Stores the chosen values; with `change` (a change of an existing server's values), raises settings.changed with them. */
    choose(serverId: string, chosen: Values, change: SettingsChange | null = null): void {
      db.transaction(() => {
        q.choose.run(serverId, JSON.stringify(chosen), iso(clock.now()));
        if (change) events.raise('settings.changed', change, { serverId });
      }).immediate();
    },
    recordLaunched: (serverId: string, values: Values): void => void q.launched.run(serverId, JSON.stringify(values), iso(clock.now())),
    /** Runs `fn` in one transaction (a savepoint inside another), so a create and its settings commit together. */
    atomically: <T>(fn: () => T): T => db.transaction(fn).immediate(),
  };
}

export type SettingsRepo = ReturnType<typeof createSettingsRepo>;
