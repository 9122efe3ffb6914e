import { spawn as spawnChild } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../../log';
import { openCgroupHost, PIDS_MAX, type CgroupHost, type ServerCgroup } from './cgroups';
import { nicenessFor, sharesFor } from './cpu-priority';
import type { Environment, ExitInfo, GameAddress, GameProcess, LaunchSpec, LeftoverProcess } from './environment';
import { wrapChild } from './local-process';

export interface LocalEnvironmentOptions {
  /**
   * The only variables a game inherits from the service (config.ts `gameEnv`: PATH and LANG). HOME (the server
   * folder) and GSH_SERVER_ID are added per game; nothing else of the service's environment reaches a game.
   */
  gameEnv: Record<string, string>;
  /** Where the cgroup file systems are mounted (/sys/fs/cgroup); null: no cgroups (niceness and the watchdog). */
  cgroupRoot: string | null;
  /** This service's name among the groups on the host (cgroups.ts `instanceName` of DATA_DIR). */
  instance: string;
  log: Logger;
  /** Path of `nice`, used without cgroups to lower the priority of the whole process before it starts; null to skip. */
  niceBinary?: string | null;
}

/** The marker a later service life looks for in /proc/<pid>/environ before killing a leftover. */
export const SERVER_ID_ENV = 'GSH_SERVER_ID';

/**
 * `sh -c JOIN_SCRIPT gsh-join <n> <n cgroup.procs files> <argv…>`: writes its own pid into each group, then
 * execs the game. exec keeps the pid, so the game runs no instruction outside its group and nothing it starts
 * can be outside either (a child is born in its parent's group).
 */
const JOIN_SCRIPT = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"';
const SHELL = '/bin/sh';
const MIB = 1024 * 1024;

/**
 * Game servers as child processes of this service. Each runs in its own process group (detached), so stop and
 * kill reach whatever it spawned too, with an environment of its own (gameEnv, HOME, GSH_SERVER_ID).
 *
 * Limits, where the host allows (cgroups.ts): each game in a cgroup of its own, joined before the game's first
 * instruction, with memory = the plan's memory and no swap on top (an OOM kill ends it with outOfMemory), a CPU
 * quota of cpu_percent of one core, and at most PIDS_MAX tasks; when it exits, whatever else is left in its
 * group is killed and the group removed. Without cgroups (none writable, or cgroupRoot null; said once in the
 * log) it falls back to what any process can do: cpu_percent becomes a niceness (cpu-priority.ts), applied by
 * exec'ing through `nice` so every thread inherits it, which weighs games against each other on a busy CPU but
 * caps nothing; memory is left to the runtime's RSS watchdog (enforcesMemory false).
 */
export function createLocalEnvironment(options: LocalEnvironmentOptions): Environment {
  const niceBinary = options.niceBinary === undefined ? findNice() : options.niceBinary;
  const { log } = options;
  let cgroups: CgroupHost | null | undefined; // undefined until first needed: then looked for once

  function confinement(): CgroupHost | null {
    if (cgroups !== undefined) return cgroups;
    const found =
      options.cgroupRoot === null ? { unavailable: 'turned off (CGROUP_ROOT=off)' } : openCgroupHost(options.cgroupRoot, options.instance);
    if ('unavailable' in found) {
      log.warn('game servers run without cgroups: CPU is only a priority and memory is watched per process', { reason: found.unavailable });
      return (cgroups = null);
    }
    log.info('game servers run in cgroups', { version: found.version, parents: found.parents });
    return (cgroups = found);
  }

  return {
    async start() {
      const killed = (await confinement()?.removeAll()) ?? 0;
      if (killed > 0) log.warn('killed processes a previous service life left in its cgroups', { count: killed });
    },
    close() {
      cgroups?.close();
      cgroups = undefined;
      return Promise.resolve();
    },
    async uninstall() {
      // Nothing is kept for a server between its processes: its cgroup goes with each process.
    },
    isPortFree,
    async spawn(spec) {
      assertExecutable(spec.argv[0], spec.cwd, options.gameEnv.PATH);
      const { memoryMb, cpuPercent } = spec.limits;
      const group = (await confinement()?.create(spec.serverId, { memoryBytes: memoryMb * MIB, cpuPercent, pids: PIDS_MAX })) ?? null;
      try {
        return await spawnGame(spec, options.gameEnv, { group, niceBinary, log });
      } catch (err) {
        await group?.remove();
        throw err;
      }
    },
    killLeftover,
  };
}

function findNice(): string | null {
  for (const p of ['/usr/bin/nice', '/bin/nice']) if (fs.existsSync(p)) return p;
  return null;
}

/**
 * Binds the address for a moment, on its transport (a UDP socket for `udp`, else TCP): false when something
 * else holds it (EADDRINUSE) or it may not be bound.
 */
export function isPortFree({ host, port, transport }: GameAddress): Promise<boolean> {
  if (transport === 'udp') return isUdpPortFree(host, port);
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE' || err.code === 'EACCES') resolve(false);
      else reject(err);
    });
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

function isUdpPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = dgram.createSocket({ type: net.isIPv6(host) ? 'udp6' : 'udp4' });
    probe.once('error', (err: NodeJS.ErrnoException) => {
      probe.close();
      if (err.code === 'EADDRINUSE' || err.code === 'EACCES') resolve(false);
      else reject(err);
    });
    probe.bind({ port, address: host, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/** Where the limits come from: the game's cgroup, or else (group null) niceness through `nice` or setpriority. */
interface Confinement {
  group: ServerCgroup | null;
  niceBinary: string | null;
  log: Logger;
}

function spawnGame(spec: LaunchSpec, gameEnv: Record<string, string>, { group, niceBinary, log }: Confinement): Promise<GameProcess> {
  const niceness = group ? 0 : nicenessFor(sharesFor(spec.limits.cpuPercent)); // in a group, niceness weighs only within it
  const nice = niceness > 0 ? niceBinary : null;
  const [file, ...args] = group
    ? [SHELL, '-c', JOIN_SCRIPT, 'gsh-join', String(group.procsFiles.length), ...group.procsFiles, ...spec.argv]
    : nice ? [nice, '-n', String(niceness), ...spec.argv] : spec.argv;
  const child = spawnChild(file, args, {
    cwd: spec.cwd,
    env: { ...gameEnv, HOME: spec.cwd, [SERVER_ID_ENV]: spec.serverId },
    stdio: spec.ipc ? ['pipe', 'pipe', 'pipe', 'ipc'] : ['pipe', 'pipe', 'pipe'],
    detached: true, // own process group: kill(-pid) reaches the game's children too
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject); // ENOENT and friends: no process was started
    child.once('spawn', () => {
      child.removeListener('error', reject);
      child.on('error', () => undefined); // later errors (e.g. EPIPE on stdin) show up as the exit
      if (!nice && niceness > 0 && child.pid !== undefined) trySetPriority(child.pid, niceness); // pid: set once spawned
      const release = group ? (exit: ExitInfo) => releaseGroup(group, exit, spec.serverId, log) : (exit: ExitInfo) => Promise.resolve(exit);
      resolve(wrapChild(child, { argv: spec.argv, enforcesMemory: group !== null, release }));
    });
  });
}

/** After the game's exit: was it the OOM killer (read before the group goes), then the rest of its group goes. */
async function releaseGroup(group: ServerCgroup, exit: ExitInfo, serverId: string, log: Logger): Promise<ExitInfo> {
  const outOfMemory = group.oomKilled();
  if (!(await group.remove())) log.warn('a game server\'s cgroup could not be removed; its next start retries', { serverId });
  return outOfMemory ? { ...exit, outOfMemory: true } : exit;
}

/**
 * spawn's contract: a missing executable is a rejection, not a wrapper (sh, nice) that starts and exits 127.
 * Looked up as execvp(3) does: a name with a slash as a path (from the game's folder), any other along PATH.
 */
function assertExecutable(file: string, cwd: string, searchPath = ''): void {
  const candidates = file.includes('/') ? [path.resolve(cwd, file)] : searchPath.split(':').filter(Boolean).map((d) => path.join(d, file));
  const found = candidates.some((c) => {
    try {
      fs.accessSync(c, fs.constants.X_OK);
      return fs.statSync(c).isFile();
    } catch {
      return false;
    }
  });
  if (!found) throw Object.assign(new Error(`spawn ${file} ENOENT`), { code: 'ENOENT' });
}

function trySetPriority(pid: number, niceness: number): void {
  try {
    os.setPriority(pid, niceness);
  } catch {
    // Best effort: CPU priority is a preference, not a limit; a failure must not stop the game.
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
