import { parseSignal, type Signal } from './signals';

/**
 * How a software's world is backed up (its `backup` key; docs/architecture.md "Backups"). `paths` are the folders
 * of the server's files the archive holds. `consistency` is how the world is kept whole while a running game's is
 * archived:
 *   "backup": { "paths": ["world"], "consistency": "stop" }
 * stops the game with its stop command, archives, and starts it again (players are disconnected);
 *   "backup": { "paths": ["world"], "consistency": "live",
 *               "live": { "pause": "world-saving off {seconds}", "paused": { "ipc": "world_saving_off" },
 *                         "resume": "world-saving on" } }
 * sends `pause` to the running game's console, waits for `paused` (the game's sign that its world on disk is whole
 * and saving is held), archives, and sends `resume`; players stay connected. `{seconds}` in `pause` is how long the
 * game may hold saving at most (backups.ts LIVE_HOLD_S): should the service die meanwhile, the game resumes by itself.
 */
export type BackupDefinition =
  | { paths: string[]; consistency: 'stop' }
  | { paths: string[]; consistency: 'live'; live: LiveBackup };

export interface LiveBackup {
  pause: string;
  paused: Signal;
  resume: string;
}

export function parseBackupDefinition(raw: unknown, fail: (msg: string) => never): BackupDefinition | null {
  if (raw === undefined) return null;
  const r = raw as { paths?: unknown; consistency?: unknown; live?: unknown };
  const ok = Array.isArray(r.paths) && r.paths.length > 0 && r.paths.every((p) => typeof p === 'string' && /^[a-z0-9][a-z0-9._-]*$/i.test(p));
  if (!ok) fail('"backup.paths" must be a non-empty array of folder names in the server folder');
  const paths = r.paths as string[];
  if (r.consistency === 'stop') {
    if (r.live !== undefined) fail('"backup.live" is only for "consistency": "live"');
    return { paths, consistency: 'stop' };
  }
  if (r.consistency !== 'live') fail('"backup.consistency" must be "stop" or "live"');
  const live = (r.live ?? {}) as Record<string, unknown>;
  const command = (key: 'pause' | 'resume'): string => {
    const v = live[key];
    return typeof v === 'string' && v.trim() !== '' && !/[\r\n]/.test(v) ? v : fail(`"backup.live.${key}" must be one console line`);
  };
  return { paths, consistency: 'live', live: { pause: command('pause'), paused: parseSignal(live.paused, 'backup.live.paused', fail), resume: command('resume') } };
}
