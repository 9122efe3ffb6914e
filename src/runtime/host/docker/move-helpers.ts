// A live move's helpers (docs/architecture.md "Moving a server"): one container per node for the whole move, started
// once, in which folder-ops.cjs runs each of the move's steps by exec (API "Create an exec instance", "Start an exec
// instance") instead of in a container made, started, waited for and removed for each: that costs ≈0.2–0.4 s a step,
// and the last pass's steps are in the players' downtime (BENCHMARKS.md §15). The volume streams out of and into the
// same container through the archive endpoints, which work on a running container as on a stopped one.
import { Readable } from 'node:stream';
import { FOLDER_OPS } from '../restore';
import { removeContainer } from './container-process';
import type { Engine } from './engine';
import type { Helpers } from './helper-containers';
import { GAME_DIR, IMAGE_NODE } from './image';

/**
 * How long a move's helper lives at most: it is removed when its move no longer needs it, and a next service life's
 * start removes any a `kill -9` left (docker-environment.ts); this bounds one whose service never comes back.
 */
const LIFE_MS = 6 * 3_600_000;
/** How long one step may go without a byte of its answer (helper-containers.ts gives a helper's program as long). */
const RUN_MS = 10 * 60_000;

export interface MoveHelper {
  /** Its container's id (the archive endpoints take it). */
  readonly id: string;
  /** Whether its container still runs (its engine may have restarted, or its volume's removal taken it); never rejects. */
  running(): Promise<boolean>;
  /**
   * Runs `folder-ops.cjs <args[0]> GAME_DIR <args[1…]>` in the helper and resolves with its JSON answer; rejects with
   * its reason when it fails. `alongside` runs meanwhile; if it fails, the helper is removed (the step with it).
   */
  run<T>(args: string[], alongside?: () => Promise<void>): Promise<T>;
  /** A tar stream unpacked into GAME_DIR (API "Extract an archive of files or folders to a directory in a container"). */
  put(content: Readable): Promise<void>;
  /** The archive of `path` (absolute, in the helper) as a tar stream. */
  get(path: string): Promise<Readable>;
  /** Removes the helper; a failure is left to the next service life's start (and to the volume's removal). */
  remove(): Promise<void>;
}

const archiveOf = (containerId: string, p: string) => `/containers/${containerId}/archive?path=${encodeURIComponent(p)}`;

/** Starts a move's helper with the server's `volume` at GAME_DIR (helper-containers.ts's limits, user and labels). */
export async function startMoveHelper(engine: Engine, helpers: Pick<Helpers, 'create'>, volume: string, serverId: string): Promise<MoveHelper> {
  // As PID 1 it would ignore SIGTERM: an engine that stops ends it at once, as it does the games, and the move with it.
  const idle = `process.on('SIGTERM', () => process.exit(143)); setTimeout(() => undefined, ${LIFE_MS});`;
  const id = await helpers.create(volume, serverId, [IMAGE_NODE, '-e', idle]);
  const remove = () => removeContainer(engine, id).catch(() => undefined);
  try {
    await engine.json('POST', `/containers/${id}/start`);
  } catch (err) {
    await remove();
    throw err;
  }
  return {
    id,
    running: () => engine.json<{ State: { Running: boolean } }>('GET', `/containers/${id}/json`).then((c) => c.State.Running, () => false),
    async run<T>(args: string[], alongside?: () => Promise<void>): Promise<T> {
      const answer = exec<T>(engine, id, [args[0], GAME_DIR, ...args.slice(1)], alongside ? LIFE_MS : RUN_MS);
      answer.catch(() => undefined); // awaited below, unless `alongside` failed first
      try {
        await alongside?.();
      } catch (err) {
        await remove();
        throw err;
      }
      return answer;
    },
    async put(content) {
      await engine.upload(archiveOf(id, GAME_DIR), content, 'application/x-tar', 'PUT');
    },
    get: (path) => engine.download(archiveOf(id, path)),
    remove,
  };
}

/**
 * One step by exec. With a TTY the engine answers with the program's output as it is (stdout and stderr together),
 * not multiplexed (API "Start an exec instance"), so the answer is text; its exit code is asked after.
 */
async function exec<T>(engine: Engine, containerId: string, args: string[], idleMs: number): Promise<T> {
  const body = { Cmd: [IMAGE_NODE, FOLDER_OPS, ...args], AttachStdout: true, AttachStderr: true, Tty: true };
  const { Id } = await engine.json<{ Id: string }>('POST', `/containers/${containerId}/exec`, body);
  const start = Readable.from([JSON.stringify({ Detach: false, Tty: true })]);
  const out = (await engine.upload(`/exec/${Id}/start`, start, 'application/json', 'POST', idleMs)).replace(/\r/g, '').trim();
  const { ExitCode } = await engine.json<{ ExitCode: number | null }>('GET', `/exec/${Id}/json`);
  if (ExitCode !== 0) throw new Error(`${args[0]} in the server's volume failed (exit ${ExitCode}): ${out.slice(-300)}`);
  return JSON.parse(out.split('\n').pop() ?? '') as T;
}
