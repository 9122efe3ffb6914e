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
import { createRecoveriesRepo } from './recoveries-repo';
import { singleHostPlacer, type AddressPool } from './placement';
import { createTokensRepo } from './tokens-repo';
import { createUsersRepo } from './users-repo';
import { createQuotasRepo, type QuotaSettings } from './quotas-repo';
import type { StoreObserver } from './observer';
import { createEventsRepo } from './events-repo';
import { createDeliveryWrites, outboxLimitDefaults, type OutboxLimits } from './delivery-writes';
import { createWebhooksRepo } from './webhooks-repo';
import { createOutboxRepo } from './outbox-repo';
import { createMembersRepo } from './members-repo';
import { createSchedulesRepo } from './schedules-repo';
import { createSessionsRepo } from './sessions-repo';
import { createKnownAddressesRepo } from './known-addresses-repo';
import { serviceActor, type Actor } from '../actors';
import { createFileChangesRepo } from './file-changes-repo';
import { createSshKeysRepo } from './ssh-keys-repo';

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
  /** The actor of the work under way (src/actors.ts), which every event names. */
  actor: () => Actor,
  observer: StoreObserver = {},
  outboxLimits: OutboxLimits = outboxLimitDefaults,
) {
  const quotas = createQuotasRepo(db, clock, quotaSettings);
  const memoryOf = (plan: string) => quotaSettings.plans.find((p) => p.id === plan)?.memory_mb ?? 0;
  // Raised by the repositories below, in their own transactions (docs/architecture.md "Events and webhooks").
  // The webhook outbox's one writer: the deliveries an event owes, their outcomes, their bounds.
  const deliveries = createDeliveryWrites(db, outboxLimits);
  const events = createEventsRepo(db, clock, actor, deliveries);
  // The servers table's writes, ServersRepo's; the repositories whose changes touch a server's row call them.
  const serverWrites = createServerWrites(db, clock, events);
  const nodes = createNodesRepo(db, clock, memoryOf, serverWrites);
  // RUNTIME=docker places servers over the nodes table; RUNTIME=local keeps them on this host (placement.ts).
  const placer = pool.nodes === true ? nodes.placer : singleHostPlacer(db, pool);
  const alerts = createAlertsRepo(db, clock, events);
  const webhooks = createWebhooksRepo(db, clock, events, deliveries);
  const tokens = createTokensRepo(db, clock, events);
  return {
    alerts,
    servers: createServersRepo(db, clock, placer, quotas, memoryOf, events, serverWrites),
    nodes,
    moves: createMovesRepo(db, clock, nodes, memoryOf, events, serverWrites),
    recoveries: createRecoveriesRepo(db, clock, nodes, memoryOf, events, serverWrites),
    settings: createSettingsRepo(db, clock, events),
    playerLists: createPlayerListsRepo(db, clock, events),
    backups: createBackupsRepo(db, clock, events),
    keptBackups: createKeptBackupsRepo(db, clock, events, serverWrites),
    actions: createActionsRepo(db, clock, quotas, serverWrites, events, observer),
    quotas,
    crashes: createCrashesRepo(db, clock, events, observer, alerts),
    events,
    webhooks,
    outbox: createOutboxRepo(db, clock, events, deliveries, webhooks.health),
    processes: createProcessesRepo(db, clock),
    tokens,
    users: createUsersRepo(db, clock),
    // The dashboard's sign-ins (src/dashboard/): their sessions, page tokens and known addresses.
    sessions: createSessionsRepo(db, clock, tokens),
    knownAddresses: createKnownAddressesRepo(db, clock),
    idempotency: createIdempotencyRepo(db, clock),
    members: createMembersRepo(db, clock, events),
    schedules: createSchedulesRepo(db, clock, events),
    fileChanges: createFileChangesRepo(db, clock),
    sshKeys: createSshKeysRepo(db, clock),
  };
}

export type Store = ReturnType<typeof createStore>;

/**
 * The repositories of the operator's command line (src/cli.ts, src/cli-nodes.ts) over the service's database, built
 * here as createStore builds the service's: what they change raises the service's events, as the `operator`.
 */
export function createOperatorStore(db: Db, clock: Clock, quotaSettings: QuotaSettings) {
  const events = operatorEvents(db, clock);
  const tokens = createTokensRepo(db, clock, events);
  const memoryOf = (plan: string) => quotaSettings.plans.find((p) => p.id === plan)?.memory_mb ?? 0;
  const serverWrites = createServerWrites(db, clock, events);
  const nodes = createNodesRepo(db, clock, memoryOf, serverWrites);
  return {
    users: createUsersRepo(db, clock),
    tokens,
    sessions: createSessionsRepo(db, clock, tokens),
    knownAddresses: createKnownAddressesRepo(db, clock),
    quotas: createQuotasRepo(db, clock, quotaSettings),
    nodes,
    // `gsh server move` records the request; the service carries it out (src/runtime/services/moves.ts).
    moves: createMovesRepo(db, clock, nodes, memoryOf, events, serverWrites),
    // `gsh node lose` records the recoveries; the service carries them out (src/runtime/services/recovery.ts).
    recoveries: createRecoveriesRepo(db, clock, nodes, memoryOf, events, serverWrites),
  };
}

export type OperatorStore = ReturnType<typeof createOperatorStore>;

/**
 * The events of the operator's command line (src/cli.ts, src/cli-nodes.ts), which builds the repositories its
 * commands use over the same database: they raise the service's events, as the `operator` (src/actors.ts).
 */
export function operatorEvents(db: Db, clock: Clock) {
  return createEventsRepo(db, clock, () => serviceActor('operator'), createDeliveryWrites(db));
}
