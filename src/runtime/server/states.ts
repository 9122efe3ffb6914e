import type { components } from '../../../generated/v1';

/**
 * The server state machine, as data. The OpenAPI spec carries the same table; test/runtime/states.test.ts pins
 * it. `state` is what the runtime observes; `desired_state` (running|stopped) is what the user last asked for.
 *
 * Unlike Wings (offline → starting → running → stopping → offline), a crash is a state of its own, so a client
 * can tell "stopped because asked" from "stopped because it died", and `starting → running` happens only on the
 * game's real ready signal (IPC `ready` or the console regex of its software definition), never on a timer.
 */
export type ServerState = components['schemas']['ServerState'];

/** Every state, in the spec's order. The record makes the compiler insist on each state the spec lists. */
const everyState: Record<ServerState, true> = {
  installing: true, stopped: true, starting: true, running: true, stopping: true, crashed: true, deleting: true,
  unreachable: true,
};
export const serverStates = Object.keys(everyState) as ServerState[];

/** What caused a transition; the spec documents each. */
export type TransitionEvent =
  | 'install_succeeded' // the server folder and settings were written
  | 'install_failed' // they could not be (recorded as a crash with reason install_failed)
  | 'start' // a start or restart action, or the reconcile loop, launches the process
  | 'auto_restart' // the crash policy restarts a crashed server after its backoff
  | 'ready' // the game said it is ready (IPC message or console regex)
  | 'start_failed' // the process could not be launched, exited, or was not ready in time (recorded as a crash)
  | 'stop' // a stop, restart or kill action, or the reconcile loop, asks the process to end
  | 'exited' // the process ended
  | 'crash' // the process ended or was killed (memory limit) without anyone asking
  | 'cleared' // a stop or kill action on a crashed server acknowledges it: the server is stopped
  | 'service_boot' // the service restarted: leftovers were killed, transient states reset
  | 'node_lost' // the node the server runs on stopped answering (docker/nodes-environment.ts)
  | 'node_returned' // it answers again: the game was adopted again (running) or is gone (stopped)
  | 'remove'; // the server is being deleted; terminal

export interface Transition {
  from: ServerState;
  to: ServerState;
  on: TransitionEvent;
}

const live: ServerState[] = ['starting', 'running', 'stopping'];
const placed: ServerState[] = ['stopped', 'starting', 'running', 'stopping', 'crashed'];
const removable: ServerState[] = ['installing', ...placed, 'unreachable'];

export const transitions: readonly Transition[] = [
  { from: 'installing', to: 'stopped', on: 'install_succeeded' },
  { from: 'installing', to: 'crashed', on: 'install_failed' },
  { from: 'stopped', to: 'starting', on: 'start' },
  { from: 'crashed', to: 'starting', on: 'start' },
  { from: 'crashed', to: 'starting', on: 'auto_restart' },
  { from: 'starting', to: 'running', on: 'ready' },
  { from: 'starting', to: 'crashed', on: 'start_failed' },
  { from: 'starting', to: 'stopping', on: 'stop' },
  { from: 'running', to: 'stopping', on: 'stop' },
  { from: 'running', to: 'crashed', on: 'crash' },
  { from: 'stopping', to: 'stopped', on: 'exited' },
  { from: 'crashed', to: 'stopped', on: 'cleared' },
  ...placed.map((from): Transition => ({ from, to: 'unreachable', on: 'node_lost' })),
  { from: 'unreachable', to: 'running', on: 'node_returned' },
  { from: 'unreachable', to: 'stopped', on: 'node_returned' },
  ...[...live, 'unreachable' as const].map((from): Transition => ({ from, to: 'stopped', on: 'service_boot' })),
  ...removable.map((from): Transition => ({ from, to: 'deleting', on: 'remove' })),
];

/** True when the table allows `from → to` (on `on`, when given). Staying in the same state is not a transition. */
export function canTransition(from: ServerState, to: ServerState, on?: TransitionEvent): boolean {
  return transitions.some((t) => t.from === from && t.to === to && (on === undefined || t.on === on));
}

/** A transition the table does not hold was asked for: a bug in the caller, never applied. */
export class IllegalTransition extends Error {
  constructor(readonly from: ServerState, readonly to: ServerState, readonly on: TransitionEvent) {
    super(`state transition ${from} → ${to} on ${on} is not in the table (src/runtime/server/states.ts)`);
    this.name = 'IllegalTransition';
  }
}

/**
 * The one check of a transition (the owner's setState calls it): returns `to` when the table holds `from → to` on
 * `on`, and throws IllegalTransition otherwise, so a wrong transition fails the test or the command that made it
 * instead of being recorded.
 */
export function checkTransition(from: ServerState, to: ServerState, on: TransitionEvent): ServerState {
  if (!canTransition(from, to, on)) throw new IllegalTransition(from, to, on);
  return to;
}
