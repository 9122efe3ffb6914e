import type { Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';

type Values = Record<string, unknown>;

/** A server's settings row: what its owner chose, and what its game last got (null before its first launch). */
export interface StoredSettings {
  chosen: Values;
  launched: Values | null;
}

/**
 * The `server_settings` table (migration 014). The runtime's settings (src/runtime/services/server-settings.ts) are its
 * only writer; a server without a row has every setting at its default.
 */
export function createSettingsRepo(db: Db, clock: Clock) {
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
    choose: (serverId: string, chosen: Values): void => void q.choose.run(serverId, JSON.stringify(chosen), iso(clock.now())),
    recordLaunched: (serverId: string, values: Values): void => void q.launched.run(serverId, JSON.stringify(values), iso(clock.now())),
    /** Runs `fn` in one transaction (a savepoint inside another), so a create and its settings commit together. */
    atomically: <T>(fn: () => T): T => db.transaction(fn).immediate(),
  };
}

export type SettingsRepo = ReturnType<typeof createSettingsRepo>;
