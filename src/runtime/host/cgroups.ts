// Control groups for game servers: one group per running server, under a parent this service owns.
// Kernel interfaces: Documentation/admin-guide/cgroup-v2.rst (v2) and Documentation/admin-guide/cgroup-v1/
// (memory.rst, pids.rst, cpuacct.rst), Documentation/scheduler/sched-bwc.rst (the CPU quota, both versions).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Tasks (processes and threads: the pids controller counts both) one server may have: room for a JVM's few
 * dozen threads and a Node game's dozen, none for a fork bomb.
 */
export const PIDS_MAX = 512;
/** The CFS bandwidth period (the kernel's default, 100 ms); the quota is cpu_percent of it per core. */
const CPU_PERIOD_US = 100_000;
/** How long a removal waits for killed processes to leave their group before giving up. */
const REMOVE_TRIES = 250;
const REMOVE_EVERY_MS = 20;
/** A server id as a folder name (ids are `srv_` and base 36, docs/conventions.md "IDs and timestamps"). */
const GROUP_NAME = /^[A-Za-z0-9_-]+$/;

export interface CgroupLimits {
  memoryBytes: number;
  /** Percent of one core (100 = one core), docs/conventions.md "IDs and timestamps". */
  cpuPercent: number;
  pids: number;
}

/** One server's group. Reads of a group that does not exist answer as for an empty one. */
export interface ServerCgroup {
  /** The cgroup.procs files a process writes its own pid to, to join (one per v1 hierarchy; one in v2). */
  readonly procsFiles: string[];
  /** True once the kernel's OOM killer killed a task of the group (v1 memory.oom_control, v2 memory.events). */
  oomKilled(): boolean;
  /** CPU time the group used, in µs (v1 cpuacct.usage, v2 cpu.stat usage_usec); null when not accounted here. */
  cpuUsageUs(): number | null;
  /** The processes in the group now. */
  pids(): number[];
  /**
   * SIGKILLs whatever is in the group (only this service puts processes there, so all of it is a game's), waits
   * until it is empty and removes it. Resolves false if it could not be removed; never rejects.
   */
  remove(): Promise<boolean>;
}

/** The cgroups of one service instance (`gsh/<instance>/<server id>` in each hierarchy). */
export interface CgroupHost {
  readonly version: 1 | 2;
  /** The instance's parent folders, for the log. */
  readonly parents: string[];
  /** The handle of a server's group, whether it exists or not. */
  group(serverId: string): ServerCgroup;
  /**
   * Makes the server's group afresh with these limits (an older group of that name goes first, with whatever
   * is still in it). Rejects when the kernel refuses a folder or a limit.
   */
  create(serverId: string, limits: CgroupLimits): Promise<ServerCgroup>;
  /** Removes every server group of this instance; resolves with how many processes had to be killed. */
  removeAll(): Promise<number>;
  /** Removes the instance's parent folders if they are empty (shutdown); never rejects. */
  close(): void;
}

type Controller = 'memory' | 'cpu' | 'cpuacct' | 'pids';

interface Layout {
  version: 1 | 2;
  /**
   * The instance's parent folder in the hierarchy that holds each controller (v2: the same for all); memory
   * and cpu are always there (a layout without them is refused).
   */
  parents: Record<'memory' | 'cpu', string> & Partial<Record<'cpuacct' | 'pids', string>>;
}

/** Names this service's groups: a hash of its data folder, so two services on one host never touch each other's. */
export function instanceName(dataDir: string): string {
  return crypto.createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16);
}

/**
 * Finds cgroup v2 (`<root>/cgroup.controllers`) or else the v1 hierarchies (`<root>/memory`, `<root>/cpu`, and
 * `cpuacct` and `pids` when present) and creates this instance's parent folders, which proves they are
 * writable. Memory and CPU are required; without them, or when anything is refused, it answers why not.
 */
export function openCgroupHost(root: string, instance: string): CgroupHost | { unavailable: string } {
  let failure = '';
  // Twice: another instance's close() may remove the shared `gsh` folder between our mkdirs (ENOENT).
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const layout = fs.existsSync(path.join(root, 'cgroup.controllers')) ? v2Layout(root, instance) : v1Layout(root, instance);
      return typeof layout === 'string' ? { unavailable: layout } : createHost(layout);
    } catch (err) {
      failure = (err as Error).message;
    }
  }
  return { unavailable: failure };
}

function v2Layout(root: string, instance: string): Layout | string {
  const available = fs.readFileSync(path.join(root, 'cgroup.controllers'), 'utf8').split(/\s+/);
  if (!available.includes('memory') || !available.includes('cpu')) {
    return `cgroup v2 at ${root} offers no memory and cpu controllers (only: ${available.join(' ').trim() || 'none'})`;
  }
  const wanted = ['memory', 'cpu', ...(available.includes('pids') ? ['pids'] : [])];
  const parent = path.join(root, 'gsh', instance);
  // A controller reaches a group only when every ancestor enables it for its children (cgroup-v2.rst
  // "Enabling and Disabling"); our own folders hold no process, so enabling is allowed there.
  for (const dir of [root, path.join(root, 'gsh'), parent]) {
    fs.mkdirSync(dir, { recursive: true });
    const enabled = readOr(path.join(dir, 'cgroup.subtree_control'), '').split(/\s+/);
    const missing = wanted.filter((c) => !enabled.includes(c));
    if (missing.length > 0) fs.writeFileSync(path.join(dir, 'cgroup.subtree_control'), missing.map((c) => `+${c}`).join(' '));
  }
  const parents: Layout['parents'] = { memory: parent, cpu: parent, cpuacct: parent };
  if (wanted.includes('pids')) parents.pids = parent;
  return { version: 2, parents };
}

/** A file each v1 controller's hierarchy has at its root, to tell a mounted hierarchy from an empty folder. */
const V1_MARKERS: Record<Controller, string> = {
  memory: 'memory.limit_in_bytes',
  cpu: 'cpu.cfs_quota_us',
  cpuacct: 'cpuacct.usage',
  pids: 'cgroup.procs',
};

function v1Layout(root: string, instance: string): Layout | string {
  const parents: Partial<Record<Controller, string>> = {};
  for (const c of Object.keys(V1_MARKERS) as Controller[]) {
    const mount = path.join(root, c);
    if (!fs.existsSync(path.join(mount, 'cgroup.procs')) || !fs.existsSync(path.join(mount, V1_MARKERS[c]))) continue;
    // realpath: `cpu` and `cpuacct` are often one hierarchy mounted as `cpu,cpuacct` with two symlinks.
    parents[c] = path.join(fs.realpathSync(mount), 'gsh', instance);
  }
  if (!parents.memory || !parents.cpu) return `no cgroup v2 and no cgroup v1 memory and cpu hierarchies under ${root}`;
  for (const dir of new Set(Object.values(parents))) fs.mkdirSync(dir, { recursive: true });
  return { version: 1, parents: { ...parents, memory: parents.memory, cpu: parents.cpu } };
}

function createHost(layout: Layout): CgroupHost {
  const parents = [...new Set(Object.values(layout.parents))];
  const groupOf = (serverId: string) => serverGroup(layout, serverId);
  return {
    version: layout.version,
    parents,
    group: groupOf,
    async create(serverId, limits) {
      const group = groupOf(serverId);
      if (!(await group.remove())) throw new Error(`an older cgroup of ${serverId} could not be removed`);
      for (const dir of new Set(Object.values(layout.parents).map((p) => path.join(p, serverId)))) fs.mkdirSync(dir);
      try {
        writeLimits(layout, serverId, limits);
      } catch (err) {
        await group.remove();
        throw err;
      }
      return group;
    },
    async removeAll() {
      const names = new Set(parents.flatMap((p) => subfolders(p)).filter((n) => GROUP_NAME.test(n)));
      let killed = 0;
      for (const name of names) {
        const group = groupOf(name);
        killed += group.pids().length;
        await group.remove();
      }
      return killed;
    },
    close() {
      for (const parent of parents) for (const dir of [parent, path.dirname(parent)]) tryRmdir(dir);
    },
  };
}

function writeLimits(layout: Layout, serverId: string, limits: CgroupLimits): void {
  const file = (c: 'memory' | 'cpu', name: string) => path.join(layout.parents[c], serverId, name);
  const quotaUs = Math.max(1000, Math.round((limits.cpuPercent / 100) * CPU_PERIOD_US));
  if (layout.version === 2) {
    fs.writeFileSync(file('memory', 'memory.max'), String(limits.memoryBytes));
    writeIfPresent(file('memory', 'memory.swap.max'), '0'); // the plan's memory is all it gets: no swap on top
    writeIfPresent(file('memory', 'memory.oom.group'), '1'); // an OOM kill takes the whole game, not a part of it
    fs.writeFileSync(file('cpu', 'cpu.max'), `${quotaUs} ${CPU_PERIOD_US}`);
  } else {
    fs.writeFileSync(file('memory', 'memory.limit_in_bytes'), String(limits.memoryBytes));
    // memory+swap at the same value: no swap on top (memory.rst 2.4); absent when swap accounting is off.
    writeIfPresent(file('memory', 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes));
    fs.writeFileSync(file('cpu', 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
    fs.writeFileSync(file('cpu', 'cpu.cfs_quota_us'), String(quotaUs));
  }
  if (layout.parents.pids) fs.writeFileSync(path.join(layout.parents.pids, serverId, 'pids.max'), String(limits.pids));
}

function serverGroup(layout: Layout, serverId: string): ServerCgroup {
  if (!GROUP_NAME.test(serverId)) throw new Error(`not a cgroup name: ${serverId}`);
  const dirs = [...new Set(Object.values(layout.parents).map((p) => path.join(p, serverId)))];
  const at = (c: 'memory' | 'cpu', name: string) => path.join(layout.parents[c], serverId, name);
  const pids = () => [...new Set(dirs.flatMap((d) => readOr(path.join(d, 'cgroup.procs'), '').split('\n').filter(Boolean).map(Number)))];
  return {
    procsFiles: dirs.map((d) => path.join(d, 'cgroup.procs')),
    oomKilled() {
      const text = readOr(at('memory', layout.version === 2 ? 'memory.events' : 'memory.oom_control'), '');
      return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0) > 0;
    },
    cpuUsageUs() {
      if (layout.version === 2) {
        const usage = /^usage_usec (\d+)$/m.exec(readOr(at('cpu', 'cpu.stat'), ''))?.[1];
        return usage === undefined ? null : Number(usage);
      }
      const cpuacct = layout.parents.cpuacct;
      const ns = cpuacct ? readOr(path.join(cpuacct, serverId, 'cpuacct.usage'), '').trim() : '';
      return ns === '' ? null : Math.floor(Number(ns) / 1000);
    },
    pids,
    async remove() {
      for (let i = 0; i < REMOVE_TRIES; i++) {
        const left = pids();
        for (const pid of left) killQuietly(pid);
        if (left.length === 0 && dirs.every(tryRmdir)) return true;
        await new Promise((r) => setTimeout(r, REMOVE_EVERY_MS));
      }
      return false;
    },
  };
}

function readOr(file: string, fallback: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}

/** Optional interface files (swap accounting, newer kernels): written when the kernel offers them. */
function writeIfPresent(file: string, value: string): void {
  if (fs.existsSync(file)) fs.writeFileSync(file, value);
}

function subfolders(dir: string): string[] {
  try {
    return fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return [];
  }
}

/** rmdir(2) is how a cgroup is removed; a missing one counts as removed, a busy one (EBUSY) does not. */
function tryRmdir(dir: string): boolean {
  try {
    fs.rmdirSync(dir);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
}
