import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import supertest from 'supertest';
import { loadConfig, type Config } from '../../src/config';
import { buildService, type BuildOptions } from '../../src/service';
import { createLogger, silentLogger, type Logger } from '../../src/log';
import type { Scope } from '../../src/auth/tokens';
import type { Clock } from '../../src/clock';
import { createContractChecker, type ContractChecker } from './contract';
import { answerClientErrors } from '../../src/http/client-errors';
import { loadSpec, type Spec } from '../../src/spec';
import { openDb } from '../../src/store/db';
import { createOpenApi, type OpenApi } from '../../src/http/openapi';

export const allScopes: Scope[] = ['servers:read', 'servers:write', 'tokens:manage'];

/** A clock tests move by hand. */
export function manualClock(start = Date.parse('2026-11-22T08:00:00.000Z')): Clock & { advance(ms: number): void } {
  let now = start;
  return { now: () => now, advance: (ms) => void (now += ms) };
}

export function tempDir(label: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `gsh-${label}-`));
}

/**
 * For a folder no app owns (an app's close() removes only the folder it made itself): a maker of temporary
 * folders, each removed once the file's tests are done. Call it at a test file's top level, where hooks are made.
 */
export function tempDirsOfFile(label: string): () => string {
  const made: string[] = [];
  afterAll(() => made.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));
  return () => {
    const dir = tempDir(label);
    made.push(dir);
    return dir;
  };
}

export interface TestAppOptions extends BuildOptions {
  /** Environment as an operator would set it (GAME_PORT_RANGE, RATE_LIMIT_PER_MINUTE, …). */
  env?: Record<string, string>;
  /** Boot the runtime and sampler (reconcile loop, timers). Off by default: most tests need only the API. */
  boot?: boolean;
  /** A folder of software definitions (and their launchers) to install as the operator's, in DATA_DIR/software. */
  software?: string;
  /** Where the service logs; silent unless DEBUG_LOG is set. */
  logger?: Logger;
}

/**
 * What every test app of a jest worker shares, built by its first app: the parsed spec, openapi-backend's router
 * and the request validators it compiles as operations are used (src/http/openapi.ts), and the contract checker
 * with the response validators it compiles. None of them changes once built, so sharing them cannot carry one
 * test's state into another; each app still gets its own database, DATA_DIR, service and clock
 * (docs/conventions.md "Tests").
 *
 * Jest gives every test file its own module registry and global object, but hands every file the same core module
 * objects; so the parts are kept under a symbol on `node:os`'s, and live as long as the worker. Compiling the same
 * validators again in every file cost about 8 % of the suite's CPU. The parts come from the first file's realm:
 * the service code of a later file reads their results with Array.isArray and property reads, never instanceof.
 */
const SHARED_PARTS = Symbol.for('gsh.test.sharedParts');
type SharedParts = { spec: Spec; openapi: OpenApi; check: ContractChecker };

function sharedParts(): Promise<SharedParts> {
  const worker = os as unknown as Record<symbol, Promise<SharedParts> | undefined>;
  worker[SHARED_PARTS] ??= (async () => {
    const spec = loadSpec();
    return { spec, openapi: await createOpenApi(spec), check: await createContractChecker(spec) };
  })();
  return worker[SHARED_PARTS];
}

/**
 * The image of a database every migration has run on (src/store/db.ts openDb, in memory), made by the file's first
 * app and written out for each app: each still gets a real SQLite file of its own, which openDb then opens as it
 * would any, and the 30-odd migrations (an fsynced transaction) no longer run for every app of the run.
 */
let migrated: Buffer | undefined;

function freshDatabase(file: string): void {
  if (!migrated) {
    const db = openDb(':memory:');
    migrated = db.serialize();
    db.close();
  }
  fs.writeFileSync(file, migrated);
}

/**
 * A fresh service, built by the same wiring as `npm start` (src/service.ts), on its own SQLite file and
 * DATA_DIR, with every response checked against the spec. Game ports default to a range per test file
 * (from JEST_WORKER_ID) so files running in parallel never collide; GSH_TEST_PORT_BASE (default 12000) moves the
 * whole block, so two checkouts can run their suites on one machine at once. Keep it below Linux's ephemeral ports
 * (ip_local_port_range, 32768-60999 by default): there every listen(0) and outgoing connection of the tests can
 * take a game's port first, and the game's start is then refused. Like the rate limit, the quotas are raised out of
 * the way unless a test sets them (test/integration/quota.test.ts does; `QUOTA_SERVERS: ''` there means the
 * operator's default).
 */
export async function createTestApp(options: TestAppOptions = {}) {
  const dir = tempDir('app');
  const base = Number(process.env.GSH_TEST_PORT_BASE ?? 12000) + Number(process.env.JEST_WORKER_ID ?? 1) * 200;
  const config: Config = loadConfig({
    DATA_DIR: dir,
    RATE_LIMIT_PER_MINUTE: '100000',
    QUOTA_SERVERS: '100000',
    QUOTA_RUNNING_SERVERS: '100000',
    QUOTA_MEMORY_MB: '100000000',
    GAME_PORT_RANGE: `${base}-${base + 99}`,
    // Password hashes at 2^10 instead of 2^17 (128 MiB and a good part of a second each): taken only in tests.
    NODE_ENV: 'test',
    PASSWORD_SCRYPT_N: '1024',
    ...options.env,
  });
  if (!fs.existsSync(config.dbFile)) freshDatabase(config.dbFile);
  if (options.software) fs.cpSync(options.software, path.join(config.dataDir, 'software'), { recursive: true });
  const { spec, openapi, check } = await sharedParts();
  const contractFailures: string[] = [];
  const service = await buildService(config, options.logger ?? (process.env.DEBUG_LOG ? createLogger() : silentLogger), {
    spec,
    openapi,
    ...options,
    onResponse: (sent) => contractFailures.push(...check(sent)),
  });
  if (options.boot) await service.boot();
  const { users, tokens } = service.store;

  return {
    ...service,
    dir,
    config,
    http: supertest(service.app),
    contractFailures,
    /** Makes a user (by email) and a token for it; returns the secret. */
    token(email = 'alice@example.com', scopes: Scope[] = allScopes, expiresInSeconds?: number): string {
      const user = users.ensure(email);
      return tokens.create(user.id, { name: 'test', scopes, expiresInSeconds }).token;
    },
    expectContract() {
      expect(contractFailures).toEqual([]);
    },
    /** Serves the app on a free loopback port, for clients that need a real socket (fetch, browsers, bots). */
    async listen(): Promise<{ base: string; close(): Promise<void> }> {
      const server = service.app.listen(0, '127.0.0.1');
      answerClientErrors(server);
      await new Promise((r) => server.once('listening', r));
      return {
        base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        // Connections a client left open (a proxy's keep-alive, a stream it stopped reading) are ended too: the
        // test is over, and server.close() alone waits for every one of them.
        close: () => new Promise<void>((r) => {
          server.close(() => r());
          server.closeAllConnections();
        }),
      };
    },
    async close() {
      await service.shutdown();
      fs.rmSync(dir, { recursive: true, force: true });
    },
    /** The end of a per-test app: every answer kept to the contract, and the app is closed whatever happened. */
    async finish() {
      try {
        expect(contractFailures).toEqual([]);
      } finally {
        await this.close();
      }
    },
  };
}

export type TestApp = Awaited<ReturnType<typeof createTestApp>>;
