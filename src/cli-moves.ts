// `gsh server move` and `gsh node drain --evacuate`: the operator's moves of servers between nodes (docs/architecture.md
// "Moving a server"; README "Nodes"). The CLI records the request; the service carries it out on the server's door.
import { parseArgs } from 'node:util';
import { loadConfig } from './config';
import { openDb, type Db } from './store/db';
import { systemClock } from './clock';
import { plans } from './catalog/plans';
import { createOperatorStore } from './store';
import type { NodesRepo } from './store/nodes-repo';
import type { Move, MovesRepo, MoveStatus } from './store/moves-repo';
import { failure, UsageError } from './cli-usage';

export const MOVE_USAGE = `  gsh server move <server_id> --to <node> [--no-wait]`;

export const MOVE_HELP = `server move asks the service to move a server to another node (RUNTIME=docker): the service stops it if it
runs, copies its files from its node's engine to the other's and checks the copy, gives it an address on the new
node (its owner gets server.updated), starts it again if it ran, and only then removes the old copy. It waits for
the move to end unless --no-wait (Ctrl-C stops the waiting, not the move); the service must be running to carry it
out. node drain --evacuate drains the node and moves its servers off it, one at a time, each to the node with the
most free plan memory.`;

const POLL_MS = 500;

const memoryOf = (plan: string) => plans.find((p) => p.id === plan)?.memory_mb ?? 0;

/** Runs `gsh server <argv…>`; resolves with the exit code (2: bad usage, 1: refused or failed). */
export async function runServerCli(argv: string[], env: NodeJS.ProcessEnv, out: (s: string) => void, err: (s: string) => void): Promise<number> {
  let db: Db | undefined;
  try {
    const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: { to: { type: 'string' }, 'no-wait': { type: 'boolean' } } });
    const [command, serverId] = positionals;
    if (command !== 'move' || !serverId || !values.to) throw new UsageError('server move needs a server id and --to <node>.');
    if (positionals.length > 2) throw new UsageError(`Unexpected argument "${positionals[2]}".`);
    const config = loadConfig(env);
    db = openDb(config.dbFile);
    const { moves } = createOperatorStore(db, systemClock, { defaults: config.quotas, plans }); // events as the `operator`
    const asked = moves.request(serverId, values.to);
    if ('refused' in asked) {
      err(`gsh: ${asked.refused}`);
      return 1;
    }
    out(`Asked the service to move ${serverId} from node ${asked.move.fromNode} to node ${values.to} (${asked.move.id}).`);
    if (values['no-wait']) return 0;
    return outcome(await waitFor(moves, asked.move.id, out), out, err);
  } catch (e) {
    return failure(e, err, MOVE_USAGE, ['server', ...argv]);
  } finally {
    db?.close();
  }
}

/**
 * `gsh node drain <name> --evacuate` once the node is drained: each server on it is moved to the node with the most
 * free plan memory that takes it, one at a time, each waited for. Resolves with the exit code: 1 if any could not be
 * moved (each says why; the others are moved all the same).
 */
export async function evacuate(
  { nodes, moves }: { nodes: NodesRepo; moves: MovesRepo },
  name: string,
  out: (s: string) => void,
  err: (s: string) => void,
): Promise<number> {
  let failed = 0;
  const servers = nodes.serversOn(name);
  out(servers.length === 0 ? `Node ${name} has no servers.` : `Moving ${servers.length} server(s) off node ${name}, one at a time.`);
  for (const { id, plan } of servers) {
    const to = nodes.bestFor(memoryOf(plan), name);
    const asked = to ? moves.request(id, to) : { refused: `No other node takes server ${id} (${memoryOf(plan)} MiB) now.` };
    if ('refused' in asked) {
      err(`gsh: ${asked.refused}`);
      failed++;
      continue;
    }
    out(`Moving ${id} to node ${to} (${asked.move.id}).`);
    if (outcome(await waitFor(moves, asked.move.id, out), out, err) !== 0) failed++;
  }
  return failed === 0 ? 0 : 1;
}

/** Polls the move until it is done or failed, saying each step once. */
async function waitFor(moves: MovesRepo, id: string, out: (s: string) => void): Promise<Move> {
  const said = new Set<string>();
  const steps: Record<Exclude<MoveStatus, 'done' | 'failed'>, string> = {
    pending: 'Waiting for the service to take the move (it must be running).',
    syncing: 'Copying its files to the new node while the game runs.',
    delta: 'The game stopped; copying what changed since.',
    copying: 'Copying its files to the new node.',
    switched: 'Copied and checked; starting it on the new node if it ran.',
  };
  for (;;) {
    const move = moves.get(id);
    if (!move) throw new Error(`The move ${id} is no longer in the database.`);
    if (move.status === 'done' || move.status === 'failed') return move;
    if (!said.has(move.status)) out(steps[move.status]);
    said.add(move.status);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

function outcome(move: Move, out: (s: string) => void, err: (s: string) => void): number {
  if (move.status === 'failed') {
    err(`gsh: moving ${move.serverId} failed; it stays on node ${move.fromNode}: ${move.error}`);
    return 1;
  }
  out(`Moved ${move.serverId} to node ${move.toNode} (${move.bytes ?? 0} bytes).`);
  return 0;
}
