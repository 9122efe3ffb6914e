import type { Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { capacityExhausted, portsIn, type Placer } from './placement';
import type { ServerWrites } from './server-writes';

/** A Docker engine game servers run on (docs/architecture.md "Nodes and placement"); operators only, never tenants. */
export interface Node {
  name: string;
  /** The engine's address, as DOCKER_HOST takes it: unix:///path or tcp://host:port. */
  dockerHost: string;
  /** The host players reach this node's games at (a server's `address.host`). */
  publicHost: string;
  /** Plan memory the node's servers may take together: placement never goes past it. */
  memoryMb: number;
  /** Inclusive game port range of the node. */
  ports: [number, number];
  /** A drained node takes no new server; those on it stay. */
  draining: boolean;
  /** Since when its engine has not answered the service's checks; null while it answers. */
  unreachableSince: string | null;
  /** Reached over mutual TLS with the material in DATA_DIR/nodes/<name>/ (node-certs.ts; migration 039). */
  tls: boolean;
  /** When the operator said it is gone for good (`gsh node lose`, migration 041): it takes no server again. */
  lostAt: string | null;
  createdAt: string;
}

/** What a node's servers take: how many, their plans' memory, their ports. */
export interface NodeUse {
  servers: number;
  memoryMb: number;
}

interface NodeRow {
  name: string;
  docker_host: string;
  public_host: string;
  memory_mb: number;
  port_low: number;
  port_high: number;
  draining: number;
  unreachable_since: string | null;
  tls: number;
  lost_at: string | null;
  created_at: string;
}

const toNode = (r: NodeRow): Node => ({
  name: r.name,
  dockerHost: r.docker_host,
  publicHost: r.public_host,
  memoryMb: r.memory_mb,
  ports: [r.port_low, r.port_high],
  draining: r.draining === 1,
  unreachableSince: r.unreachable_since,
  tls: r.tls === 1,
  lostAt: r.lost_at,
  createdAt: r.created_at,
});

/** The node every server of RUNTIME=docker is on while the operator has added none (README "Nodes"). */
export const DEFAULT_NODE = 'local';

export type NewNode = Omit<Node, 'draining' | 'unreachableSince' | 'createdAt' | 'tls' | 'lostAt'> & { tls?: boolean };

type Statements = ReturnType<typeof statements>;
type NodeReads = ReturnType<typeof nodeReads>;

/** The repository's statements, prepared once (docs/conventions.md "Code layout"). */
function statements(db: Db) {
  return {
    all: db.prepare<unknown[], NodeRow>('SELECT * FROM nodes ORDER BY name'),
    one: db.prepare<unknown[], NodeRow>('SELECT * FROM nodes WHERE name = ?'),
    insert: db.prepare(`INSERT INTO nodes (name, docker_host, public_host, memory_mb, port_low, port_high, tls, created_at)
      VALUES (@name, @docker_host, @public_host, @memory_mb, @port_low, @port_high, @tls, @created_at)`),
    drain: db.prepare('UPDATE nodes SET draining = ? WHERE name = ?'),
    lost: db.prepare('UPDATE nodes SET unreachable_since = ? WHERE name = ? AND unreachable_since IS NULL'),
    back: db.prepare('UPDATE nodes SET unreachable_since = NULL WHERE name = ?'),
    lose: db.prepare('UPDATE nodes SET lost_at = COALESCE(lost_at, ?) WHERE name = ?'),
    remove: db.prepare('DELETE FROM nodes WHERE name = ? AND NOT EXISTS (SELECT 1 FROM servers WHERE node = ?)'),
    // Kept by triggers on `servers` in every write's transaction (migration 026): no scan of the servers.
    plansOn: db.prepare<unknown[], { node: string; plan: string; n: number }>('SELECT node, plan, servers AS n FROM node_counts'),
    nodeOf: db.prepare<unknown[], string | null>('SELECT node FROM servers WHERE id = ?').pluck(),
    on: db.prepare<unknown[], string>("SELECT id FROM servers WHERE node = ? AND state != 'deleting' ORDER BY id").pluck(),
    onWithPlans: db.prepare<unknown[], { id: string; plan: string }>("SELECT id, plan FROM servers WHERE node = ? AND state != 'deleting' ORDER BY id"),
  };
}

/** The node's free plan memory if it takes a server of `memoryMb` now (active, reachable, not lost, room), else null. */
function room(node: Node, memoryMb: number, used: Map<string, NodeUse>): number | null {
  const free = node.memoryMb - (used.get(node.name)?.memoryMb ?? 0);
  return node.draining || node.unreachableSince !== null || node.lostAt !== null || free < memoryMb ? null : free;
}

/** Reading the nodes, what their servers take, and which servers are on them. */
function nodeReads(st: Statements, memoryOf: (plan: string) => number) {
  return {
    list: (): Node[] => st.all.all().map(toNode),
    get(name: string): Node | undefined {
      const row = st.one.get(name);
      return row && toNode(row);
    },
    /** Each node's servers and plan memory, by node name. */
    use(): Map<string, NodeUse> {
      const byNode = new Map<string, NodeUse>();
      for (const r of st.plansOn.all()) {
        const u = byNode.get(r.node) ?? { servers: 0, memoryMb: 0 };
        u.servers += r.n;
        u.memoryMb += r.n * memoryOf(r.plan);
        byNode.set(r.node, u);
      }
      return byNode;
    },
    /** The node a server is on; null in the local environment or when the server is gone. */
    nodeOf(serverId: string): string | null {
      return st.nodeOf.get(serverId) ?? null;
    },
    /** The servers on a node, except those being deleted. */
    serverIdsOn(name: string): string[] {
      return st.on.all(name);
    },
    /** The same, with each server's plan (an evacuation picks each one's new node by its plan's memory). */
    serversOn: (name: string): { id: string; plan: string }[] => st.onWithPlans.all(name),
  };
}

/** Placement over the nodes: a new server's place, a resize's check, an evacuation's target, a move's place. */
function nodePlacement(st: Statements, ports: ReturnType<typeof portsIn>, reads: Pick<NodeReads, 'list' | 'use'>) {
  /**
   * A place for a server of `memoryMb` on the node with the most free plan memory that holds this plan and has a free
   * port, among those neither drained nor unreachable (but `except`); ties go to the first name, so placement is
   * repeatable. Every server on a node counts, running or not: a stopped server may start at any time, and its plan's
   * memory is promised to it. Null when no node takes it.
   */
  function best(memoryMb: number, except?: string): { node: string; host: string; port: number } | null {
    const used = reads.use();
    const fitting = reads.list()
      .filter((node) => node.name !== except)
      .map((node) => ({ node, free: room(node, memoryMb, used) }))
      .filter((n): n is { node: Node; free: number } => n.free !== null)
      .sort((a, b) => b.free - a.free); // stable: ties keep the names' order
    for (const { node } of fitting) {
      const port = ports.draw(...node.ports);
      if (port !== null) return { node: node.name, host: node.publicHost, port };
    }
    return null;
  }

  const placer: Placer = {
    place(memoryMb) {
      const place = best(memoryMb);
      if (!place) throw capacityExhausted(`No capacity is left for a server of ${memoryMb} MiB; try again later, pick a smaller plan or ask the operator.`);
      return place;
    },
    checkResize(serverId, fromMb, toMb) {
      const name = st.nodeOf.get(serverId);
      const node = name ? st.one.get(name) : undefined;
      if (!node || toMb <= fromMb) return;
      const inUse = reads.use().get(node.name)?.memoryMb ?? 0;
      if (inUse - fromMb + toMb > node.memory_mb) {
        throw capacityExhausted(`No capacity is left for this server at ${toMb} MiB; try again later or pick a smaller plan.`);
      }
    },
  };

  return {
    placer,
    /** Where a server of `memoryMb` on node `except` would best move (an evacuation, cli-moves.ts); null if nowhere. */
    bestFor: (memoryMb: number, except: string): string | null => best(memoryMb, except)?.node ?? null,
    /**
     * A place on node `name` for a server of `memoryMb` coming from another node (a move's switch, inside its
     * transaction, moves-repo.ts): its public host and a free port drawn from its range (`prefer`, the one a move
     * started its game ahead on, if it is of the range and still free); null with the reason when the node does not
     * take it now.
     */
    placeOn(name: string, memoryMb: number, prefer?: number): { place: { node: string; host: string; port: number } } | { refused: string } {
      const node = reads.list().find((n) => n.name === name);
      if (!node) return { refused: `there is no node ${name}` };
      const [low, high] = node.ports;
      const preferred = prefer !== undefined && prefer >= low && prefer <= high && ports.free(prefer) ? prefer : null;
      const port = room(node, memoryMb, reads.use()) === null ? null : (preferred ?? ports.draw(low, high));
      if (port === null) {
        return { refused: `node ${name} does not take a server of ${memoryMb} MiB now (drained, unreachable, or out of memory or ports)` };
      }
      return { place: { node: name, host: node.publicHost, port } };
    },
  };
}

/** The operator's changes to the nodes (cli-nodes.ts), the environment's reachability, and the default node at boot. */
function nodeWrites(db: Db, st: Statements, clock: Clock, servers: Pick<ServerWrites, 'placeUnplacedOn'>) {
  /** False when a node of that name exists already. */
  function add(node: NewNode): boolean {
    if (st.one.get(node.name)) return false;
    st.insert.run({
      name: node.name, docker_host: node.dockerHost, public_host: node.publicHost, memory_mb: node.memoryMb,
      port_low: node.ports[0], port_high: node.ports[1], tls: node.tls ? 1 : 0, created_at: iso(clock.now()),
    });
    return true;
  }

  return {
    add,
    /** False when there is no such node. */
    setDraining(name: string, draining: boolean): boolean {
      return st.drain.run(draining ? 1 : 0, name).changes === 1;
    },
    /** Records whether the node's engine answers (the nodes environment's checks, its one writer). */
    setReachable(name: string, reachable: boolean): void {
      if (reachable) st.back.run(name);
      else st.lost.run(iso(clock.now()), name);
    },
    /** Marks the node lost for good (`gsh node lose`, inside its transaction, recoveries-repo.ts); the first time counts. */
    markLost: (name: string): void => void st.lose.run(iso(clock.now()), name),
    /** 'removed', 'missing', or 'in_use' while any server (even one being deleted) is on it. */
    remove(name: string): 'removed' | 'missing' | 'in_use' {
      if (!st.one.get(name)) return 'missing';
      return st.remove.run(name, name).changes === 1 ? 'removed' : 'in_use';
    },
    /**
     * RUNTIME=docker at boot: with no node added, the engine at DOCKER_HOST becomes node `local`; servers placed
     * before nodes existed (node NULL) are on it. One transaction, so a second service on the file sees all or none.
     */
    ensureDefault(node: NewNode): void {
      db.transaction(() => {
        if (st.all.all().length === 0) add(node);
        if (st.one.get(DEFAULT_NODE)) servers.placeUnplacedOn(DEFAULT_NODE);
      }).immediate();
    },
  };
}

/**
 * The `nodes` table and placement over it. Use is read from `node_counts`, which triggers on `servers` keep in every
 * write's transaction (migration 026), so it cannot drift (as quotas-repo.ts reads an account's). `memoryOf` is the
 * plan catalog's memory of a plan id.
 */
export function createNodesRepo(
  db: Db,
  clock: Clock,
  memoryOf: (plan: string) => number,
  /** The servers table's writer (ServersRepo): ensureDefault places unplaced servers through it. */
  servers: Pick<ServerWrites, 'placeUnplacedOn'>,
) {
  const st = statements(db);
  const reads = nodeReads(st, memoryOf);
  return { ...nodePlacement(st, portsIn(db), reads), ...reads, ...nodeWrites(db, st, clock, servers) };
}

export type NodesRepo = ReturnType<typeof createNodesRepo>;
