import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemClock } from '../../src/clock';
import { openDb, type Db } from '../../src/store/db';
import { instanceName } from '../../src/runtime/host/cgroups';
import { createLocalEnvironment } from '../../src/runtime/host/local-environment';
import { runtimeConfigDefaults, type RuntimeConfig } from '../../src/runtime/server/types';
import { composeRuntime, type Runtime } from '../../src/service';
import { loadSoftwareCatalog } from '../../src/runtime/software/software-catalog';
import { createStore } from '../../src/store';
import type { Plan } from '../../src/catalog/plans';
import type { Logger } from '../../src/log';
import type { Environment } from '../../src/runtime/host/environment';
import { createLocalStorage } from '../../src/runtime/host/local-storage';
import type { ServerStorage } from '../../src/runtime/host/storage';
import type { ServerState } from '../../src/runtime/server/states';
import { createActors, serviceActor, userActor } from '../../src/actors';

export const fixtureSoftwareDir = path.join(__dirname, 'fixtures', 'software');

const plan = (id: string, memory_mb: number, cpu_percent: number, player_slots: number, disk_mb = 1024): Plan => ({
  id, name: id, description: `test plan ${id}`, memory_mb, cpu_percent, player_slots, disk_mb, backups: 3,
});
/** The runtime's plans in these tests (RuntimeDeps.plans, src/service.ts): the public catalog stays as it is. */
export const testPlans = [plan('small', 1024, 50, 5), plan('tiny', 128, 100, 2), plan('roomy', 1024, 50, 5, 4096)];
export type TestPlanId = 'small' | 'tiny' | 'roomy';

/** Where the runtime tests find cgroups: the host's, as the service's default (CGROUP_ROOT). */
export const CGROUP_ROOT = '/sys/fs/cgroup';

/** A fresh SQLite file and DATA_DIR (docs/conventions.md "Tests": tests never share a database). */
export interface TestHost {
  dir: string;
  dataDir: string;
  dbFile: string;
  db: Db;
  config: RuntimeConfig;
  errors: string[];
  /** Every warning the runtime logged, as `message {fields}`. */
  warnings: string[];
  newRuntime(): Runtime;
  cleanup(): void;
}

/**
 * Builds a runtime's environment and storage from its log (the Docker tests' containers and volumes); the local ones
 * by default.
 */
export type EnvironmentFactory = (log: Logger, config: RuntimeConfig) => { environment: Environment; storage: ServerStorage };

export function createTestHost(
  name: string,
  overrides: Partial<RuntimeConfig> = {},
  cgroupRoot: string | null = CGROUP_ROOT,
  environment?: EnvironmentFactory,
): TestHost {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gsh-${name}-`));
  const dataDir = path.join(dir, 'data');
  const dbFile = path.join(dir, 'db.sqlite');
  const db = openDb(dbFile);
  db.prepare(`INSERT INTO users (id, email, created_at) VALUES ('usr_test', ?, ?)`).run(`${name}@example.test`, new Date().toISOString());
  const config: RuntimeConfig = {
    ...runtimeConfigDefaults,
    dataDir,
    stopTimeoutMs: 5_000,
    backoffMs: 200,
    memoryCheckMs: 250,
    reconcileMs: 500,
    ...overrides,
  };
  const errors: string[] = [];
  const warnings: string[] = [];
  const host: TestHost = {
    dir, dataDir, dbFile, db, config, errors, warnings,
    newRuntime: () => makeRuntime(db, config, errors, { cgroupRoot, warnings, environment }),
    cleanup: () => {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return host;
}

/**
 * Gives every test of a file its own host and started runtime (docs/conventions.md "Tests"): the returned object
 * holds the running test's. After each test the runtime is closed, the host removed, and no error may have been
 * logged (the state machine never left its table).
 */
export function hostPerTest(
  name: string,
  overrides: Partial<RuntimeConfig> = {},
  cgroupRoot: string | null = CGROUP_ROOT,
): { host: TestHost; runtime: Runtime } {
  const current = {} as { host: TestHost; runtime: Runtime };
  beforeEach(async () => {
    current.host = createTestHost(name, overrides, cgroupRoot);
    current.runtime = current.host.newRuntime();
    await current.runtime.start();
  });
  afterEach(async () => {
    await current.runtime.close();
    current.host.cleanup();
    expect(current.host.errors).toEqual([]);
  }, 60_000);
  return current;
}

/** Runtime tests are not about quotas (test/integration/quota.test.ts is). */
const noQuotas = { servers: 1_000_000, running: 1_000_000, memory_mb: 1_000_000_000 };

/**
 * A runtime whose log records errors, so a test can assert the state machine never left its table, and
 * warnings. Its games get the environment the service's default config gives them (PATH, LANG).
 */
export function makeRuntime(
  db: Db,
  config: RuntimeConfig,
  errors: string[] = [],
  { cgroupRoot = CGROUP_ROOT, warnings = [], environment }: { cgroupRoot?: string | null; warnings?: string[]; environment?: EnvironmentFactory } = {},
): Runtime {
  const log: Logger = {
    info: () => undefined,
    warn: (msg, fields) => void warnings.push(`${msg} ${JSON.stringify(fields)}`),
    error: (msg, fields) => void errors.push(`${msg} ${JSON.stringify(fields)}`),
  };
  // Runtime tests act as the service itself, unless a test runs its work as someone (src/actors.ts).
  const actors = createActors(serviceActor('unknown'));
  const local = () => ({
    environment: createLocalEnvironment({ gameEnv: { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8' }, cgroupRoot, instance: instanceName(config.dataDir), log }),
    storage: createLocalStorage(config.dataDir),
  });
  return composeRuntime({
    store: createStore(db, systemClock, { host: '127.0.0.1', portRange: [1024, 65535] }, { defaults: noQuotas, plans: testPlans }, actors.current),
    clock: systemClock,
    ...(environment?.(log, config) ?? local()),
    catalog: loadSoftwareCatalog({ operatorDir: fixtureSoftwareDir }),
    config,
    plans: testPlans,
    log,
    actors,
    schedules: { perServer: 10, tasksPerSchedule: 10, checkMs: 60_000, secondMs: 10 },
  });
}

/** Who sends console commands in runtime tests: the test user, with a token id as the API would pass it. */
export const sender = userActor('usr_test', 'tok_runtimetest1');

let serial = 0;

/** Inserts a servers row the way the lead's repository does: state installing, host and port set. */
export function insertServer(
  db: Db,
  opts: { software: string; gameVersion: string; port: number; plan?: TestPlanId; transport?: 'tcp' | 'udp' },
): string {
  const id = `srv_test${process.pid}x${++serial}`;
  const now = new Date().toISOString();
  db.prepare(
    `INSERT INTO servers (id, user_id, name, plan, version, software, game_version, state, desired_state, host, port, transport, created_at, updated_at)
     VALUES (?, 'usr_test', ?, ?, ?, ?, ?, 'installing', 'stopped', '127.0.0.1', ?, ?, ?, ?)`,
  ).run(id, `server ${serial}`, opts.plan ?? 'small', `${opts.software}-${opts.gameVersion}`, opts.software, opts.gameVersion, opts.port, opts.transport ?? 'tcp', now, now);
  return id;
}

export async function waitFor<T>(what: string, probe: () => T | undefined | null | false, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function waitState(runtime: Runtime, serverId: string, state: ServerState, timeoutMs = 45_000): Promise<true> {
  return waitFor(`${serverId} to be ${state} (is ${safeState(runtime, serverId)})`, () => runtime.lifecycle.state(serverId) === state, timeoutMs);
}

function safeState(runtime: Runtime, serverId: string): string {
  try {
    return runtime.lifecycle.state(serverId);
  } catch {
    return 'gone';
  }
}

/** Resolves with the action once it has completed (succeeded or failed). */
export function waitAction(runtime: Runtime, serverId: string, actionId: string, timeoutMs = 45_000) {
  return waitFor(`action ${actionId} to complete`, () => {
    const a = runtime.power.getAction(serverId, actionId);
    return a.status === 'succeeded' || a.status === 'failed' ? a : null;
  }, timeoutMs);
}

export function isPidAlive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}
