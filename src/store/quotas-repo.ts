import type { Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { quotaExceeded } from '../errors';
import type { components } from '../../generated/v1';

/** GET /v1/quota: each quota of an account with its limit and what is in use (docs/conventions.md "Quotas"). */
export type Quota = components['schemas']['Quota'];
export type QuotaName = keyof Quota;
export type QuotaLimits = Record<QuotaName, number>;
/** An account's own limits; `null` (or absent) means the operator's default. */
export type QuotaOverrides = Partial<Record<QuotaName, number | null>>;

export const quotaNames: readonly QuotaName[] = ['servers', 'running', 'memory_mb'];

type Plan = components['schemas']['Plan'];

export interface QuotaSettings {
  /** Every account's limits unless it has its own (QUOTA_* in src/config.ts). */
  defaults: QuotaLimits;
  /** The plan catalog: what memory a server's plan takes. */
  plans: readonly Plan[];
}

type OverrideRow = Record<QuotaName, number | null>;

/**
 * A server counts against `running` from a start or restart until a stop or kill (desired_state), and for as long
 * as its game still runs, so a server that is stopping still holds its place. Migration 026's triggers count the
 * same expression into `server_counts`.
 */
const RUNNING = `(desired_state = 'running' OR state IN ('starting', 'running', 'stopping'))`;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const ASK = 'or ask the operator for a larger quota';

type Statements = ReturnType<typeof statements>;

/** The repository's statements, prepared once (docs/conventions.md "Code layout"). */
function statements(db: Db) {
  return {
    own: db.prepare<unknown[], OverrideRow>('SELECT servers, running, memory_mb FROM user_quotas WHERE user_id = ?'),
    save: db.prepare(`INSERT INTO user_quotas (user_id, servers, running, memory_mb, updated_at)
      VALUES (@user_id, @servers, @running, @memory_mb, @updated_at)
      ON CONFLICT (user_id) DO UPDATE SET servers = excluded.servers, running = excluded.running,
        memory_mb = excluded.memory_mb, updated_at = excluded.updated_at`),
    drop: db.prepare('DELETE FROM user_quotas WHERE user_id = ?'),
    // The account's counters (migration 026), one row per plan, kept by triggers in every servers write's transaction.
    byPlan: db.prepare<unknown[], { plan: string; n: number; running: number }>('SELECT plan, servers AS n, running FROM server_counts WHERE user_id = ?'),
    server: db.prepare<unknown[], { user_id: string; running: number }>(`SELECT user_id, ${RUNNING} AS running FROM servers WHERE id = ?`),
  };
}

type Reads = ReturnType<typeof quotaReads>;

/** An account's limits (its own, else the defaults) and its use, read from `server_counts`. */
function quotaReads(st: Statements, settings: QuotaSettings) {
  const memoryOf = (plan: string) => settings.plans.find((p) => p.id === plan)?.memory_mb ?? 0;

  function overrides(userId: string): QuotaOverrides {
    const row = st.own.get(userId);
    return row ? Object.fromEntries(quotaNames.filter((k) => row[k] !== null).map((k) => [k, row[k]])) : {};
  }

  function limits(userId: string): QuotaLimits {
    return { ...settings.defaults, ...overrides(userId) } as QuotaLimits;
  }

  function usage(userId: string): QuotaLimits {
    const used: QuotaLimits = { servers: 0, running: 0, memory_mb: 0 };
    for (const row of st.byPlan.all(userId)) {
      used.servers += row.n;
      used.running += row.running;
      used.memory_mb += row.n * memoryOf(row.plan);
    }
    return used;
  }

  return { memoryOf, overrides, limits, usage };
}

/** The check* functions: each throws quota_exceeded when the write it guards would go past a limit. */
function quotaChecks(st: Statements, { memoryOf, limits, usage }: Reads) {
  function memoryCheck(userId: string, more: number, what: string): void {
    const limit = limits(userId).memory_mb;
    const used = usage(userId).memory_mb;
    if (more > 0 && used + more > limit) {
      throw quotaExceeded('memory_mb', limit, used,
        `${what}; your servers' plans take ${used} of your ${limit} MiB. Choose a smaller plan, delete a server, ${ASK}.`);
    }
  }

  return {
    /** Before a server of `plan` is inserted (same transaction): one more server, and the plan's memory. */
    checkCreate(userId: string, plan: string): void {
      const limit = limits(userId).servers;
      const used = usage(userId).servers;
      if (used >= limit) {
        throw quotaExceeded('servers', limit, used,
          `Your account may have ${plural(limit, 'server')} and has ${used} (one being deleted counts until it is gone); delete one, ${ASK}.`);
      }
      memoryCheck(userId, memoryOf(plan), `The plan "${plan}" takes ${memoryOf(plan)} MiB`);
    },

    /** Before a server's plan changes (same transaction): only a larger plan can be refused. */
    checkPlanChange(userId: string, from: string, to: string): void {
      const more = memoryOf(to) - memoryOf(from);
      memoryCheck(userId, more, `The plan "${to}" takes ${more} MiB more than "${from}"`);
    },

    /**
     * Before a start or restart by `requester` is accepted (same transaction as the action and its desired state). A
     * server that already counts (meant to run, or still running) changes nothing and is never refused. The quota is
     * the owner's: a member who asks is told so, and that the owner can make room (issue 39 §4).
     */
    checkStart(serverId: string, requester: string): void {
      const server = st.server.get(serverId);
      if (!server || server.running) return;
      const limit = limits(server.user_id).running;
      const used = usage(server.user_id).running;
      if (used < limit) return;
      const running = `${used} ${used === 1 ? 'is' : 'are'} running or meant to run`;
      throw quotaExceeded('running', limit, used, requester === server.user_id
        ? `Your account may run ${plural(limit, 'server')} at once and ${running}; stop one first, ${ASK}.`
        : `This server's owner's account may run ${plural(limit, 'server')} at once and ${running}; ask the owner to stop one first or to ask the operator for a larger quota.`);
    },
  };
}

/**
 * The `user_quotas` table (each account's own limits) and the quota checks. Use is read from `server_counts`, which
 * triggers on `servers` keep in the transaction of every write (migration 026), so it cannot drift and costs the
 * same for an account of 5,000 servers as for one of 5. The check* functions throw quota_exceeded and must run
 * inside the transaction that makes the write they guard (docs/conventions.md "Writes"): SQLite then serialises
 * every such check and write, so concurrent requests, even from several processes on one file, can never go past a
 * limit together.
 */
export function createQuotasRepo(db: Db, clock: Clock, settings: QuotaSettings) {
  const st = statements(db);
  const reads = quotaReads(st, settings);
  const { overrides, limits, usage } = reads;

  return {
    /** GET /v1/quota, read in one transaction so the limits and the use are of the same moment. */
    get: db.transaction((userId: string): Quota => {
      const limit = limits(userId);
      const used = usage(userId);
      return {
        servers: { limit: limit.servers, used: used.servers },
        running: { limit: limit.running, used: used.running },
        memory_mb: { limit: limit.memory_mb, used: used.memory_mb },
      };
    }),

    /** The limits this account has of its own (the others are the defaults), for the CLI. */
    overrides,

    /** Sets (a number) or resets (`null`) some of an account's own limits, in one write. */
    set(userId: string, changes: QuotaOverrides): void {
      db.transaction(() => {
        const next = { servers: null, running: null, memory_mb: null, ...overrides(userId), ...changes };
        if (quotaNames.every((k) => next[k] === null)) st.drop.run(userId);
        else st.save.run({ user_id: userId, ...next, updated_at: iso(clock.now()) });
      }).immediate();
    },

    ...quotaChecks(st, reads),
  };
}

export type QuotasRepo = ReturnType<typeof createQuotasRepo>;
