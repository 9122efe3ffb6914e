// One game container as a GameProcess (environment.ts states the contract; docker-environment.ts makes them).
import os from 'node:os';
import type { Duplex } from 'node:stream';
import { stripTerminalControls } from '../../software/console-text';
import type { ExitInfo, GameProcess, OutputStream, ResourceUsage } from '../environment';
import { demux, EngineError, type Engine } from './engine';

/**
 * A line a launcher prints on stdout to report to the supervisor where it has no Node IPC channel (in a
 * container): this prefix, then one JSON message. Such lines are messages (onMessage), never console lines.
 * The prefix starts with ASCII RS (0x1E), which no console line of a game's own carries.
 */
export const REPORT_PREFIX = '\u001egsh ';
const RETRY_MS = 2_000;

export interface ContainerHandle {
  engine: Engine;
  id: string;
  /** The container's first process as the node's kernel numbers it (State.Pid). */
  pid: number;
  /** The attached stdio (API "Attach to a container"), stdin open. */
  stdio: Duplex;
  argv: string[];
}

/** cgroup v1 stats as the engine reports them (API "Get container stats based on resource usage"). */
interface Stats {
  cpu_stats?: { cpu_usage?: { total_usage?: number } };
  memory_stats?: { usage?: number; stats?: { total_inactive_file?: number; inactive_file?: number } };
}

export function usageFromStats(s: Stats): ResourceUsage | null {
  const cpuNs = s.cpu_stats?.cpu_usage?.total_usage;
  const mem = s.memory_stats?.usage;
  if (cpuNs === undefined || mem === undefined) return null;
  // As `docker stats` counts it: the page cache the kernel can drop at once is not the game's memory.
  const cache = s.memory_stats?.stats?.total_inactive_file ?? s.memory_stats?.stats?.inactive_file ?? 0;
  return { cpuMs: cpuNs / 1e6, rssBytes: Math.max(0, mem - cache) };
}

/** An exit code over 128 is a death by signal (128 + n, what docker-init reports for its child). */
function exitInfo(code: number, oomKilled: boolean): ExitInfo {
  const signal = code > 128 ? Object.entries(os.constants.signals).find(([, n]) => n === code - 128)?.[0] : undefined;
  const base: ExitInfo = signal ? { code: null, signal } : { code, signal: null };
  return oomKilled ? { ...base, outOfMemory: true } : base;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

type LineFn = (stream: OutputStream, text: string) => void;
type MessageFn = (msg: unknown) => void;

/**
 * Splits the attached stdio into lines: reports (REPORT_PREFIX) go to the message listeners, the rest to the
 * line listeners. Returns flush(), which hands on the last unterminated line of each stream (at the exit).
 */
function outputLines(stdio: Duplex, lineFns: LineFn[], messageFns: MessageFn[]): () => void {
  const partial: Record<OutputStream, string> = { stdout: '', stderr: '' };
  const emit = (stream: OutputStream, raw: string) => {
    if (stream === 'stdout' && raw.startsWith(REPORT_PREFIX)) {
      let msg: unknown;
      try {
        msg = JSON.parse(raw.slice(REPORT_PREFIX.length));
      } catch {
        return; // a torn or forged report is no console line either
      }
      for (const fn of messageFns) fn(msg);
      return;
    }
    const text = stripTerminalControls(raw);
    for (const fn of lineFns) fn(stream, text);
  };
  demux(stdio, (stream, chunk) => {
    const parts = (partial[stream] + chunk.toString('utf8')).split('\n');
    partial[stream] = parts.pop() ?? ''; // split gives at least one part: the text after the last newline
    for (const p of parts) emit(stream, p.replace(/\r$/, ''));
  });
  return () => {
    for (const stream of ['stdout', 'stderr'] as const) if (partial[stream]) emit(stream, partial[stream]);
  };
}

/**
 * One stats stream while the container runs (a sample a second); one that breaks (the engine restarting) is
 * opened again. Each usable sample goes to `onUsage`; returns the function that stops following.
 */
function followStats(engine: Engine, id: string, onUsage: (u: ResourceUsage) => void): () => void {
  let statsOn = true;
  let closeStats: () => void = () => undefined;
  const openStats = () => {
    closeStats = engine.stream(`/containers/${id}/stats?stream=1`, (s) => {
      const u = usageFromStats(s as Stats);
      if (u) onUsage(u);
    }, () => {
      if (statsOn) setTimeout(() => statsOn && openStats(), RETRY_MS).unref();
    });
  };
  openStats();
  return () => {
    statsOn = false;
    closeStats();
  };
}

/** SIGKILL to the container (API "Kill a container"); one already gone or not running is not an error. */
async function killContainer(engine: Engine, id: string): Promise<void> {
  try {
    await engine.json('POST', `/containers/${id}/kill?signal=SIGKILL`);
  } catch (err) {
    if (!(err instanceof EngineError)) throw err; // 404/409: already gone or not running
  }
}

/** GameProcess.stop on a live container: the stop command, then a kill after timeoutMs. */
async function stopOrKill(write: (text: string) => void, kill: () => Promise<void>, exited: Promise<ExitInfo>, stopCommand: string, timeoutMs: number) {
  let forced = false;
  const timer = setTimeout(() => {
    forced = true;
    kill().catch(() => undefined);
  }, timeoutMs);
  try {
    write(stopCommand);
  } catch {
    forced = true;
    await kill().catch(() => undefined);
  }
  const exit = await exited;
  clearTimeout(timer);
  return { ...exit, forced };
}

export function wrapContainer(h: ContainerHandle): GameProcess {
  const { engine, id } = h;
  const lineFns: LineFn[] = [];
  const messageFns: MessageFn[] = [];
  let alive = true;
  let usage: ResourceUsage | null = null;
  const flushLines = outputLines(h.stdio, lineFns, messageFns);
  h.stdio.on('error', () => undefined); // the engine went away: the wait below tells what happened
  const stopStats = followStats(engine, id, (u) => (usage = u));

  const following = new AbortController(); // aborted by detach(): the wait on the engine ends, the container runs on
  const exited = (async (): Promise<ExitInfo> => {
    const exit = await waitExit(engine, id, following.signal);
    alive = false;
    stopStats();
    flushLines();
    h.stdio.destroy();
    await removeContainer(engine, id).catch(() => undefined); // the next start() removes what is left
    return exit;
  })();

  const kill = () => killContainer(engine, id);
  const write = (text: string) => {
    if (!alive || h.stdio.destroyed || !h.stdio.writable) throw new Error('the process has exited');
    h.stdio.write(text + '\n');
  };

  return {
    pid: h.pid,
    cmdline: h.argv,
    exited,
    enforcesMemory: true,
    isAlive: () => alive,
    sendCommand: write,
    async stop(stopCommand, timeoutMs) {
      if (!alive) return { ...(await exited), forced: false };
      return stopOrKill(write, kill, exited, stopCommand, timeoutMs);
    },
    async kill() {
      if (alive) await kill().catch(() => undefined);
      return exited;
    },
    detach() {
      following.abort();
      stopStats();
      h.stdio.destroy(); // the engine keeps the container's stdin open (StdinOnce false) for the next attach
    },
    rssBytes: () => (alive ? usage?.rssBytes ?? null : null),
    usage: () => (alive ? usage : null),
    onLine: (fn) => void lineFns.push(fn),
    onMessage: (fn) => void messageFns.push(fn),
  };
}

/**
 * Waits for the container's end (API "Wait for a container"), then reads how it ended. A lost connection to
 * the engine is retried every RETRY_MS: the container may still run, and only the engine can say.
 */
async function waitExit(engine: Engine, id: string, signal: AbortSignal): Promise<ExitInfo> {
  for (;;) {
    try {
      await engine.json('POST', `/containers/${id}/wait`, undefined, 0, signal);
      const state = await engine.json<{ State: { ExitCode: number; OOMKilled: boolean } }>('GET', `/containers/${id}/json`);
      return exitInfo(state.State.ExitCode, state.State.OOMKilled);
    } catch (err) {
      if (signal.aborted) return new Promise<never>(() => undefined); // detached: no exit is ever reported
      if (err instanceof EngineError && err.status === 404) return { code: null, signal: 'SIGKILL' }; // removed by someone else
      await pause(RETRY_MS);
    }
  }
}

/**
 * Removes the container and resolves once it is gone: one already gone is a no-op, and one whose removal another
 * caller started (the engine answers 409 "removal … already in progress", e.g. a helper removed in the background
 * when its archive was read, volume-storage.ts streamOut) is waited for until removed (API "Wait for a container",
 * condition=removed). Before, that 409 failed the caller: a server's deletion that met it stayed `deleting` until
 * the next boot (issue 44).
 */
export async function removeContainer(engine: Engine, id: string, timeoutMs?: number): Promise<void> {
  const gone = (err: unknown) => err instanceof EngineError && err.status === 404;
  try {
    await engine.json('DELETE', `/containers/${id}?force=1&v=1`, undefined, timeoutMs);
  } catch (err) {
    if (gone(err)) return;
    if (!(err instanceof EngineError && err.status === 409 && /already in progress/.test(err.message))) throw err;
    await engine.json('POST', `/containers/${id}/wait?condition=removed`, undefined, timeoutMs).catch((waited: unknown) => {
      if (!gone(waited)) throw waited;
    });
  }
}
