import { serviceActor } from '../../actors';
import { whileStreaming } from '../../gc-tuning';
import type { Logger } from '../../log';
import type { Move, MovesRepo } from '../../store/moves-repo';
import type { VolumeTransfer } from '../host/docker/nodes-environment';
import type { Command, CommandContext } from '../server/door';
import type { Doors } from '../server/doors';
import type { ServerSupervisor } from '../server/server-supervisor';
import type { SoftwareDefinition } from '../software/software-catalog';
import { firstPass, lastPass, wholeCopy } from './move-passes';

export interface MovesDeps {
  repo: MovesRepo;
  /** The node a server is on now (NodesRepo.nodeOf); null when it is gone. */
  nodeOf: (serverId: string) => string | null;
  doors: Pick<Doors, 'of'>;
  /** The copy of a server's volume between two nodes, and their removal (docker/nodes-environment.ts). */
  transfer: VolumeTransfer;
  /** The server's software: whether it backs up live says whether a move may copy while the game runs. */
  softwareOf: (serverId: string) => Pick<SoftwareDefinition, 'id' | 'backup' | 'launchHold'> | undefined;
  log: Logger;
  /** Tracks background work (a leftover's removal) so Runtime idle() waits for it. */
  track: (p: Promise<unknown>) => void;
}

/** The move as its server's door runs it: one `move` command, which holds the server until the move has ended. */
function moveCommand(deps: MovesDeps, first: Move): Command {
  return {
    kind: 'move',
    holds: true,
    actor: serviceActor('operator'), // the operator asked (`gsh server move`): the events it raises say so
    run: async (server, ctx) => {
      const streamed = whileStreaming(); // the copy streams through the service (gc-tuning.ts)
      try {
        await carryOut(deps, server, ctx, first.id);
        return null;
      } finally {
        streamed();
      }
    },
    cancelled: (by) => deps.repo.fail(first.id, `Cancelled before it began by ${by.kind}.`, null),
  };
}

/** Carries the move on from the step its row records: the copy and switch if not done yet, then the start there. */
async function carryOut(deps: MovesDeps, server: ServerSupervisor, ctx: CommandContext, id: string): Promise<void> {
  const { repo, log } = deps;
  let move = repo.get(id);
  if (move && ['pending', 'syncing', 'copying', 'delta'].includes(move.status)) move = await copyAndSwitch(deps, server, ctx, move);
  if (move?.status !== 'switched') return;
  if (move.wasRunning && !ctx.overtaken) {
    const failure = await server.start();
    if (failure) log.warn('a moved server did not start on its new node', { serverId: server.id, node: move.toNode, code: failure.code });
  }
  repo.finish(move.id); // the server runs on its new node: what follows is housekeeping, redone at boot if cut short
  await deps.transfer.release(server.id); // the move's helpers (their removal began after the last pass), before the old volume goes
  await dropLeftover(deps, repo.get(move.id) ?? move);
}

/**
 * Copy, verify, switch: live (a first pass while the game runs, then stopped for what changed since) where the
 * software backs up live and the game runs, else stopped for the whole copy; any failure leaves the server whole on
 * its old node (restarted if the move stopped it).
 */
async function copyAndSwitch(deps: MovesDeps, server: ServerSupervisor, ctx: CommandContext, first: Move): Promise<Move | undefined> {
  const { repo, log } = deps;
  let move = first;
  const ahead: { now?: Ahead | null } = {}; // the game started ahead on the new node, once the last pass is under way
  const fail = async (reason: string, restart: boolean): Promise<undefined> => {
    repo.fail(move.id, reason, move.toNode);
    server.console.push('system', `the move to another machine failed; the server stays where it was: ${reason}`);
    log.warn('a move failed; the server stays on its node', { serverId: server.id, from: move.fromNode, to: move.toNode, reason });
    await ahead.now?.started; // its container goes with the partial copy (drop)
    await deps.transfer.release(server.id); // the move's helpers, before its partial copy goes
    await dropLeftover(deps, repo.get(move.id) ?? move);
    if (restart && !ctx.overtaken) await server.start();
    return undefined;
  };
  await server.whenInstalled();
  if (!['stopped', 'crashed', 'running', 'starting', 'stopping'].includes(server.state)) return fail(`the server is ${server.state}`, false);
  if (!deps.transfer.reachable(move.fromNode)) return fail(`node ${move.fromNode} does not answer`, false);
  const software = deps.softwareOf(server.id);
  const live = software?.backup?.consistency === 'live' ? software.backup.live : null;
  if ((move.status === 'pending' || move.status === 'syncing') && live && server.state === 'running') {
    const passed = await firstPass(deps, server, live, move);
    if (!passed) return fail('the move or its server is gone', false);
    if ('failed' in passed) return fail(passed.failed, passed.restart);
    move = passed;
  }
  let why = 'the game does not run';
  if (!live) why = `${software?.id ?? 'its software'} cannot be copied while it runs (backup.consistency: stop)`;
  else if (move.status === 'copying') why = 'a whole copy a restart interrupted';
  else if (move.status === 'syncing' && server.state === 'running') why = 'its files are still in a previous release\'s folder';
  const underWay = () => void (ahead.now = startAhead(deps, server, move));
  const copied = move.status === 'delta' ? await lastPass(deps, server, ctx, move, underWay) : await wholeCopy(deps, server, ctx, move, why);
  if ('failed' in copied) return fail(copied.failed, copied.restart);
  if (ctx.overtaken) return fail('a kill, the removal or the shutdown came first', false);
  await ahead.now?.started;
  const switched = repo.switchOver(move.id, copied.bytes, ahead.now?.port);
  if ('refused' in switched) return fail(switched.refused, repo.get(move.id)?.wasRunning === true);
  server.console.push('system', `moved (${copied.files} files, ${copied.bytes} bytes); players now reach it at ${switched.address.host}:${switched.address.port}`);
  log.info('moved a server to another node', { serverId: server.id, from: move.fromNode, to: move.toNode, bytes: copied.bytes, method: repo.get(move.id)?.method });
  return repo.get(move.id);
}

/** A game started ahead on the new node: the port it was given, and its start (never rejects). */
interface Ahead {
  port: number;
  started: Promise<void>;
}

/**
 * Starts the game on the new node while the last pass copies (the old game stopped, both engines taking the pass),
 * held until the start there (Environment.prestart), where the software's launcher holds (launch_hold) and the game
 * is to start again: its container's start and Node's and the game's code loading leave the players' downtime
 * (BENCHMARKS.md §15). At the place the switch would give it now, whose port the switch then keeps if still free;
 * any other spec at the start removes it, as a failed move's drop does.
 */
function startAhead(deps: MovesDeps, server: ServerSupervisor, move: Move): Ahead | null {
  if (deps.softwareOf(server.id)?.launchHold !== true || move.wasRunning !== true) return null;
  const place = deps.repo.placeAhead(move.id);
  const spec = place && server.launchAt(place);
  if (!place || !spec) return null;
  const started = deps.transfer.prestart(move.toNode, spec);
  deps.track(started);
  return { port: place.port, started };
}

/**
 * Removes the move's leftover volume if its node answers and the server is not on that node (nor moving there
 * now): the guard that keeps a later move's volume from being taken for an earlier one's leftover.
 */
async function dropLeftover(deps: MovesDeps, move: Move): Promise<void> {
  const { repo, log } = deps;
  const node = move.leftover;
  if (!node || !deps.transfer.reachable(node)) return;
  const movingThere = repo.open().some((m) => m.serverId === move.serverId && m.toNode === node);
  if (deps.nodeOf(move.serverId) === node || movingThere) return;
  try {
    await deps.transfer.drop(move.serverId, node);
    repo.dropped(move.id);
  } catch (err) {
    log.warn('could not remove a volume a move left; tried again later', { serverId: move.serverId, node, error: String(err) });
  }
}

/**
 * Moving a server between nodes (docs/architecture.md "Moving a server"). The operator asks (`gsh server move`, a
 * `pending` row, moves-repo.ts); `poll` hands each open move to its server's door as one `move` command, at boot
 * (before the reconcile loop's first pass, so nothing starts the server on its old node first) and at every pass of
 * the reconcile loop. The command holds the server: where the software backs up live and the game runs, it copies
 * the volume to the new node while the game runs with its world saving paused (`syncing`), then stops the game and
 * copies only what changed since (`delta`, move-passes.ts); otherwise it stops the game and copies the whole volume
 * (`copying`). Either way the copy is verified (docker/nodes-environment.ts VolumeTransfer), the server's row points
 * at the new node and address (`server.updated`), it starts there if it ran, and only then the old volume goes.
 * Each step is recorded first, so a move a `kill -9` interrupted is carried on at boot: `pending` or `syncing` from
 * the first pass (or the whole copy), `copying` from the whole copy, `delta` from what changed (all made again),
 * `switched` from the start; a failure at any step before the switch leaves the server whole on its old node,
 * started again if the move stopped it. A volume left behind (the old one, or a partial copy) is removed
 * once its node answers and the server is not on it.
 */
export function createMoves(deps: MovesDeps) {
  const { repo } = deps;
  /** Moves handed to a door in this service life. */
  const submitted = new Set<string>();
  let sweeping: Promise<void> | null = null;

  return {
    /**
     * Hands each open move not yet handed over in this life to its server's door (a server gone meanwhile: the move
     * fails), then removes leftover volumes whose node answers, one at a time.
     */
    poll(): void {
      for (const move of repo.open()) {
        if (submitted.has(move.id)) continue;
        submitted.add(move.id);
        try {
          void deps.doors.of(move.serverId).submit(moveCommand(deps, move));
        } catch (err) {
          repo.fail(move.id, `The server is gone: ${(err as Error).message}`, null);
        }
      }
      sweeping ??= (async () => {
        for (const move of repo.leftovers()) if (move.status === 'done' || move.status === 'failed') await dropLeftover(deps, move);
      })().finally(() => (sweeping = null));
      deps.track(sweeping);
    },
  };
}

export type Moves = ReturnType<typeof createMoves>;
