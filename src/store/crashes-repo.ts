import type { Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { newId } from '../ids';
import type { components } from '../../generated/v1';
import type { StoreObserver } from './observer';
import type { EventsRepo } from './events-repo';

/** A crash as the API shows it (the spec's Crash schema). */
export type Crash = components['schemas']['Crash'];
export type CrashReason = Crash['reason'];

interface CrashRow {
  id: string;
  server_id: string;
  at: string;
  exit_code: number | null;
  signal: string | null;
  reason: CrashReason;
  /** JSON array of strings. */
  last_lines: string;
}

function toCrash(row: CrashRow): Crash {
  return {
    id: row.id,
    at: row.at,
    exit_code: row.exit_code,
    signal: row.signal,
    reason: row.reason,
    last_lines: JSON.parse(row.last_lines) as string[],
  };
}

/** The `crashes` table: exits nobody asked for, with the last console lines so the reason is visible. */
export function createCrashesRepo(
  db: Db,
  clock: Clock,
  events: Pick<EventsRepo, 'raise'>,
  observer: StoreObserver = {},
  /** Crash rules trigger in the crash's own transaction (AlertsRepo.crashed). */
  alerts?: { crashed(serverId: string, reason: string): void },
) {
  const q = {
    insert: db.prepare(`INSERT INTO crashes (id, server_id, at, exit_code, signal, reason, last_lines)
      VALUES (@id, @server_id, @at, @exit_code, @signal, @reason, @last_lines)`),
    list: db.prepare('SELECT * FROM crashes WHERE server_id = ? ORDER BY at DESC, id DESC LIMIT ?'),
    countSince: db.prepare('SELECT COUNT(*) FROM crashes WHERE server_id = ? AND at > ?').pluck(),
  };

  return {
    /** Records a crash with its server.crashed event (and its crash rules' alert.triggered), in one transaction. */
    record(serverId: string, crash: Omit<Crash, 'id' | 'at'>): Crash {
      const row: CrashRow = {
        id: newId('crs', clock.now()),
        server_id: serverId,
        at: iso(clock.now()),
        ...crash,
        last_lines: JSON.stringify(crash.last_lines),
      };
      const recorded = db.transaction(() => {
        q.insert.run(row);
        events.raise('server.crashed', { crash: toCrash(row) }, { serverId });
        alerts?.crashed(serverId, crash.reason);
        return toCrash(row);
      })();
      observer.crashRecorded?.(crash.reason);
      return recorded;
    },
    /** Newest first. */
    list: (serverId: string, limit: number): Crash[] => (q.list.all(serverId, limit) as CrashRow[]).map(toCrash),
    /** How many crashes this server had after `since` (RFC 3339). */
    countSince: (serverId: string, since: string): number => q.countSince.get(serverId, since) as number,
  };
}

export type CrashesRepo = ReturnType<typeof createCrashesRepo>;
