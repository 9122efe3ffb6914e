// Every node's Docker environment and volumes behind the one Environment and ServerStorage the runtime holds
// (environment.ts and storage.ts state the contracts; docs/architecture.md "Nodes and placement" draws it), and the
// copy of a server's volume from one node to another that a move makes (moves.ts).
import type { Logger } from '../../../log';
import type { Node, NodesRepo } from '../../../store/nodes-repo';
import type { Environment, LaunchSpec, LeftoverProcess } from '../environment';
import { FILE_METHODS, type ServerStorage } from '../storage';
import type { Engine } from './engine';
import { GAME_DIR } from './image';
import type { NodeVolumes } from './volume-storage';
import { volumeTransfer } from './volume-transfer';

/** One node's parts: its environment (containers), its volumes, and the engine both talk to. */
export interface NodeParts {
  environment: Environment;
  storage: NodeVolumes;
  engine: Engine;
}

export interface NodesEnvironmentOptions {
  nodes: Pick<NodesRepo, 'get' | 'list' | 'nodeOf' | 'serverIdsOn' | 'setReachable'>;
  /** One node's parts (docker-environment.ts and volume-storage.ts over createEngine(node.dockerHost)). */
  nodeParts(node: Pick<Node, 'name' | 'dockerHost'> & { tls?: boolean }): NodeParts;
  /** The engine of servers placed on no node (none, once nodes-repo.ts ensureDefault ran): DOCKER_HOST. */
  defaultDockerHost: string;
  /** How often each node's engine is asked whether it answers (NODE_CHECK_INTERVAL_S). */
  checkMs: number;
  log: Logger;
}

/** A server's files copied from one node to another (a move, moves.ts). */
export interface VolumeTransfer {
  /**
   * Makes a copy of the server's volume on node `to` from the one on `from` (a folder a previous release kept under
   * DATA_DIR moved into that one first), streamed from one engine to the other, and verifies it: the two volumes'
   * digests of every path, size, mode and content must be equal. Resolves with what it copied; rejects when either
   * engine fails or the copies differ. Only while no game of the server runs. What it made on `to` is left for the
   * caller to drop.
   */
  copy(serverId: string, from: string, to: string): Promise<{ files: number; bytes: number }>;
  /**
   * A live move's first pass, while the game runs: inside `hold` (its world saving paused, moves.ts), the source's
   * entries recorded (NodeVolumes.snapshot) as the whole volume is copied to `to` as `copy` does, unverified, and
   * written to the disk there as it lands (NodeVolumes.land), so that no write-back slows the stop and start after
   * (the last files while the game stops: catchUp waits for them). Its helpers, one per node (move-helpers.ts), stay
   * for catchUp. False, having done nothing, when `from` has no
   * volume of the server yet (its files still in a previous release's folder).
   */
  firstPass(serverId: string, from: string, to: string, hold: (pass: () => Promise<void>) => Promise<void>): Promise<boolean>;
  /**
   * Once the game stopped: what changed on `from` since firstPass's record copied to `to`, the paths gone removed there,
   * then the two volumes' listings (path, kind, size, mode, mtime) compared. Rejects as `copy` does; again whole after
   * an interruption (the record stays on `from` until the volume goes). `underWay` is told once both engines took a
   * new connection for the pass (an engine on its way down fails it first): the moment a move may start the game
   * ahead on `to` (moves.ts), the old one having stopped and its engine still there to have said so.
   */
  catchUp(serverId: string, from: string, to: string, underWay?: () => void): Promise<{ files: number; bytes: number; changed: number; changedBytes: number; removed: number }>;
  /** Removes the move's helpers (begun when catchUp ends, or now); before the old volume goes, and when a move fails. */
  release(serverId: string): Promise<void>;
  /**
   * Starts the server's game on node `to` ahead of its start there, held until that start (Environment.prestart),
   * while the last pass copies. Never rejects; drop() removes it with the volume should the move fail.
   */
  prestart(to: string, spec: LaunchSpec): Promise<void>;
  /** Removes the server's volume, and its container made ahead of a start, from the node. A missing one is a no-op. */
  drop(serverId: string, node: string): Promise<void>;
  /** False while the node does not answer (as of the last check). */
  reachable(node: string): boolean;
}

/** An engine that has not answered within this long has failed the check. */
const CHECK_TIMEOUT_MS = 3_000;
/** Failed checks in a row before a node's servers are reported unreachable: one lost answer is not an outage. */
const FAILURES = 2;

/**
 * Routes each call to the parts of the node the server is on (servers.node), made on first use from the `nodes`
 * row, so a node `gsh node add` made while the service runs takes servers at once. Also the nodes' health: each
 * check asks every engine for its version, in parallel and bounded by CHECK_TIMEOUT_MS, so one node that hangs
 * stalls nothing else; after FAILURES failed checks in a row the node's servers are reported unreachable (within
 * FAILURES × checkMs + CHECK_TIMEOUT_MS), and reachable again at its first answer. A server's files are in a volume on
 * its node (volume-storage.ts): a node shares nothing with this host but its engine's API.
 */
export function createNodesEnvironment(options: NodesEnvironmentOptions): { environment: Environment; storage: ServerStorage; transfer: VolumeTransfer } {
  const s: Shared = { options, made: new Map(), failures: new Map(), away: new Set(), listeners: [], timer: null, checking: null };
  const transfer = volumeTransfer({ named: (name) => named(s, name), reachable: (name) => !s.away.has(name) });
  return { environment: routedEnvironment(s), storage: routedStorage(s, transfer.write), transfer };
}

/** What the pieces below share: createNodesEnvironment makes it once and hands it to each. */
interface Shared {
  options: NodesEnvironmentOptions;
  /** Each node's parts, made on first use (ofNode). */
  made: Map<string, NodeParts>;
  /** Failed checks in a row, by node name. */
  failures: Map<string, number>;
  /** The nodes whose servers are reported unreachable. */
  away: Set<string>;
  /** Environment.onReachability's listeners. */
  listeners: ((serverIds: string[], reachable: boolean) => void)[];
  /** The checks' interval, from start() to close(). */
  timer: NodeJS.Timeout | null;
  /** The round of checks under way (checkAll). */
  checking: Promise<void> | null;
}

/** The node's parts; one per name and engine address (a node removed and added again gets new ones). */
function ofNode(s: Shared, node: Pick<Node, 'name' | 'dockerHost'> & { tls?: boolean }): NodeParts {
  const key = `${node.name}\n${node.dockerHost}\n${node.tls === true ? 'tls' : ''}`;
  let entry = s.made.get(key);
  if (!entry) s.made.set(key, (entry = s.options.nodeParts(node)));
  return entry;
}

function forServer(s: Shared, serverId: string): NodeParts {
  const name = s.options.nodes.nodeOf(serverId);
  const node = name ? s.options.nodes.get(name) : undefined;
  return ofNode(s, node ?? { name: '', dockerHost: s.options.defaultDockerHost });
}

function named(s: Shared, name: string): NodeParts {
  const node = s.options.nodes.get(name);
  if (!node) throw new Error(`there is no node ${name}`);
  return ofNode(s, node);
}

/**
 * With `first` (at boot, or after a spawn there failed), one failed check is enough: a node away since before
 * the service started is away, and so is one whose engine just failed a start.
 */
async function checkOne(s: Shared, node: Node, first: boolean): Promise<void> {
  const { nodes, log } = s.options;
  const { engine } = ofNode(s, node);
  let answered = true;
  try {
    await engine.json('GET', '/version', undefined, CHECK_TIMEOUT_MS);
  } catch {
    answered = false;
  }
  const failed = answered ? 0 : first ? FAILURES : (s.failures.get(node.name) ?? 0) + 1;
  s.failures.set(node.name, failed);
  if (failed >= FAILURES) {
    if (!s.away.has(node.name)) log.warn('a node stopped answering; its servers are unreachable', { node: node.name });
    s.away.add(node.name);
    nodes.setReachable(node.name, false);
    emit(s, nodes.serverIdsOn(node.name), false); // again at every check: servers that appeared meanwhile too
  } else if (answered && s.away.delete(node.name)) {
    log.info('a node answers again; its servers are reconciled', { node: node.name });
    nodes.setReachable(node.name, true);
    emit(s, nodes.serverIdsOn(node.name), true);
  }
}

function emit(s: Shared, serverIds: string[], reachable: boolean) {
  if (serverIds.length === 0) return;
  for (const fn of s.listeners) fn(serverIds, reachable);
}

/** Checks the server's node now, one failed answer being enough (as at boot). */
async function checkNodeOf(s: Shared, serverId: string): Promise<void> {
  const name = s.options.nodes.nodeOf(serverId);
  const node = name ? s.options.nodes.get(name) : undefined;
  if (node && !s.away.has(node.name)) await checkOne(s, node, true);
}

/** One round over every node, in parallel; a round still under way is not started twice. */
function checkAll(s: Shared, first = false): Promise<void> {
  s.checking ??= Promise.all(s.options.nodes.list().map((node) => checkOne(s, node, first))).then(
    () => void (s.checking = null),
    (err: unknown) => {
      s.checking = null;
      s.options.log.error('node check failed', { error: String(err) });
    },
  );
  return s.checking;
}

/** The Environment: each server's calls to its node's environment, and the nodes' health checks from start() to close(). */
function routedEnvironment(s: Shared): Environment {
  const { nodes } = s.options;
  return {
    gameBindHost: '0.0.0.0', // every node's environment is a container's (docker-environment.ts)
    async start() {
      await checkAll(s, true); // the first round now, so a node already away is known before the first launch
      // A node away is not waited for: its leftovers are replaced by the next spawn there (docker-environment.ts).
      await Promise.all(nodes.list().filter((n) => !s.away.has(n.name)).map((n) => ofNode(s, n).environment.start()));
      s.timer = setInterval(() => void checkAll(s), s.options.checkMs);
    },
    async close() {
      if (s.timer) clearInterval(s.timer);
      await s.checking;
      await Promise.all([...s.made.values()].map((e) => e.environment.close()));
    },
    // Every node's environment, each removing the server's next container if it made one (docker-environment.ts).
    async uninstall(serverId) {
      await Promise.all([...s.made.values()].map((e) => e.environment.uninstall(serverId)));
    },
    isPortFree: (address, serverId) => forServer(s, serverId).environment.isPortFree(address, serverId),
    async spawn(spec) {
      try {
        return await forServer(s, spec.serverId).environment.spawn(spec);
      } catch (err) {
        await checkNodeOf(s, spec.serverId); // an engine gone away is told now, not as a string of failed starts
        throw err;
      }
    },
    killLeftover: (leftover: LeftoverProcess) => forServer(s, leftover.serverId).environment.killLeftover(leftover),
    adopt: async (leftover: LeftoverProcess) => (await forServer(s, leftover.serverId).environment.adopt?.(leftover)) ?? null,
    onReachability: (fn) => void s.listeners.push(fn),
    reachable(serverId) {
      const name = nodes.nodeOf(serverId);
      return !(name && s.away.has(name));
    },
  };
}

/** The ServerStorage: each server's calls to the volumes of its node. */
function routedStorage(s: Shared, moved: ReturnType<typeof volumeTransfer>['write']): ServerStorage {
  return {
    async start() {
      // Each volume's half-done restore is put right by its next operation (volume-storage.ts).
    },
    gameDir: () => GAME_DIR,
    async write(serverId, subdirs, files) {
      // A server just moved writes through its move's helper on the new node (volume-transfer.ts).
      const node = s.options.nodes.nodeOf(serverId);
      if (node && (await moved(serverId, node, subdirs, files))) return;
      await forServer(s, serverId).storage.write(serverId, subdirs, files);
    },
    remove: (serverId) => forServer(s, serverId).storage.remove(serverId),
    usage: (serverId, stop) => forServer(s, serverId).storage.usage(serverId, stop),
    exportTar: (serverId, paths) => forServer(s, serverId).storage.exportTar(serverId, paths),
    importArchive: (serverId, paths, archive, beforeSwap) => forServer(s, serverId).storage.importArchive(serverId, paths, archive, beforeSwap),
    // A customer's files (storage.ts): each call to the server's node, as it is.
    ...(Object.fromEntries(FILE_METHODS.map((m) => [m, (serverId: string, ...rest: unknown[]) =>
      (forServer(s, serverId).storage[m] as (...a: unknown[]) => unknown)(serverId, ...rest)])) as Pick<ServerStorage, (typeof FILE_METHODS)[number]>),
  };
}
