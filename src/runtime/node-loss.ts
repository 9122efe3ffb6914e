import type { Logger } from '../log';
import type { Environment } from './environment';
import type { Supervisors } from './supervisors';

export interface NodeLossDeps {
  supervisors: Pick<Supervisors, 'of'>;
  environment: Pick<Environment, 'adopt' | 'killLeftover'>;
  log: Logger;
  /** Tracks background work (Runtime.idle). */
  track(p: Promise<unknown>): void;
}

/**
 * What the runtime does when a node stops answering and when it answers again (Environment.onReachability;
 * docs/architecture.md "Nodes and placement"). Lost: the node's servers become `unreachable` (an installing or
 * deleting one keeps its state: both finish on their own), and a scheduled crash restart is cancelled; their
 * games are still followed, so an exit seen meanwhile is not taken for a crash (server-supervisor.ts onExit).
 * Back: a game still running there is let go and adopted again (its console attach broke with the engine), and
 * the server is `running`; one that is gone leaves the server `stopped`, which the reconcile loop starts again if
 * its desired state is `running`.
 */
export function createNodeLoss(deps: NodeLossDeps) {
  const { supervisors, environment, log } = deps;

  function lost(serverId: string): void {
    supervisors.of(serverId).nodeLost();
  }

  async function returned(serverId: string): Promise<void> {
    const slot = supervisors.of(serverId);
    if (slot.state !== 'unreachable') return;
    slot.console.push('system', 'the machine this server runs on answers again');
    const held = slot.detach();
    if (held) {
      const leftover = { serverId, ...held };
      const proc = await environment.adopt?.(leftover).catch((err: unknown) => {
        log.warn('could not adopt a game again after its node returned', { serverId, error: String(err) });
        return null;
      });
      if (proc && slot.state === 'unreachable') {
        slot.nodeReturned(proc);
        return;
      }
      await environment.killLeftover(leftover); // whatever of it is left on the node: the next start is clean
    }
    slot.nodeReturned(null);
  }

  /** Environment.onReachability's listener. A server deleted meanwhile (server_not_found) is skipped. */
  return (serverIds: string[], reachable: boolean): void => {
    for (const id of serverIds) {
      try {
        if (reachable) deps.track(returned(id));
        else lost(id);
      } catch (err) {
        log.warn('node reachability change not applied to a server', { serverId: id, error: String(err) });
      }
    }
  };
}
