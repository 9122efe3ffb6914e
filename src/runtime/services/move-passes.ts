import type { Logger } from '../../log';
import type { Move, MovesRepo } from '../../store/moves-repo';
import type { VolumeTransfer } from '../host/docker/nodes-environment';
import type { CommandContext } from '../server/door';
import type { ServerSupervisor } from '../server/server-supervisor';
import type { LiveBackup } from '../software/backup-definitions';
import { LIVE_HOLD_S } from './backups';

/** How long the game has to flush its world and say it paused (as for a live backup, backups.ts). */
const PAUSE_TIMEOUT_MS = 60_000;

/** What a copy step hands the switch: what the new node holds now. */
export interface Copied {
  files: number;
  bytes: number;
}

/** Why a step failed, and whether the game is to start again where it was (it ran and the move stopped it). */
export interface StepFailure {
  failed: string;
  restart: boolean;
}

export interface PassDeps {
  repo: MovesRepo;
  transfer: VolumeTransfer;
  log: Logger;
}

/**
 * Runs `pass` while the running game holds its world saving, as a live backup does (backup-definitions.ts): the
 * pause command, its `paused` sign, the pass, and the resume command whatever happened; the players stay. Throws,
 * having run nothing, when the game does not pause. Should the service die meanwhile, the game resumes by itself
 * after LIVE_HOLD_S, and the move carried on at boot pauses it again.
 */
async function whilePaused(server: ServerSupervisor, live: LiveBackup, pass: () => Promise<void>): Promise<void> {
  const game = server.running('a live move needs it running');
  const pause = live.pause.replace(/\{seconds\}/g, String(LIVE_HOLD_S));
  server.console.push('input', pause);
  try {
    if (!(await game.request(pause, live.paused, PAUSE_TIMEOUT_MS))) {
      throw new Error(`the game did not pause its world saving within ${PAUSE_TIMEOUT_MS / 1000} s`);
    }
    await pass();
  } finally {
    server.console.push('input', live.resume);
    try {
      game.send(live.resume);
    } catch {
      // Its console is closed: the game is exiting, and holds nothing any more.
    }
  }
}

/** How often a move that stops the game looks whether the old node still answers. */
const AWAY_CHECK_MS = 500;

/**
 * Stops the game for the move (a crashed one cleared); true, without waiting further, when the old node stops
 * answering first. The stop waits for the engine to say the game exited, which an engine that went away never
 * says (container-process.ts waitExit retries until it answers): the move fails then, the server `unreachable` on
 * its node, and the node's return decides what runs (node-loss.ts; seen in CI: a move held for minutes).
 */
async function haltOrAway(deps: PassDeps, server: ServerSupervisor, move: Move): Promise<boolean> {
  if (!server.hasProcess && server.state !== 'crashed') return false;
  let timer: NodeJS.Timeout | undefined;
  const away = new Promise<true>((resolve) => {
    const look = () => (deps.transfer.reachable(move.fromNode) ? (timer = setTimeout(look, AWAY_CHECK_MS)) : resolve(true));
    look();
  });
  try {
    return await Promise.race([server.halt('stop', 'move').then(() => false), away]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The first pass of a live move (`syncing`), the game running and its players on: the volume copied whole to the new
 * node while the game holds its world saving, and the move `delta`. The move left as it was (to copy whole, stopped)
 * when the old node has no volume of the server yet; a failure needs no restart: the game never stopped.
 */
export async function firstPass(deps: PassDeps, server: ServerSupervisor, live: LiveBackup, move: Move): Promise<Move | StepFailure | undefined> {
  deps.repo.sync(move.id);
  server.console.push('system', 'moving to another machine: copying the files while the game runs; it stops only to copy what changed since');
  try {
    const passed = await deps.transfer.firstPass(server.id, move.fromNode, move.toNode, (pass) => whilePaused(server, live, pass));
    if (!passed) return deps.repo.get(move.id);
  } catch (err) {
    return { failed: `the copy while the game ran did not complete: ${(err as Error).message}`, restart: false };
  }
  return deps.repo.catchUp(move.id);
}

/**
 * The last pass of a live move (`delta`): the game stopped, what changed since the first pass copied and verified.
 * `underWay` is told once the game has stopped on the old node and both engines took the pass (VolumeTransfer
 * catchUp): the start ahead on the new node may begin then, never beside a container still running on the old one.
 */
export async function lastPass(deps: PassDeps, server: ServerSupervisor, ctx: CommandContext, move: Move, underWay: () => void): Promise<Copied | StepFailure> {
  const restart = move.wasRunning === true;
  if (await haltOrAway(deps, server, move)) return { failed: `node ${move.fromNode} stopped answering while the game stopped`, restart: false };
  if (ctx.overtaken) return { failed: 'a kill, the removal or the shutdown came first', restart: false };
  const t0 = Date.now();
  try {
    const copied = await deps.transfer.catchUp(server.id, move.fromNode, move.toNode, underWay);
    deps.log.info('copied what changed since a live move\'s first pass', { serverId: server.id, changed: copied.changed, changedBytes: copied.changedBytes, removed: copied.removed, ms: Date.now() - t0 });
    return copied;
  } catch (err) {
    return { failed: `copying what changed did not complete: ${(err as Error).message}`, restart };
  }
}

/**
 * A move with the game stopped for the whole copy (`copying`): software that cannot back up live (`backup.consistency`
 * `stop`, or none), a game not running, or a move a restart interrupted in this step.
 */
export async function wholeCopy(deps: PassDeps, server: ServerSupervisor, ctx: CommandContext, move: Move, why: string): Promise<Copied | StepFailure> {
  const began = deps.repo.begin(move.id, server.state === 'running' || server.state === 'starting');
  const restart = began?.wasRunning === true;
  server.console.push('system', `moving to another machine: stopping, copying the files, starting there again (${why})`);
  deps.log.info('a move copies with the game stopped', { serverId: server.id, why });
  if (await haltOrAway(deps, server, move)) return { failed: `node ${move.fromNode} stopped answering while the game stopped`, restart: false };
  if (ctx.overtaken) return { failed: 'a kill, the removal or the shutdown came first', restart: false };
  try {
    return await deps.transfer.copy(server.id, move.fromNode, move.toNode);
  } catch (err) {
    return { failed: `the copy did not complete: ${(err as Error).message}`, restart };
  }
}
