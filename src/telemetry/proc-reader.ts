import fs from 'node:fs';
import os from 'node:os';

/** Cumulative resource use of one process tree at one moment. */
export interface TreeUsage {
  /**
   * CPU time in ms (user + system) of the root and its live descendants, plus the time of descendants that
   * have exited and were reaped inside the tree (cutime + cstime). It only grows while the tree is stable; a
   * descendant that exits without being reaped by the tree takes its time with it, so a delta can go
   * negative and the caller clamps it to 0.
   */
  cpuMs: number;
  /** Resident set of the root and its live descendants, bytes (shared pages count once per process). */
  rssBytes: number;
}

/**
 * Where the sampler gets CPU and memory from (the seam tests replace).
 *
 * Contract: readTrees(pids) returns an entry for every pid that exists, covering that pid and all its
 * descendants at the time of the call; a pid that does not exist (exited, or never was) has no entry. It
 * does not throw for a process that vanishes mid-read. One call per sampling round, for all servers, so an
 * implementation can scan the process table once.
 */
export interface ProcReader {
  readTrees(pids: number[]): Map<number, TreeUsage>;
}

interface ProcStat {
  ppid: number;
  cpuTicks: number;
  rssPages: number;
}

/**
 * Parses /proc/<pid>/stat (proc(5)). The command name (field 2) is in parentheses and may hold spaces and
 * ')', so fields are counted from the last ')'. After it: state(3) ppid(4) … utime(14) stime(15) cutime(16)
 * cstime(17) … rss(24, pages).
 */
export function parseStat(text: string): ProcStat | null {
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const f = text.slice(close + 2).split(' ');
  const num = (field: number) => Number(f[field - 3]);
  const stat = { ppid: num(4), cpuTicks: num(14) + num(15) + num(16) + num(17), rssPages: num(24) };
  return Number.isFinite(stat.ppid + stat.cpuTicks + stat.rssPages) ? stat : null;
}

/**
 * sysconf(3)'s PAGESIZE and CLK_TCK, as the kernel handed them to this process in its auxiliary vector
 * (getauxval(3): AT_PAGESZ = 6, AT_CLKTCK = 17), read from /proc/self/auxv (proc(5)): native-endian pairs of
 * machine words, type then value, ending with AT_NULL = 0. That is where glibc's sysconf takes them from, and it
 * costs a file read where `getconf` cost two process spawns per service start. Linux's own defaults where absent.
 */
export function machineFigures(auxvFile = '/proc/self/auxv'): { pageSize: number; clockTicks: number } {
  const figures = { pageSize: 4096, clockTicks: 100 };
  let auxv: Buffer;
  try {
    auxv = fs.readFileSync(auxvFile);
  } catch {
    return figures;
  }
  const word = process.arch === 'ia32' || process.arch === 'arm' ? 4 : 8;
  const read = (at: number) =>
    word === 4 ? (os.endianness() === 'LE' ? auxv.readUInt32LE(at) : auxv.readUInt32BE(at))
      : Number(os.endianness() === 'LE' ? auxv.readBigUInt64LE(at) : auxv.readBigUInt64BE(at));
  for (let at = 0; at + 2 * word <= auxv.length; at += 2 * word) {
    const type = read(at);
    if (type === 0) break;
    if (type === 6 && read(at + word) > 0) figures.pageSize = read(at + word);
    if (type === 17 && read(at + word) > 0) figures.clockTicks = read(at + word);
  }
  return figures;
}

/**
 * The Linux implementation: one pass over /proc/[pid]/stat per call (the only place the parent links are),
 * then a walk down from each root. Cost grows with the number of processes on the host, not with servers ×
 * processes; it is measured in the sampler tests and reported in the sampler's stats.
 */
export function createLinuxProcReader(procDir = '/proc'): ProcReader {
  const { pageSize, clockTicks } = machineFigures();
  const msPerTick = 1000 / clockTicks;

  function scan(): Map<number, ProcStat> {
    const all = new Map<number, ProcStat>();
    for (const name of fs.readdirSync(procDir)) {
      if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
      let text: string;
      try {
        text = fs.readFileSync(`${procDir}/${name}/stat`, 'latin1');
      } catch {
        continue; // exited between readdir and read
      }
      const stat = parseStat(text);
      if (stat) all.set(Number(name), stat);
    }
    return all;
  }

  return {
    readTrees(pids) {
      const result = new Map<number, TreeUsage>();
      if (pids.length === 0) return result;
      const all = scan();
      const children = new Map<number, number[]>();
      for (const [pid, s] of all) {
        const list = children.get(s.ppid);
        if (list) list.push(pid);
        else children.set(s.ppid, [pid]);
      }
      for (const root of pids) {
        if (!all.has(root)) continue;
        let ticks = 0;
        let pages = 0;
        const stack = [root];
        const seen = new Set<number>(); // pid reuse cannot make a cycle, but a guard costs nothing
        while (stack.length > 0) {
          const pid = stack.pop() as number;
          if (seen.has(pid)) continue;
          seen.add(pid);
          const s = all.get(pid) as ProcStat;
          ticks += s.cpuTicks;
          pages += s.rssPages;
          for (const child of children.get(pid) ?? []) stack.push(child);
        }
        result.set(root, { cpuMs: ticks * msPerTick, rssBytes: pages * pageSize });
      }
      return result;
    },
  };
}
