import { required, type Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { newId } from '../ids';
import type { EventsRepo } from './events-repo';
import type { NodesRepo } from './nodes-repo';
import { parseServer, SERVER_JSON } from './server-view';
import type { ServerWrites } from './server-writes';

/**
 * A move's progress (docs/architecture.md "Moving a server"): `pending` (asked for), then either `syncing` (the
 * first pass, copied while the game runs) and `delta` (the game stopped, what changed since being copied), or
 * `copying` (the game stopped, its files being copied whole to the new node); `switched` (the copy verified, the
 * server's row on the new node), then `done`, or `failed` with the server left whole where it was.
 */
export type MoveStatus = 'pending' | 'syncing' | 'copying' | 'delta' | 'switched' | 'done' | 'failed';
/** The statuses of a move not yet done or failed. */
const OPEN = `('pending', 'syncing', 'copying', 'delta', 'switched')`;

export interface Move {
  id: string;
  serverId: string;
  fromNode: string;
  toNode: string;
  status: MoveStatus;
  /** Whether its game ran when the move began (it starts again on the new node); null until then. */
  wasRunning: boolean | null;
  /** What the copy held; null until copied. */
  bytes: number | null;
  error: string | null;
  /** The node where a volume of the server is still to be removed, or null. */
  leftover: string | null;
  /** How it copies: `live` (a first pass while the game runs), `stopped` (whole, the game stopped); null until then. */
  method: 'live' | 'stopped' | null;
  createdAt: string;
  updatedAt: string;
}

interface MoveRow {
  id: string;
  server_id: string;
  from_node: string;
  to_node: string;
  status: MoveStatus;
  was_running: 0 | 1 | null;
  bytes: number | null;
  error: string | null;
  leftover: string | null;
  method: 'live' | 'stopped' | null;
  created_at: string;
  updated_at: string;
}

const toMove = (r: MoveRow): Move => ({
  id: r.id, serverId: r.server_id, fromNode: r.from_node, toNode: r.to_node, status: r.status,
  wasRunning: r.was_running === null ? null : r.was_running === 1, bytes: r.bytes, error: r.error, leftover: r.leftover,
  method: r.method, createdAt: r.created_at, updatedAt: r.updated_at,
});

type Statements = ReturnType<typeof statements>;
type Nodes = Pick<NodesRepo, 'get' | 'nodeOf' | 'placeOn'>;
type MemoryOf = (plan: string) => number;
type GetMove = (id: string) => Move | undefined;

/** The repository's statements, prepared once (docs/conventions.md "Code layout"). */
function statements(db: Db) {
  return {
    insert: db.prepare(`INSERT INTO server_moves (id, server_id, from_node, to_node, status, created_at, updated_at)
      VALUES (?, ?, ?, ?, 'pending', ?, ?)`),
    get: db.prepare<unknown[], MoveRow>('SELECT * FROM server_moves WHERE id = ?'),
    open: db.prepare<unknown[], MoveRow>(`SELECT * FROM server_moves WHERE status IN ${OPEN} ORDER BY id`),
    openOf: db.prepare<unknown[], MoveRow>(`SELECT * FROM server_moves WHERE server_id = ? AND status IN ${OPEN}`),
    leftovers: db.prepare<unknown[], MoveRow>('SELECT * FROM server_moves WHERE leftover IS NOT NULL ORDER BY id'),
    server: db.prepare<unknown[], { user_id: string; plan: string; state: string; node: string | null }>('SELECT user_id, plan, state, node FROM servers WHERE id = ?'),
    view: db.prepare<unknown[], string>(`SELECT ${SERVER_JSON} FROM servers WHERE id = ?`).pluck(),
    begin: db.prepare(`UPDATE server_moves SET status = 'copying', was_running = COALESCE(was_running, ?), method = 'stopped',
      updated_at = ? WHERE id = ? AND status IN ('pending', 'syncing', 'copying')`),
    sync: db.prepare(`UPDATE server_moves SET status = 'syncing', was_running = COALESCE(was_running, 1), method = 'live', updated_at = ?
      WHERE id = ? AND status IN ('pending', 'syncing')`),
    delta: db.prepare(`UPDATE server_moves SET status = 'delta', updated_at = ? WHERE id = ? AND status = 'syncing'`),
    switched: db.prepare(`UPDATE server_moves SET status = 'switched', bytes = ?, leftover = from_node, updated_at = ? WHERE id = ?`),
    done: db.prepare(`UPDATE server_moves SET status = 'done', updated_at = ? WHERE id = ? AND status = 'switched'`),
    failed: db.prepare(`UPDATE server_moves SET status = 'failed', error = ?, leftover = ?, updated_at = ?
      WHERE id = ? AND status IN ('pending', 'syncing', 'copying', 'delta')`),
    dropped: db.prepare('UPDATE server_moves SET leftover = NULL, updated_at = ? WHERE id = ?'),
  };
}

/** Reading moves: one by id (also how the request and the steps return a move after writing it), and the lists. */
function moveReads(st: Statements) {
  const get: GetMove = (id) => {
    const row = st.get.get(id);
    return row && toMove(row);
  };
  return {
    get,
    /** Moves not yet done or failed, oldest first (the runtime carries them out, also after a restart). */
    open: (): Move[] => st.open.all().map(toMove),
    /** Moves whose leftover volume is still to be removed. */
    leftovers: (): Move[] => st.leftovers.all().map(toMove),
  };
}

/** The operator's request: checked against the server, its node and the target, then a `pending` move. */
function moveRequests(db: Db, st: Statements, clock: Clock, nodes: Nodes, memoryOf: MemoryOf, get: GetMove) {
  return {
    /**
     * The operator's request to move a server to node `to` (one IMMEDIATE transaction), or why it is refused: no such
     * server or node, the server being deleted or already there or already moving, its node or the target not
     * answering, the target drained or without room (its memory and a free port, checked again at the switch).
     */
    request(serverId: string, to: string): { move: Move } | { refused: string } {
      return db.transaction((): { move: Move } | { refused: string } => {
        const server = st.server.get(serverId);
        if (!server) return { refused: `There is no server ${serverId}.` };
        if (server.node === null) return { refused: `Server ${serverId} is on no node; moves need RUNTIME=docker and its nodes.` };
        if (server.state === 'deleting') return { refused: `Server ${serverId} is being deleted.` };
        if (server.node === to) return { refused: `Server ${serverId} is on node ${to} already.` };
        if (st.openOf.get(serverId)) return { refused: `Server ${serverId} is being moved already.` };
        if (nodes.get(server.node)?.unreachableSince) return { refused: `Node ${server.node}, where the server's files are, does not answer.` };
        const room = nodes.placeOn(to, memoryOf(server.plan));
        if ('refused' in room) return { refused: `Cannot move server ${serverId}: ${room.refused}.` };
        const id = newId('mov', clock.now());
        const now = iso(clock.now());
        st.insert.run(id, serverId, server.node, to, now, now);
        return { move: required(get(id)) };
      }).immediate();
    },
  };
}

/** The runtime's steps of a move (moves.ts): copying, the switch to the new node, then done or failed. */
function moveSteps(
  db: Db,
  st: Statements,
  clock: Clock,
  placement: { nodes: Nodes; memoryOf: MemoryOf },
  /** The switch writes the server's new place through the table's writer, with its event (see createMovesRepo). */
  relocation: { events: EventsRepo; writes: Pick<ServerWrites, 'relocate'> },
  get: GetMove,
) {
  return {
    /** The copy begins: `copying`, and whether the game ran, recorded the first time only. */
    begin(id: string, wasRunning: boolean): Move | undefined {
      st.begin.run(wasRunning ? 1 : 0, iso(clock.now()), id);
      return get(id);
    },
    /** The first pass begins while the game runs: `syncing`, its game recorded as running (the first time only). */
    sync(id: string): Move | undefined {
      st.sync.run(iso(clock.now()), id);
      return get(id);
    },
    /**
     * Where the switch would place the server now (its new node's public host and a free port), written nowhere: a
     * live move starts its game there ahead (moves.ts) and passes the port to switchOver. Null when the node does not
     * take it. A server created meanwhile may draw the same port; the switch then draws another.
     */
    placeAhead(id: string): { host: string; port: number } | null {
      const move = get(id);
      const server = move && st.server.get(move.serverId);
      const room = move && server ? placement.nodes.placeOn(move.toNode, placement.memoryOf(server.plan)) : null;
      return room && 'place' in room ? { host: room.place.host, port: room.place.port } : null;
    },
    /** The first pass is copied; the game is stopped next: `delta`. */
    catchUp(id: string): Move | undefined {
      st.delta.run(iso(clock.now()), id);
      return get(id);
    },
    /**
     * The copy is verified: the server's row takes its new node, public host and a port of the new node's range, with
     * its `server.updated` event, and the move is `switched` (its old node's volume now the leftover), one
     * transaction; the port `prefer` (placeAhead's) if it is still free. Refused, changing nothing, when the new node
     * no longer takes the server.
     */
    switchOver(id: string, bytes: number, prefer?: number): { address: { host: string; port: number } } | { refused: string } {
      return db.transaction((): { address: { host: string; port: number } } | { refused: string } => {
        const move = get(id);
        const server = move && st.server.get(move.serverId);
        if (!move || !server || (move.status !== 'copying' && move.status !== 'delta')) return { refused: 'the move or its server is gone' };
        const room = placement.nodes.placeOn(move.toNode, placement.memoryOf(server.plan), prefer);
        if ('refused' in room) return room;
        relocation.writes.relocate(move.serverId, room.place);
        relocation.events.raise('server.updated', { server: parseServer(required(st.view.get(move.serverId))) }, { serverId: move.serverId });
        st.switched.run(bytes, iso(clock.now()), id);
        return { address: { host: room.place.host, port: room.place.port } };
      }).immediate();
    },
    finish: (id: string): void => void st.done.run(iso(clock.now()), id),
    /** The move did not happen: the server is whole where it was; `leftover`: where a partial copy may remain. */
    fail: (id: string, error: string, leftover: string | null): void => void st.failed.run(error.slice(0, 500), leftover, iso(clock.now()), id),
    /** The leftover volume is gone. */
    dropped: (id: string): void => void st.dropped.run(iso(clock.now()), id),
  };
}

/**
 * The `server_moves` table (migrations 032, 042): written by the operator's `gsh server move` (request) and by the
 * runtime's moves (moves.ts), each step its own transaction. The switch writes the server's new node and address
 * through ServersRepo's writes, with its `server.updated` event, in the step's transaction.
 */
export function createMovesRepo(
  db: Db,
  clock: Clock,
  nodes: Nodes,
  memoryOf: MemoryOf,
  events: EventsRepo,
  writes: Pick<ServerWrites, 'relocate'>,
) {
  const st = statements(db);
  const reads = moveReads(st);
  return {
    ...reads,
    ...moveRequests(db, st, clock, nodes, memoryOf, reads.get),
    ...moveSteps(db, st, clock, { nodes, memoryOf }, { events, writes }, reads.get),
  };
}

export type MovesRepo = ReturnType<typeof createMovesRepo>;
