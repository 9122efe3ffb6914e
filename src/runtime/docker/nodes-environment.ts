// Every node's Docker environment behind the one Environment the runtime holds (environment.ts states the
// contract; docs/architecture.md "Nodes and placement" draws it).
import type { Logger } from '../../log';
import type { Node, NodesRepo } from '../../store/nodes-repo';
import type { Environment, LeftoverProcess } from '../environment';
import type { Engine } from './engine';

export interface NodesEnvironmentOptions {
  nodes: Pick<NodesRepo, 'get' | 'list' | 'nodeOf' | 'serverIdsOn' | 'setReachable'>;
  /** One node's environment and its engine (docker-environment.ts over createEngine(node.dockerHost)). */
  nodeEnvironment(node: Pick<Node, 'name' | 'dockerHost'>): { environment: Environment; engine: Engine };
  /** The engine of servers placed on no node (none, once nodes-repo.ts ensureDefault ran): DOCKER_HOST. */
  defaultDockerHost: string;
  /** How often each node's engine is asked whether it answers (NODE_CHECK_INTERVAL_S). */
  checkMs: number;
  log: Logger;
}

/** An engine that has not answered within this long has failed the check. */
const CHECK_TIMEOUT_MS = 3_000;
/** Failed checks in a row before a node's servers are reported unreachable: one lost answer is not an outage. */
const FAILURES = 2;

/**
 * Routes each call to the environment of the node the server is on (servers.node), made on first use from the
 * `nodes` row, so a node `gsh node add` made while the service runs takes servers at once. Also the nodes'
 * health: each check asks every engine for its version, in parallel and bounded by CHECK_TIMEOUT_MS, so one
 * node that hangs stalls nothing else; after FAILURES failed checks in a row the node's servers are reported
 * unreachable (within FAILURES × checkMs + CHECK_TIMEOUT_MS), and reachable again at its first answer.
 *
 * The server folders stay on this host's DATA_DIR, bind-mounted into the containers: a node on another machine
 * must see DATA_DIR and the service's folder at the same paths (README "Nodes").
 */
export function createNodesEnvironment(options: NodesEnvironmentOptions): Environment {
  const { nodes, log } = options;
  const made = new Map<string, { environment: Environment; engine: Engine }>();
  const failures = new Map<string, number>();
  const away = new Set<string>();
  const listeners: ((serverIds: string[], reachable: boolean) => void)[] = [];
  let timer: NodeJS.Timeout | null = null;
  let checking: Promise<void> | null = null;

  /** The node's environment; one per name and engine address (a node removed and added again gets a new one). */
  function ofNode(node: Pick<Node, 'name' | 'dockerHost'>) {
    const key = `${node.name}\n${node.dockerHost}`;
    let entry = made.get(key);
    if (!entry) made.set(key, (entry = options.nodeEnvironment(node)));
    return entry;
  }

  function forServer(serverId: string): Environment {
    const name = nodes.nodeOf(serverId);
    const node = name ? nodes.get(name) : undefined;
    return ofNode(node ?? { name: '', dockerHost: options.defaultDockerHost }).environment;
  }

  /**
   * With `first` (at boot, or after a spawn there failed), one failed check is enough: a node away since before
   * the service started is away, and so is one whose engine just failed a start.
   */
  async function checkOne(node: Node, first: boolean): Promise<void> {
    const { engine } = ofNode(node);
    let answered = true;
    try {
      await engine.json('GET', '/version', undefined, CHECK_TIMEOUT_MS);
    } catch {
      answered = false;
    }
    const failed = answered ? 0 : first ? FAILURES : (failures.get(node.name) ?? 0) + 1;
    failures.set(node.name, failed);
    if (failed >= FAILURES) {
      if (!away.has(node.name)) log.warn('a node stopped answering; its servers are unreachable', { node: node.name });
      away.add(node.name);
      nodes.setReachable(node.name, false);
      emit(nodes.serverIdsOn(node.name), false); // again at every check: servers that appeared meanwhile too
    } else if (answered && away.delete(node.name)) {
      log.info('a node answers again; its servers are reconciled', { node: node.name });
      nodes.setReachable(node.name, true);
      emit(nodes.serverIdsOn(node.name), true);
    }
  }

  function emit(serverIds: string[], reachable: boolean) {
    if (serverIds.length === 0) return;
    for (const fn of listeners) fn(serverIds, reachable);
  }

  /** Checks the server's node now, one failed answer being enough (as at boot). */
  async function checkNodeOf(serverId: string): Promise<void> {
    const name = nodes.nodeOf(serverId);
    const node = name ? nodes.get(name) : undefined;
    if (node && !away.has(node.name)) await checkOne(node, true);
  }

  /** One round over every node, in parallel; a round still under way is not started twice. */
  function checkAll(first = false): Promise<void> {
    checking ??= Promise.all(nodes.list().map((node) => checkOne(node, first))).then(
      () => void (checking = null),
      (err) => {
        checking = null;
        log.error('node check failed', { error: String(err) });
      },
    );
    return checking;
  }

  return {
    gameBindHost: '0.0.0.0', // every node's environment is a container's (docker-environment.ts)
    async start() {
      await checkAll(true); // the first round now, so a node already away is known before the first launch
      // A node away is not waited for: its leftovers are replaced by the next spawn there (docker-environment.ts).
      await Promise.all(nodes.list().filter((n) => !away.has(n.name)).map((n) => ofNode(n).environment.start()));
      timer = setInterval(() => void checkAll(), options.checkMs);
    },
    async close() {
      if (timer) clearInterval(timer);
      await checking;
      await Promise.all([...made.values()].map((e) => e.environment.close()));
    },
    // The folder is on this host whichever node runs the server: any node's environment installs it alike.
    install: (dir, subdirs, files) => forServer('').install(dir, subdirs, files),
    // Every node's environment, each removing the server's next container if it made one (docker-environment.ts).
    async uninstall(dir) {
      forServer(''); // at least one, which deletes the folder
      await Promise.all([...made.values()].map((e) => e.environment.uninstall(dir)));
    },
    isPortFree: (address, serverId) => forServer(serverId).isPortFree(address, serverId),
    async spawn(spec) {
      try {
        return await forServer(spec.serverId).spawn(spec);
      } catch (err) {
        await checkNodeOf(spec.serverId); // an engine gone away is told now, not as a string of failed starts
        throw err;
      }
    },
    killLeftover: (leftover: LeftoverProcess) => forServer(leftover.serverId).killLeftover(leftover),
    adopt: async (leftover: LeftoverProcess) => (await forServer(leftover.serverId).adopt?.(leftover)) ?? null,
    onReachability: (fn) => void listeners.push(fn),
    reachable(serverId) {
      const name = nodes.nodeOf(serverId);
      return !(name && away.has(name));
    },
  };
}
