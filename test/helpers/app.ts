import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import supertest from 'supertest';
import { createApp, type AppConfig } from '../../src/app';
import { openDb, type Db } from '../../src/store/db';
import { loadSpec } from '../../src/spec';
import { silentLogger } from '../../src/log';
import { versionCatalog } from '../../src/catalog/versions';
import { loadSoftwareCatalog } from '../../src/runtime/software-catalog';
import { createUsersRepo } from '../../src/store/users-repo';
import { createTokensRepo } from '../../src/store/tokens-repo';
import type { Scope } from '../../src/auth/tokens';
import type { Clock } from '../../src/clock';
import type { ServerRuntime } from '../../src/http/runtime-port';
import { createContractChecker } from './contract';

export const allScopes: Scope[] = ['servers:read', 'servers:write', 'tokens:manage'];

/** A clock tests move by hand. */
export function manualClock(start = Date.parse('2026-11-22T08:00:00.000Z')): Clock & { advance(ms: number): void } {
  let now = start;
  return { now: () => now, advance: (ms) => void (now += ms) };
}

export function tempDir(label: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `gsh-${label}-`));
}

export interface TestAppOptions {
  config?: Partial<AppConfig>;
  clock?: Clock;
  runtime?: ServerRuntime;
}

/**
 * A fresh service on its own SQLite file in its own folder, with every response checked against the spec.
 * `contractFailures` collects what the checker found; `expectContract()` fails the test if anything was found.
 */
export async function createTestApp(options: TestAppOptions = {}) {
  const dir = tempDir('app');
  const db: Db = openDb(path.join(dir, 'gsh.sqlite'));
  const clock = options.clock ?? { now: () => Date.now() };
  const check = await createContractChecker();
  const contractFailures: string[] = [];
  const config: AppConfig = {
    rateLimitPerMinute: 10_000,
    addressPool: { host: '127.0.0.1', portRange: [40000, 40099] },
    trustProxy: false,
    bodyLimitBytes: 64 * 1024,
    ...options.config,
  };
  const runtime = options.runtime ?? { install: async () => {}, remove: async () => {} };
  const app = await createApp({
    db,
    clock,
    config,
    spec: loadSpec(),
    log: silentLogger,
    versions: versionCatalog(loadSoftwareCatalog()),
    runtime,
    onResponse: (sent) => contractFailures.push(...check(sent)),
  });
  const users = createUsersRepo(db, clock);
  const tokens = createTokensRepo(db, clock);

  return {
    app,
    db,
    dir,
    clock,
    http: supertest(app),
    contractFailures,
    /** Makes a user (by email) and a token for it; returns the secret. */
    token(email = 'alice@example.com', scopes: Scope[] = allScopes, expiresInSeconds?: number): string {
      const user = users.ensure(email);
      return tokens.create(user.id, { name: 'test', scopes, expiresInSeconds }).token;
    },
    expectContract() {
      expect(contractFailures).toEqual([]);
    },
    close() {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type TestApp = Awaited<ReturnType<typeof createTestApp>>;
