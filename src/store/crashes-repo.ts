import { required, type Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { newId } from '../ids';
import type { components } from '../../generated/v1';
import type { StoreObserver } from './observer';
import type { EventsRepo } from './events-repo';

/** A crash as the API shows it (the spec's Crash schema). */
// An open enum in the answer (openapi/v1.yaml x-open-enum, for clients); the service's is the known set.
export type Crash = Omit<components['schemas']['Crash'], 'reason'> & { reason: CrashReason };
export type CrashReason = components['schemas']['CrashReason'];

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
    list: db.prepare<unknown[], CrashRow>('SELECT * FROM crashes WHERE server_id = ? ORDER BY at DESC, id DESC LIMIT ?'),
    countSince: db.prepare<unknown[], number>('SELECT COUNT(*) FROM crashes WHERE server_id = ? AND at > ?').pluck(),
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
    list: (serverId: string, limit: number): Crash[] => q.list.all(serverId, limit).map(toCrash),
    /** How many crashes this server had after `since` (RFC 3339). */
    countSince: (serverId: string, since: string): number => required(q.countSince.get(serverId, since)),
  };
}

export type CrashesRepo = ReturnType<typeof createCrashesRepo>;
