import type { Action, ActionType, Crash } from '../runtime/runtime-store';
import type { ConsoleLine, ConsoleListener } from '../runtime/console-buffer';
import type { PlayersInfo } from '../runtime/probes';
import type { MetricsStore } from '../telemetry/metrics-store';
import type { Sampler } from '../telemetry/sampler';

/**
 * What the HTTP layer asks of the runtime (src/runtime/runtime.ts implements it; read its doc comments for each
 * method's contract). Kept as an interface so the handlers' dependencies are visible in one place.
 */
export interface ServerRuntime {
  /** Prepares a new server's files in the background; the server moves installing → stopped (or records why not). */
  install(serverId: string): Promise<void>;
  /** Stops the server's process if any and removes its files; resolves when both are done. */
  remove(serverId: string): Promise<void>;
  requestAction(serverId: string, userId: string, type: ActionType): Action;
  getAction(serverId: string, actionId: string): Action;
  listActions(serverId: string, opts: { limit?: number; startingAfter?: string }): Action[];
  crashes(serverId: string, limit?: number): Crash[];
  sendCommand(serverId: string, text: string): void;
  players(serverId: string): Promise<PlayersInfo>;
  console: {
    recent(serverId: string, limit?: number): ConsoleLine[];
    subscribe(serverId: string, fn: ConsoleListener, opts?: { afterSeq?: number }): () => void;
  };
}

/** What the HTTP layer reads of telemetry: the history store and the live feed of new samples. */
export interface Telemetry {
  store: Pick<MetricsStore, 'query' | 'after' | 'deleteServer'>;
  sampler: Pick<Sampler, 'subscribe'>;
}
