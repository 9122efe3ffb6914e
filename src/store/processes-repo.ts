import type { Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';

/** A game process a service life started and has not yet seen exit (a `runtime_processes` row). */
export interface ProcessRecord {
  serverId: string;
  pid: number;
  /** The argv as /proc/<pid>/cmdline shows it; compared before any kill so a reused pid is never touched. */
  cmdline: string[];
}

/**
 * The `runtime_processes` table: which game process each server has right now, so a service restarted after
 * `kill -9` can find what its previous life left running (see Environment.killLeftover).
 */
export function createProcessesRepo(db: Db, clock: Clock) {
  const q = {
    record: db.prepare('INSERT OR REPLACE INTO runtime_processes (server_id, pid, cmdline, started_at) VALUES (?, ?, ?, ?)'),
    forget: db.prepare('DELETE FROM runtime_processes WHERE server_id = ? AND pid = ?'),
    all: db.prepare<unknown[], { server_id: string; pid: number; cmdline: string }>('SELECT server_id, pid, cmdline FROM runtime_processes'),
  };
  return {
    record: (p: ProcessRecord): void => void q.record.run(p.serverId, p.pid, p.cmdline.join('\0'), iso(clock.now())),
    forget: (serverId: string, pid: number): void => void q.forget.run(serverId, pid),
    all: (): ProcessRecord[] =>
      q.all.all().map((r) => ({
        serverId: r.server_id,
        pid: r.pid,
        cmdline: r.cmdline.split('\0'),
      })),
  };
}

export type ProcessesRepo = ReturnType<typeof createProcessesRepo>;
