import type { Clock } from '../clock';
import type { Db } from './db';
import { createActionsRepo } from './actions-repo';
import { createCrashesRepo } from './crashes-repo';
import { createIdempotencyRepo } from './idempotency-repo';
import { createProcessesRepo } from './processes-repo';
import { createServersRepo } from './servers-repo';
import { createServerWrites } from './server-writes';
import { createSettingsRepo } from './settings-repo';
import { createPlayerListsRepo } from './player-lists-repo';
import { createBackupsRepo } from './backups-repo';
import { createKeptBackupsRepo } from './kept-backups-repo';
import { createAlertsRepo } from './alerts-repo';
import { createNodesRepo } from './nodes-repo';
import { createMovesRepo } from './moves-repo';
import { singleHostPlacer, type AddressPool } from './placement';
import { createTokensRepo } from './tokens-repo';
import { createUsersRepo } from './users-repo';
import { createQuotasRepo, type QuotaSettings } from './quotas-repo';
import type { StoreObserver } from './observer';
import { createEventsRepo } from './events-repo';
import { createWebhooksRepo } from './webhooks-repo';
import { createOutboxRepo } from './outbox-repo';

export type { StoreObserver } from './observer';

/**
 * The control tables, one repository per table group, built once per service over one database. Every SQL
 * statement on these tables lives in these repositories, and each maps its private snake_case rows to the domain
 * types once (docs/conventions.md "Code layout"). The telemetry time series (src/telemetry/metrics-store.ts) keeps
 * its own SQL on the same file: it is a different kind of data, written by one sampler in batches.
 */
export function createStore(
  db: Db,
  clock: Clock,
  pool: AddressPool & { nodes?: boolean },
  quotaSettings: QuotaSettings,
  observer: StoreObserver = {},
) {
  const quotas = createQuotasRepo(db, clock, quotaSettings);
  const memoryOf = (plan: string) => quotaSettings.plans.find((p) => p.id === plan)?.memory_mb ?? 0;
  // Written by the repositories below, in their own transactions (docs/architecture.md "Events and webhooks").
  const events = createEventsRepo(db, clock);
  // The servers table's writes, ServersRepo's; the repositories whose changes touch a server's row call them.
  const serverWrites = createServerWrites(db, clock, events);
  const nodes = createNodesRepo(db, clock, memoryOf, serverWrites);
  // RUNTIME=docker places servers over the nodes table; RUNTIME=local keeps them on this host (placement.ts).
  const placer = pool.nodes === true ? nodes.placer : singleHostPlacer(db, pool);
  const alerts = createAlertsRepo(db, clock, events);
  return {
    alerts,
    servers: createServersRepo(db, clock, placer, quotas, memoryOf, events, serverWrites),
    nodes,
    moves: createMovesRepo(db, clock, nodes, memoryOf, events, serverWrites),
    settings: createSettingsRepo(db, clock),
    playerLists: createPlayerListsRepo(db, clock),
    backups: createBackupsRepo(db, clock, events),
    keptBackups: createKeptBackupsRepo(db, clock, events, serverWrites),
    actions: createActionsRepo(db, clock, quotas, serverWrites, events, observer),
    quotas,
    crashes: createCrashesRepo(db, clock, events, observer, alerts),
    events,
    webhooks: createWebhooksRepo(db, clock, events),
    outbox: createOutboxRepo(db, clock, events),
    processes: createProcessesRepo(db, clock),
    tokens: createTokensRepo(db, clock, events),
    users: createUsersRepo(db, clock),
    idempotency: createIdempotencyRepo(db, clock),
  };
}

export type Store = ReturnType<typeof createStore>;
