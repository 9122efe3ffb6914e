'use strict';
/**
 * Helpers shared by the bench parts: where dist/ is, percentiles, the machine description, /proc readings of
 * one process, and small process plumbing. Plain JS on purpose: the bench runs against the compiled dist/.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const DIST = path.join(ROOT, 'dist', 'src');
const RESULTS = path.join(ROOT, 'bench-results');

/** require() of a compiled module, e.g. dist('service') → dist/src/service.js. */
function dist(mod) {
  return require(path.join(DIST, mod));
}

function tempDir(label) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `gsh-bench-${label}-`));
}

/** The q-quantile (0..1) of numbers, nearest-rank on a sorted copy. */
function quantile(xs, q) {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}

const median = (xs) => quantile(xs, 0.5);

/** Milliseconds since `start` (a process.hrtime.bigint()). */
const msSince = (start) => Number(process.hrtime.bigint() - start) / 1e6;

/** What the numbers ran on; BENCHMARKS.md copies it. */
function machine() {
  const cpuinfo = fs.readFileSync('/proc/cpuinfo', 'utf8');
  const model = /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1] ?? os.cpus()[0]?.model ?? 'unknown';
  const mhz = /^cpu MHz\s*:\s*(.*)$/m.exec(cpuinfo)?.[1];
  const sqlite = (() => {
    try {
      const Database = require(path.join(ROOT, 'node_modules', 'better-sqlite3'));
      const db = new Database(':memory:');
      const v = db.prepare('select sqlite_version() v').get().v;
      db.close();
      return v;
    } catch {
      return 'unknown';
    }
  })();
  return {
    nproc: os.availableParallelism ? os.availableParallelism() : os.cpus().length,
    memory_gib: +(os.totalmem() / 2 ** 30).toFixed(1),
    cpu_model: model,
    cpu_mhz: mhz ? Number(mhz) : null,
    node: process.version,
    sqlite,
    kernel: os.release(),
    tmpdir: os.tmpdir(),
  };
}

const CLK_TCK = 100; // USER_HZ; 100 on every Linux we run on (getconf CLK_TCK)
const PAGE = 4096;

/**
 * CPU time (utime + stime, ms) and RSS (bytes) of one process, from /proc/<pid>/stat (proc(5): fields 14, 15
 * after the command name) and /proc/<pid>/status (VmRSS). Children are not counted: this is that process only.
 */
function procUsage(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? Number(fields[21]) * (PAGE / 1024));
  return { cpuMs: (ticks * 1000) / CLK_TCK, rssBytes: rssKb * 1024 };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Resolves with the first IPC message of `child` that satisfies `pred`; rejects if the child exits first. */
function nextMessage(child, pred, timeoutMs = 120_000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`no message within ${timeoutMs} ms`)), timeoutMs);
    const onMsg = (m) => pred(m) && done(null, m);
    const onExit = (code, sig) => done(new Error(`child exited (${code ?? sig}) before the message`));
    function done(err, m) {
      clearTimeout(timer);
      child.off('message', onMsg);
      child.off('exit', onExit);
      err ? reject(err) : resolve(m);
    }
    child.on('message', onMsg);
    child.once('exit', onExit);
  });
}

/** Resolves when the child has exited (at once if it already has). */
function exited(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => child.once('exit', () => r()));
}

/** Asks a service child to stop gracefully ({type:'stop'}), SIGKILLs it after `graceMs`; resolves once it exited. */
async function stopChild(child, graceMs) {
  if (!child.connected) return;
  child.send({ type: 'stop' });
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited(child);
  clearTimeout(timer);
}

const fmt = (x, digits = 0) => (x === null || x === undefined || Number.isNaN(x) ? '–' : Number(x).toFixed(digits));

module.exports = { ROOT, DIST, RESULTS, dist, tempDir, quantile, median, msSince, machine, procUsage, sleep, nextMessage, exited, stopChild, fmt };
