// Idle stop (openapi/v1.yaml IdleStopMinutes; docs/architecture.md "Idle stop"): a running server with no player
// online for its `idle_stop_minutes` is stopped by a stop action whose reason is `idle`.
import { AppError } from '../../errors';
import type { Logger } from '../../log';
import type { ActionReason, ActionType } from '../../store/actions-repo';
import type { ServersRepo } from '../../store/servers-repo';

/** What the idle stop reads of a telemetry sample (src/telemetry/types.ts Sample). */
export interface IdleSample {
  server_id: string;
  /** RFC 3339, the sampler's clock. */
  at: string;
  players_online: number;
}

export interface IdleStopDeps {
  /** Every stored sample as it is stored (the sampler's subscribe); returns the unsubscribe. */
  subscribe(listener: (sample: IdleSample) => void): () => void;
  servers: Pick<ServersRepo, 'idleStopOf'>;
  requestAction(serverId: string, userId: string, type: ActionType, backupId?: string, reason?: ActionReason): unknown;
  log: Logger;
  /** How long a minute of `idle_stop_minutes` is: 60,000 ms, shortened by tests only. */
  minuteMs: number;
}

/**
 * Counts each running server's time without a player from the samples as they arrive (no polling of its own):
 * the count starts at the first sample with nobody online (after a start, or after the last player left) and ends
 * at any sample with a player, or when the server is not running. When it reaches the server's minutes, one stop
 * action is asked for as the server's owner, with reason `idle`; an action already open (action_conflict) or a
 * server going away leaves it to the next sample. The count lives in memory: a service restart starts it again,
 * which can only stop a server later, never earlier.
 */
export function createIdleStop(deps: IdleStopDeps) {
  const idleSince = new Map<string, number>();
  let unsubscribe: (() => void) | null = null;

  function onSample(sample: IdleSample): void {
    const id = sample.server_id;
    const server = deps.servers.idleStopOf(id);
    if (!server || server.minutes === null || server.state !== 'running' || sample.players_online > 0) {
      idleSince.delete(id);
      return;
    }
    const at = Date.parse(sample.at);
    const since = idleSince.get(id);
    if (since === undefined) {
      idleSince.set(id, at);
      return;
    }
    if (at - since < server.minutes * deps.minuteMs) return;
    try {
      deps.requestAction(id, server.userId, 'stop', undefined, 'idle');
      idleSince.delete(id);
      deps.log.info('idle stop: no player for the server\'s idle_stop_minutes', { server_id: id, minutes: server.minutes });
    } catch (err) {
      if (!(err instanceof AppError)) deps.log.error('idle stop failed; tried again at the next sample', { server_id: id, error: String(err) });
    }
  }

  return {
    start(): void {
      unsubscribe ??= deps.subscribe(onSample);
    },
    stop(): void {
      unsubscribe?.();
      unsubscribe = null;
      idleSince.clear();
    },
  };
}

export type IdleStop = ReturnType<typeof createIdleStop>;
