import { spawn as spawnChild, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { stripTerminalControls } from './console-text';
import type { Environment, ExitInfo, GameProcess, LaunchSpec, LeftoverProcess, OutputStream } from './environment';

export interface LocalEnvironmentOptions {
  /** Environment variables every game process gets (main.ts passes process.env; src/runtime reads no globals). */
  baseEnv: Record<string, string | undefined>;
  /** Path of `nice`, used to lower the priority of the whole process before it starts; null to skip. */
  niceBinary?: string | null;
}

/** The marker a later service life looks for in /proc/<pid>/environ before killing a leftover. */
export const SERVER_ID_ENV = 'GSH_SERVER_ID';

const CLOSE_GRACE_MS = 500;

/**
 * Game servers as child processes of this service. Each runs in its own process group (detached), so stop and
 * kill reach whatever it spawned too.
 *
 * CPU: without cgroups (this host gives us none) the only per-process lever is scheduling priority. The plan's
 * cpu_shares become a niceness (see runtime's nicenessFor), applied by exec'ing through `nice` so every thread
 * inherits it (setpriority on a running Node process would reach only its main thread on Linux). Niceness
 * weighs processes against each other when the CPU is contended; it does not cap an idle host's CPU use.
 * Memory: enforced by the runtime's RSS watchdog (rssBytes) plus the heap flag in the start command.
 */
export function createLocalEnvironment(options: LocalEnvironmentOptions): Environment {
  const niceBinary = options.niceBinary === undefined ? findNice() : options.niceBinary;
  return {
    async install(dir, subdirs, files) {
      for (const sub of ['', ...subdirs]) await fs.promises.mkdir(path.join(dir, sub), { recursive: true });
      for (const [name, content] of Object.entries(files)) {
        await fs.promises.writeFile(path.join(dir, name), content);
      }
    },
    async uninstall(dir) {
      await fs.promises.rm(dir, { recursive: true, force: true });
    },
    isPortFree,
    async spawn(spec) {
      return spawnGame(spec, niceBinary, options.baseEnv);
    },
    killLeftover,
  };
}

function findNice(): string | null {
  for (const p of ['/usr/bin/nice', '/bin/nice']) if (fs.existsSync(p)) return p;
  return null;
}

function isPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE' || err.code === 'EACCES') resolve(false);
      else reject(err);
    });
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

function spawnGame(spec: LaunchSpec, niceBinary: string | null, baseEnv: LocalEnvironmentOptions['baseEnv']): Promise<GameProcess> {
  const [file, ...args] =
    niceBinary && spec.niceness > 0 ? [niceBinary, '-n', String(spec.niceness), ...spec.argv] : spec.argv;
  const child = spawnChild(file, args, {
    cwd: spec.cwd,
    env: { ...baseEnv, [SERVER_ID_ENV]: spec.serverId },
    stdio: spec.ipc ? ['pipe', 'pipe', 'pipe', 'ipc'] : ['pipe', 'pipe', 'pipe'],
    detached: true, // own process group: kill(-pid) reaches the game's children too
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject); // ENOENT and friends: no process was started
    child.once('spawn', () => {
      child.removeListener('error', reject);
      child.on('error', () => undefined); // later errors (e.g. EPIPE on stdin) show up as the exit
      if (!niceBinary && spec.niceness > 0) trySetPriority(child.pid!, spec.niceness);
      resolve(wrap(child, spec.argv));
    });
  });
}

function trySetPriority(pid: number, niceness: number): void {
  try {
    os.setPriority(pid, niceness);
  } catch {
    // Best effort: CPU priority is a preference, not a limit; a failure must not stop the game.
  }
}

function wrap(child: ChildProcess, argv: string[]): GameProcess {
  const pid = child.pid!;
  const lineFns: ((stream: OutputStream, text: string) => void)[] = [];
  const messageFns: ((msg: unknown) => void)[] = [];
  let alive = true;
  const emitLine = (stream: OutputStream, text: string) => {
    for (const fn of lineFns) fn(stream, text);
  };
  splitLines(child.stdout!, (t) => emitLine('stdout', t));
  splitLines(child.stderr!, (t) => emitLine('stderr', t));
  child.on('message', (msg) => {
    for (const fn of messageFns) fn(msg);
  });
  child.stdin!.on('error', () => undefined); // writing to a dying process: the exit tells the story
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('exit', (code, signal) => {
      // 'close' comes once stdout/stderr are drained, so the last lines are in before anyone reads them; a
      // grandchild holding the pipes open must not delay the exit for long.
      const done = () => {
        alive = false;
        resolve({ code, signal });
      };
      const timer = setTimeout(done, CLOSE_GRACE_MS);
      child.once('close', () => {
        clearTimeout(timer);
        done();
      });
    });
  });
  const killGroup = () => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      try {
        child.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
  };
  return {
    pid,
    cmdline: argv,
    exited,
    isAlive: () => alive,
    sendCommand(text) {
      if (!alive || !child.stdin || child.stdin.destroyed || !child.stdin.writable) {
        throw new Error('the process has exited');
      }
      child.stdin.write(text + '\n');
    },
    async stop(stopCommand, timeoutMs) {
      if (!alive) return { ...(await exited), forced: false };
      let forced = false;
      const timer = setTimeout(() => {
        forced = true;
        killGroup();
      }, timeoutMs);
      try {
        child.stdin!.write(stopCommand + '\n');
      } catch {
        forced = true;
        killGroup();
      }
      const exit = await exited;
      clearTimeout(timer);
      return { ...exit, forced };
    },
    async kill() {
      if (alive) killGroup();
      return exited;
    },
    rssBytes: () => readRss(pid),
    onLine: (fn) => void lineFns.push(fn),
    onMessage: (fn) => void messageFns.push(fn),
  };
}

function splitLines(stream: NodeJS.ReadableStream, onLine: (text: string) => void): void {
  let partial = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!;
    for (const p of parts) onLine(stripTerminalControls(p));
  });
  stream.on('end', () => {
    if (partial) onLine(stripTerminalControls(partial));
    partial = '';
  });
}

/** VmRSS from /proc/<pid>/status (proc(5)), in bytes. */
function readRss(pid: number): number | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Alive and not a zombie (a zombie has released its memory and ports; only its parent can reap it). */
function isRunningPid(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

function readNulList(file: string): string[] | null {
  try {
    return fs.readFileSync(file, 'utf8').split('\0').filter((s, i, all) => s !== '' || i < all.length - 1);
  } catch {
    return null;
  }
}

async function killLeftover(leftover: LeftoverProcess): Promise<boolean> {
  const { pid, serverId } = leftover;
  if (!isRunningPid(pid)) return false;
  const cmdline = readNulList(`/proc/${pid}/cmdline`);
  const environ = readNulList(`/proc/${pid}/environ`);
  const ours =
    cmdline !== null &&
    cmdline.join('\0') === leftover.cmdline.join('\0') &&
    environ !== null &&
    environ.includes(`${SERVER_ID_ENV}=${serverId}`);
  if (!ours) return false;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return false;
    }
  }
  for (let i = 0; i < 200 && isRunningPid(pid); i++) await new Promise((r) => setTimeout(r, 25));
  return true;
}
