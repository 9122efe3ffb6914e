import type { Db } from '../store/db';
import type { ErrorCode } from '../errors';
import { newId } from '../ids';
import type { ServerState } from './states';

/**
 * The runtime's reads and writes: its own tables (actions, crashes, runtime_processes) and the state columns of
 * `servers`. Private snake_case row types map to the exported domain types (STYLE.md, Actual's good half).
 */

export type ActionType = 'start' | 'stop' | 'restart' | 'kill';
export type ActionStatus = 'pending' | 'running' | 'succeeded' | 'failed';
export type DesiredState = 'running' | 'stopped';

export interface Action {
  id: string;
  server_id: string;
  user_id: string;
  type: ActionType;
  status: ActionStatus;
  error_code: ErrorCode | null;
  error_detail: string | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
}

export interface Crash {
  id: string;
  server_id: string;
  at: string;
  exit_code: number | null;
  signal: string | null;
  /** exited | memory_limit | start_timeout | port_in_use | spawn_failed | install_failed */
  reason: string;
  last_lines: string[];
}

/** The columns of a `servers` row the runtime needs. */
export interface ServerRecord {
  id: string;
  plan: string;
  software: string;
  game_version: string;
  state: ServerState;
  desired_state: DesiredState;
  host: string | null;
  port: number | null;
}

interface CrashRow extends Omit<Crash, 'last_lines'> {
  last_lines: string;
}

export interface ProcessRecord {
  server_id: string;
  pid: number;
  cmdline: string[];
}

export function createRuntimeStore(db: Db, now: () => number) {
  const iso = () => new Date(now()).toISOString();
  const serverCols = 'id, plan, software, game_version, state, desired_state, host, port';
  const q = {
    server: db.prepare(`SELECT ${serverCols} FROM servers WHERE id = ?`),
    servers: db.prepare(`SELECT ${serverCols} FROM servers ORDER BY id`),
    setState: db.prepare('UPDATE servers SET state = ?, updated_at = ? WHERE id = ?'),
    setDesired: db.prepare('UPDATE servers SET desired_state = ?, updated_at = ? WHERE id = ?'),
    insertAction: db.prepare(`INSERT INTO actions (id, server_id, user_id, type, status, created_at)
      VALUES (@id, @server_id, @user_id, @type, @status, @created_at)`),
    action: db.prepare('SELECT * FROM actions WHERE server_id = ? AND id = ?'),
    actionById: db.prepare('SELECT * FROM actions WHERE id = ?'),
    openActions: db.prepare(`SELECT * FROM actions WHERE server_id = ? AND status IN ('pending', 'running') ORDER BY id`),
    allOpenActions: db.prepare(`SELECT * FROM actions WHERE status IN ('pending', 'running') ORDER BY id`),
    startAction: db.prepare(`UPDATE actions SET status = 'running', started_at = ? WHERE id = ? AND status = 'pending'`),
    finishAction: db.prepare(`UPDATE actions SET status = ?, error_code = ?, error_detail = ?, completed_at = ?,
      started_at = COALESCE(started_at, ?) WHERE id = ? AND status IN ('pending', 'running')`),
    lastUserStart: db.prepare(`SELECT MAX(created_at) AS at FROM actions WHERE server_id = ? AND type IN ('start', 'restart')`),
    insertCrash: db.prepare(`INSERT INTO crashes (id, server_id, at, exit_code, signal, reason, last_lines)
      VALUES (@id, @server_id, @at, @exit_code, @signal, @reason, @last_lines)`),
    crashesSince: db.prepare('SELECT COUNT(*) AS n FROM crashes WHERE server_id = ? AND at > ?'),
    crashes: db.prepare('SELECT * FROM crashes WHERE server_id = ? ORDER BY at DESC, id DESC LIMIT ?'),
    recordProcess: db.prepare(`INSERT OR REPLACE INTO runtime_processes (server_id, pid, cmdline, started_at) VALUES (?, ?, ?, ?)`),
    forgetProcess: db.prepare('DELETE FROM runtime_processes WHERE server_id = ? AND pid = ?'),
    processes: db.prepare('SELECT server_id, pid, cmdline FROM runtime_processes'),
  };

  return {
    server: (id: string) => q.server.get(id) as ServerRecord | undefined,
    servers: () => q.servers.all() as ServerRecord[],
    setState: (id: string, state: ServerState) => void q.setState.run(state, iso(), id),
    setDesired: (id: string, desired: DesiredState) => void q.setDesired.run(desired, iso(), id),

    /** Inserts a pending action and sets desired_state in one transaction. */
    createAction(serverId: string, userId: string, type: ActionType, desired: DesiredState): Action {
      const row: Action = {
        id: newId('act', now()), server_id: serverId, user_id: userId, type, status: 'pending', error_code: null,
        error_detail: null, created_at: iso(), started_at: null, completed_at: null,
      };
      db.transaction(() => {
        q.insertAction.run(row);
        q.setDesired.run(desired, row.created_at, serverId);
      }).immediate();
      return row;
    },
    action: (serverId: string, id: string) => q.action.get(serverId, id) as Action | undefined,
    actionStatus: (id: string) => (q.actionById.get(id) as Action | undefined)?.status,
    openActions: (serverId: string) => q.openActions.all(serverId) as Action[],
    allOpenActions: () => q.allOpenActions.all() as Action[],
    markRunning: (id: string) => void q.startAction.run(iso(), id),
    /** Completes an action unless it already completed (a kill may have failed it first). Returns whether it did. */
    finishAction(id: string, failure: { code: ErrorCode; detail: string } | null): boolean {
      const t = iso();
      const status = failure ? 'failed' : 'succeeded';
      return q.finishAction.run(status, failure?.code ?? null, failure?.detail ?? null, t, t, id).changes === 1;
    },
    listActions(serverId: string, limit: number, startingAfter?: string): Action[] {
      const after = startingAfter ? 'AND id < ?' : '';
      const sql = `SELECT * FROM actions WHERE server_id = ? ${after} ORDER BY id DESC LIMIT ?`;
      const args = startingAfter ? [serverId, startingAfter, limit] : [serverId, limit];
      return db.prepare(sql).all(...args) as Action[];
    },

    recordCrash(c: Omit<Crash, 'id' | 'at'>): Crash {
      const crash: Crash = { id: newId('crs', now()), at: iso(), ...c };
      q.insertCrash.run({ ...crash, last_lines: JSON.stringify(crash.last_lines) });
      return crash;
    },
    /** Crashes in the window, not counting those before the user's last start/restart (a user act resets the count). */
    crashesInWindow(serverId: string, windowMs: number): number {
      const windowStart = new Date(now() - windowMs).toISOString();
      const userStart = (q.lastUserStart.get(serverId) as { at: string | null }).at;
      const since = userStart && userStart > windowStart ? userStart : windowStart;
      return (q.crashesSince.get(serverId, since) as { n: number }).n;
    },
    crashes(serverId: string, limit: number): Crash[] {
      return (q.crashes.all(serverId, limit) as CrashRow[]).map((r) => ({ ...r, last_lines: JSON.parse(r.last_lines) }));
    },

    recordProcess: (serverId: string, pid: number, cmdline: string[]) =>
      void q.recordProcess.run(serverId, pid, cmdline.join('\0'), iso()),
    forgetProcess: (serverId: string, pid: number) => void q.forgetProcess.run(serverId, pid),
    processes: () =>
      (q.processes.all() as { server_id: string; pid: number; cmdline: string }[]).map(
        (r): ProcessRecord => ({ server_id: r.server_id, pid: r.pid, cmdline: r.cmdline.split('\0') }),
      ),
  };
}

export type RuntimeStore = ReturnType<typeof createRuntimeStore>;
