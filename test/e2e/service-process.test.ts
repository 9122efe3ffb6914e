// The service as operators run it (`node dist/src/main.js`, built by `npm test`), killed with SIGKILL in the
// middle of a burst of creates and actions, several times, then stopped with SIGTERM. Checks: nothing that was
// acknowledged is lost, no record is half-written, game processes are reconciled (no orphan, no duplicate, no
// port collision), shutdown finishes in-flight requests and stops the games cleanly, and no token ever reaches
// a log line.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import Database from 'better-sqlite3';
import { runCli } from '../../src/cli';
import { tempDir } from '../helpers/app';
import { until } from '../helpers/wait';
import { instanceName, openCgroupHost } from '../../src/runtime/host/cgroups';

jest.setTimeout(300_000);

const root = path.join(__dirname, '..', '..');
const dataDir = tempDir('process');
// The burst makes far more than 120 calls a minute with one token, and up to 92 servers for one account; the rate
// limit and the servers and memory quotas are raised as an operator would.
const env = {
  ...process.env,
  DATA_DIR: dataDir,
  PORT: '0',
  HOST: '127.0.0.1',
  GAME_PORT_RANGE: '27100-27199',
  METRICS_INTERVAL_S: '2',
  RATE_LIMIT_PER_MINUTE: '100000',
  QUOTA_SERVERS: '99',
  QUOTA_MEMORY_MB: '100000',
};
const logs: string[] = [];
let token = '';

interface Running {
  child: ChildProcess;
  base: string;
}

/** Every service process this file started: whatever is still alive at the end is killed by pid. */
const started: ChildProcess[] = [];

async function startService(): Promise<Running> {
  const child = spawn(process.execPath, [path.join(root, 'dist', 'src', 'main.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let buffered = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        logs.push(line);
        const entry = JSON.parse(line);
        if (entry.msg === 'listening') resolve(entry.address.port);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => logs.push(chunk.toString()));
    child.once('exit', (code) => reject(new Error(`service exited early (${code}): ${logs.slice(-5).join('\n')}`)));
  });
  return { child, base: `http://127.0.0.1:${port}` };
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));

/**
 * Game processes of this test's services, found through /proc: the server id the runtime puts in their environment,
 * and a working folder inside this test's DATA_DIR (a game's environment never holds the service's DATA_DIR).
 */
function gameProcesses(): Map<string, number[]> {
  const found = new Map<string, number[]>();
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let environ: string;
    try {
      environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
    } catch {
      continue;
    }
    const vars = environ.split('\0');
    const id = vars.find((v) => v.startsWith('GSH_SERVER_ID='))?.slice('GSH_SERVER_ID='.length);
    if (id && inDataDir(pid)) found.set(id, [...(found.get(id) ?? []), Number(pid)]);
  }
  return found;
}

function inDataDir(pid: string): boolean {
  try {
    return fs.readlinkSync(`/proc/${pid}/cwd`).startsWith(dataDir + path.sep);
  } catch {
    return false; // exited meanwhile
  }
}

function api(base: string, method: string, p: string, body?: unknown, headers: Record<string, string> = {}) {
  return fetch(base + p, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
}

beforeAll(() => {
  const out: string[] = [];
  expect(runCli(['token', 'create', '--email', 'ops@example.com', '--name', 'crash-test'], env, (s) => out.push(s), () => {})).toBe(0);
  token = out[out.length - 1];
});
afterAll(async () => {
  // A failed assertion leaves the service of that moment running: it goes first, then any game it left, then the
  // cgroups a killed service could not remove (its next boot would have; this DATA_DIR has none).
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const pids of gameProcesses().values()) for (const pid of pids) process.kill(pid, 'SIGKILL');
  const cgroups = openCgroupHost('/sys/fs/cgroup', instanceName(dataDir));
  if ('removeAll' in cgroups) {
    await cgroups.removeAll();
    cgroups.close();
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('kill -9 mid-burst, three times: nothing acknowledged is lost, games are reconciled; then a graceful stop', async () => {
  let svc = await startService();
  // Two servers that are meant to run through everything below.
  const keepers: string[] = [];
  for (const name of ['keeper-1', 'keeper-2']) {
    const res = await api(svc.base, 'POST', '/v1/servers', { name, plan: 'micro', version: 'flying-squid-1.20' });
    keepers.push(((await res.json()) as { id: string }).id);
  }
  for (const id of keepers) await api(svc.base, 'POST', `/v1/servers/${id}/actions`, { type: 'start' });
  await until('keepers running', async () => {
    const states = await Promise.all(keepers.map(async (id) => ((await (await api(svc.base, 'GET', `/v1/servers/${id}`)).json()) as { state: string }).state));
    return states.every((s) => s === 'running');
  });

  const acknowledged = new Map<string, { id: string; name: string }>(); // idempotency key → created server
  for (let round = 1; round <= 3; round++) {
    // A burst of creates (each followed by a stop action on it) and restarts of a keeper; kill -9 mid-way.
    let answered = 0;
    const burst = Array.from({ length: 30 }, async (_, i) => {
      const key = `round-${round}-${i}`;
      const body = { name: `burst ${round}.${i}`, plan: 'micro', version: 'flying-squid-1.20' };
      try {
        const res = await api(svc.base, 'POST', '/v1/servers', body, { 'Idempotency-Key': key });
        if (res.status === 201) {
          const server = (await res.json()) as { id: string; name: string };
          acknowledged.set(key, server);
          answered++;
          await api(svc.base, 'POST', `/v1/servers/${server.id}/actions`, { type: 'stop' });
        }
      } catch {
        // The connection died with the service: not acknowledged, so the client would retry.
      }
    });
    await until('a third of the burst answered', () => answered >= 10, 30_000);
    svc.child.kill('SIGKILL');
    await Promise.allSettled(burst);
    await exited(svc.child);

    // The launchers notice their parent is gone (IPC channel closed) and exit: nothing is orphaned.
    await until('no orphaned game process', () => gameProcesses().size === 0, 20_000);

    svc = await startService();
    // Every acknowledged create survived, and a retry with its key replays it rather than creating another.
    for (const [key, server] of acknowledged) {
      const got = await api(svc.base, 'GET', `/v1/servers/${server.id}`);
      expect([key, got.status]).toEqual([key, 200]);
      const retry = await api(svc.base, 'POST', '/v1/servers', { name: server.name, plan: 'micro', version: 'flying-squid-1.20' }, { 'Idempotency-Key': key });
      expect(retry.status).toBe(201);
      expect(((await retry.json()) as { id: string }).id).toBe(server.id);
    }
    // No half-written record; every server has its own port.
    const db = new Database(path.join(dataDir, 'gsh.sqlite'), { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const rows = db.prepare('SELECT id, port, name, plan, software FROM servers').all() as Array<{ port: number | null; name: string; plan: string; software: string }>;
    db.close();
    expect(rows.every((r) => r.port !== null && r.name && r.plan && r.software)).toBe(true);
    expect(new Set(rows.map((r) => r.port)).size).toBe(rows.length);

    // The servers meant to run are running again, each exactly once; no other game process exists.
    await until('keepers running again, one process each', async () => {
      const procs = gameProcesses();
      const states = await Promise.all(keepers.map(async (id) => ((await (await api(svc.base, 'GET', `/v1/servers/${id}`)).json()) as { state: string }).state));
      return states.every((s) => s === 'running') && keepers.every((id) => procs.get(id)?.length === 1) && procs.size === keepers.length;
    });
  }

  // Requests that leak secrets into places that get logged: a token in the path, a bad bearer token.
  await api(svc.base, 'GET', `/v1/servers/${token}`);
  await fetch(`${svc.base}/v1/servers`, { headers: { Authorization: 'Bearer gsh_notarealtoken_butlookslikeone' } });

  // Graceful stop: requests in flight when SIGTERM arrives are answered; games stop with their stop command.
  const crashesBefore = countCrashes();
  // One request surely in flight: its headers are read (the 100 Continue says so, RFC 9110 §10.1.1) and its body
  // comes after SIGTERM; a burst beside it, some of which may be refused before they are accepted.
  const held = requestWithHeldBody(svc.base, '/v1/servers', '{"name": 7}');
  await held.continued;
  const inFlight = Array.from({ length: 20 }, () => api(svc.base, 'GET', '/v1/servers?limit=100').then((r) => r.status));
  svc.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 200));
  held.sendBody();
  const statuses = await Promise.all(inFlight.map((p) => p.catch(() => 0)));
  expect(await held.status).toBe(400); // answered (the body is invalid, so nothing is created meanwhile)
  expect(await exited(svc.child)).toBe(0);
  // Each was answered, or refused before it was accepted (0: connection refused): none cut off mid-way.
  expect(statuses.filter((s) => s !== 200 && s !== 0)).toEqual([]);
  expect(gameProcesses().size).toBe(0);
  expect(countCrashes()).toBe(crashesBefore); // a clean stop is not a crash
  expect(logs.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
  const consoleLog = fs.readFileSync(path.join(dataDir, 'servers', keepers[0], 'logs', 'console.log'), 'utf8');
  expect(consoleLog).toMatch(/stop/i);

  // No token, valid or not, in any log line.
  expect(logs.length).toBeGreaterThan(50);
  for (const line of logs) expect(line).not.toMatch(/gsh_[A-Za-z0-9_-]{4,}/);
  expect(logs.some((l) => l.includes('[redacted]'))).toBe(true);
});

/** A POST that sends its headers with Expect: 100-continue and its body only when sendBody() is called. */
function requestWithHeldBody(base: string, p: string, body: string) {
  const req = http.request(`${base}${p}`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Expect: '100-continue',
    },
  });
  const continued = new Promise<void>((resolve) => req.once('continue', resolve));
  const status = new Promise<number>((resolve, reject) => {
    req.once('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('error', reject);
  });
  req.flushHeaders();
  return { continued, status, sendBody: () => req.end(body) };
}

function countCrashes(): number {
  const db = new Database(path.join(dataDir, 'gsh.sqlite'), { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM crashes').get() as { n: number }).n;
  } finally {
    db.close();
  }
}
