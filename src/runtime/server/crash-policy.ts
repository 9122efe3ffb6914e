import type { Logger } from '../../log';
import type { ActionsRepo } from '../../store/actions-repo';
import type { CrashesRepo, CrashReason } from '../../store/crashes-repo';
import type { ServersRepo } from '../../store/servers-repo';
import type { ExitInfo } from '../host/environment';
import type { RuntimeConfig } from './types';

export interface CrashPolicyDeps {
  crashes: CrashesRepo;
  actions: Pick<ActionsRepo, 'lastUserStart'>;
  servers: Pick<ServersRepo, 'find'>;
  config: Pick<RuntimeConfig, 'crashLoop' | 'backoffMs'>;
  now: () => number;
  log: Logger;
}

/**
 * The crash policy, in one place: every crash is recorded (the row GET …/crashes lists, with the last console
 * lines), and a crashed server that should run is restarted with exponential backoff unless it crashed more
 * than `maxRestarts` times within `windowMs`, counting only since the user's last start or restart (a user act
 * resets the count). Wings restarts unless the last crash was too recent; counting is kinder to a server that
 * crashes once a day and firmer with one that crashes every second.
 */
export function createCrashPolicy(deps: CrashPolicyDeps) {
  const { maxRestarts, windowMs } = deps.config.crashLoop;

  function crashesInWindow(serverId: string): number {
    const windowStart = new Date(deps.now() - windowMs).toISOString();
    const userStart = deps.actions.lastUserStart(serverId);
    return deps.crashes.countSince(serverId, userStart && userStart > windowStart ? userStart : windowStart);
  }

  return {
    /** Records a crash and logs it (a warning: the game died, not the service). */
    record(serverId: string, reason: CrashReason, exit: ExitInfo, lastLines: string[]): void {
      deps.crashes.record(serverId, { reason, exit_code: exit.code, signal: exit.signal, last_lines: lastLines });
      deps.log.warn('game server crashed', { serverId, reason, ...exit });
    },

    /**
     * After a crash: says on the server's console what happens next and calls `restart` after the backoff.
     * Returns the timer (so a user act can cancel it), or null when the server stays crashed.
     */
    scheduleRestart(serverId: string, say: (text: string) => void, restart: () => void): NodeJS.Timeout | null {
      if (deps.servers.find(serverId)?.desired_state !== 'running') return null;
      const crashes = crashesInWindow(serverId);
      if (crashes > maxRestarts) {
        say(`crashed ${crashes} times within ${windowMs} ms; staying crashed until a start action`);
        return null;
      }
      const delayMs = Math.min(deps.config.backoffMs * 2 ** Math.max(0, crashes - 1), windowMs);
      say(`restarting in ${delayMs} ms (crash ${crashes} of at most ${maxRestarts} in the window)`);
      return setTimeout(restart, delayMs);
    },
  };
}

export type CrashPolicy = ReturnType<typeof createCrashPolicy>;
