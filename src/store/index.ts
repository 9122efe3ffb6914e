import type { Clock } from '../clock';
import type { Db } from './db';
import { createActionsRepo } from './actions-repo';
import { createCrashesRepo } from './crashes-repo';
import { createIdempotencyRepo } from './idempotency-repo';
import { createProcessesRepo } from './processes-repo';
import { createServersRepo, type AddressPool } from './servers-repo';
import { createTokensRepo } from './tokens-repo';
import { createUsersRepo } from './users-repo';
import { createQuotasRepo, type QuotaSettings } from './quotas-repo';

/**
 * The control tables, one repository per table group, built once per service over one database. Every SQL
 * statement on these tables lives in these repositories, and each maps its private snake_case rows to the domain
 * types once (docs/conventions.md "Code layout"). The telemetry time series (src/telemetry/metrics-store.ts) keeps
 * its own SQL on the same file: it is a different kind of data, written by one sampler in batches.
 */
export function createStore(db: Db, clock: Clock, pool: AddressPool, quotaSettings: QuotaSettings) {
  const quotas = createQuotasRepo(db, clock, quotaSettings);
  return {
    servers: createServersRepo(db, clock, pool, quotas),
    actions: createActionsRepo(db, clock, quotas),
    quotas,
    crashes: createCrashesRepo(db, clock),
    processes: createProcessesRepo(db, clock),
    tokens: createTokensRepo(db, clock),
    users: createUsersRepo(db, clock),
    idempotency: createIdempotencyRepo(db, clock),
  };
}

export type Store = ReturnType<typeof createStore>;
