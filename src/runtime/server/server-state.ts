import type { ServersRepo } from '../../store/servers-repo';
import { serverFolder } from '../host/local-storage';
import { serverConsole, type ConsoleBuffer } from './console-buffer';
import { checkTransition, type ServerState, type TransitionEvent } from './states';
import type { StateChange } from './types';

export interface ServerStateDeps {
  servers: Pick<ServersRepo, 'setState' | 'markDeleting'>;
  config: { dataDir: string };
  now: () => number;
  emitState: (e: StateChange) => void;
}

/**
 * A server's observed state and its one writer (servers.state, through ServersRepo.setState), with the console its
 * changes are told on; the transitions that involve no game process live here too (a reset at boot, the start of a
 * removal). The supervisor (server-supervisor.ts) extends it with the process; nothing outside the two changes the
 * state, and only through the transition table (states.ts).
 */
export class ServerStateMachine {
  readonly console: ConsoleBuffer;
  readonly dir: string;
  protected current: ServerState;

  /** `console`: the one this life already has for the server (doors.ts keeps it while the server has no door). */
  constructor(readonly id: string, initial: ServerState, private readonly stateDeps: ServerStateDeps, console?: ConsoleBuffer) {
    this.current = initial;
    this.dir = serverFolder(stateDeps.config.dataDir, id);
    this.console = console ?? serverConsole(this.dir, stateDeps.config.dataDir, stateDeps.now);
  }

  get state(): ServerState {
    return this.current;
  }

  /**
   * Publishes only real changes. A transition the table does not hold throws IllegalTransition (states.ts) and
   * changes nothing. `deleting` is terminal: what work still under way reports after a removal began is dropped,
   * as the removal owns the server from then on.
   */
  protected setState(to: ServerState, on: TransitionEvent): void {
    const previous = this.current;
    if (previous === to || previous === 'deleting') return;
    this.current = checkTransition(previous, to, on);
    // `deleting` is written with desired state `stopped`, in one statement: the removal began (lifecycle.ts).
    if (to === 'deleting') this.stateDeps.servers.markDeleting(this.id);
    else this.stateDeps.servers.setState(this.id, to);
    this.console.push('system', `state ${previous} → ${to} (${on})`);
    this.stateDeps.emitState({ serverId: this.id, state: to, previous });
  }

  /** Boot: a previous life left the server `starting`, `running`, `stopping` or `unreachable`, and no game is left. */
  resetAtBoot(): void {
    this.setState('stopped', 'service_boot');
  }

  /** Boot: the game a previous life left was adopted; a server left `unreachable` is `running` again. */
  adoptedAtBoot(): void {
    if (this.current === 'unreachable') this.setState('running', 'node_returned');
  }
}
