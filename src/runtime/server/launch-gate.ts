// The one launch gate (docs/architecture.md "The code, file by file"): whether a server may be acted on now, asked
// by admission (services/power.ts) and by the launch itself (server-supervisor.ts), so the two refuse alike.
import type { Plan } from '../../catalog/plans';
import type { Failure } from '../../store/actions-repo';
import type { Server } from '../../store/servers-repo';
import { diskOverPlan } from '../host/disk-usage';
import type { Environment } from '../host/environment';

/** A refusal of the launch gate: a failure, with the server's state when it is the state that refuses. */
export type Refusal = Failure & { state?: 'deleting' | 'unreachable' };

/**
 * The one launch gate (docs/architecture.md "A server's life"): why the server may not be acted on now, or null.
 * Admission (power.ts, when an action is asked for) and the launch itself (the supervisor, when the start's turn
 * comes) both ask it, so the two refuse alike. In this order: the service is shutting down (service_unavailable);
 * the server is being deleted, or its node does not answer (invalid_state, with that state); and for a launch
 * (`launching`: the server's row, read once by the caller), its files are over the plan's disk (disk_quota_exceeded).
 */
export function launchGate(
  id: string,
  state: string,
  deps: { isClosing(): boolean; plans: readonly Plan[]; environment: Pick<Environment, 'reachable'> },
  launching: { server: Server | undefined } | null,
): Refusal | null {
  if (deps.isClosing()) return { code: 'service_unavailable', detail: 'The service is shutting down; try again shortly.' };
  if (state === 'deleting') return { code: 'invalid_state', detail: 'The server is being deleted.', state: 'deleting' };
  if (state === 'unreachable' || deps.environment.reachable?.(id) === false) return { code: 'invalid_state', detail: UNREACHABLE, state: 'unreachable' };
  return launching && diskOverPlan(launching.server, deps.plans);
}

export const UNREACHABLE = 'The machine this server runs on is not answering; try again once it is back.';
