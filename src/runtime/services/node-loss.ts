import type { Logger } from '../../log';
import { nodeLost, nodeReturned } from '../server/commands';
import type { Doors } from '../server/doors';
import type { Environment } from '../host/environment';

export interface NodeLossDeps {
  doors: Pick<Doors, 'of'>;
  environment: Pick<Environment, 'adopt' | 'killLeftover'>;
  log: Logger;
}

/**
 * What the runtime does when a node stops answering and when it answers again (Environment.onReachability;
 * docs/architecture.md "Nodes and placement"), as commands on each server's door (commands.ts nodeLost,
 * nodeReturned). Lost: the node's servers become `unreachable` at once (an installing or deleting one keeps its
 * state: both finish on their own), and a scheduled crash restart is cancelled; their games are still followed, so
 * an exit seen meanwhile is not taken for a crash (server-supervisor.ts onExit). Back, in its turn after what the
 * door holds: a game still running there is adopted again and the server is `running`; one that is gone leaves it
 * `stopped`, which the reconcile loop starts again if its desired state is `running`.
 */
export function createNodeLoss(deps: NodeLossDeps) {
  const { doors, log } = deps;
  const returned = nodeReturned(deps.environment, log);

  /** Environment.onReachability's listener. A server deleted meanwhile (server_not_found) is skipped. */
  return (serverIds: string[], reachable: boolean): void => {
    for (const id of serverIds) {
      try {
        void doors.of(id).submit(reachable ? returned : nodeLost);
      } catch (err) {
        log.warn('node reachability change not applied to a server', { serverId: id, error: String(err) });
      }
    }
  };
}
