import { required, type Db } from './db';
import type { Clock } from '../clock';
import { iso } from '../clock';
import { newId } from '../ids';
import { quotaExceeded } from '../errors';
import type { EventsRepo } from './events-repo';
import { serviceActor } from '../actors';
import type { components } from '../../generated/v1';

export type AlertRule = components['schemas']['AlertRule'];
export type NewAlertRule = components['schemas']['CreateAlertRuleRequest'];
export type AlertMetric = components['schemas']['AlertMetric'];

/** Rules one server may have (openapi/v1.yaml createServerAlertRule): more is 403 quota_exceeded. */
export const ALERT_RULES_PER_SERVER = 20;

interface RuleRow {
  id: string;
  server_id: string;
  name: string | null;
  kind: AlertRule['kind'];
  metric: AlertMetric | null;
  comparison: AlertRule['comparison'] | null;
  threshold: number | null;
  duration_seconds: number;
  state: AlertRule['state'];
  state_since: string | null;
  created_at: string;
}

function toRule(row: RuleRow): AlertRule {
  // Migration 022's CHECK: a rule has all three exactly when its kind is 'metric'.
  const metric = row.metric !== null && row.comparison !== null && row.threshold !== null ? { metric: row.metric, comparison: row.comparison, threshold: row.threshold } : {};
  return {
    id: row.id,
    server_id: row.server_id,
    name: row.name,
    kind: row.kind,
    ...metric,
    duration_seconds: row.duration_seconds,
    state: row.state,
    state_since: row.state_since,
    created_at: row.created_at,
  };
}

/**
 * The `alert_rules` table (migration 022). Rules are written through the API; their state only by `transition`
 * (the evaluator, src/runtime/loops/alerts.ts) and `crashed` (CrashesRepo.record, inside the crash's transaction), each
 * with its alert.* event in the same transaction, so an event exists exactly when its state change does.
 */
export function createAlertsRepo(db: Db, clock: Clock, events: Pick<EventsRepo, 'raise'>) {
  const q = {
    count: db.prepare<unknown[], number>('SELECT COUNT(*) FROM alert_rules WHERE server_id = ?').pluck(),
    insert: db.prepare(`INSERT INTO alert_rules (id, server_id, name, kind, metric, comparison, threshold, duration_seconds, created_at)
      VALUES (@id, @server_id, @name, @kind, @metric, @comparison, @threshold, @duration_seconds, @created_at)`),
    get: db.prepare<unknown[], RuleRow>('SELECT * FROM alert_rules WHERE server_id = ? AND id = ?'),
    byId: db.prepare<unknown[], RuleRow>('SELECT * FROM alert_rules WHERE id = ?'),
    page: db.prepare<unknown[], RuleRow>('SELECT * FROM alert_rules WHERE server_id = ? AND id > ? ORDER BY id LIMIT ?'),
    ofServer: db.prepare<unknown[], RuleRow>('SELECT * FROM alert_rules WHERE server_id = ? ORDER BY id'),
    crashRules: db.prepare<unknown[], RuleRow>(`SELECT * FROM alert_rules WHERE server_id = ? AND kind = 'crash' AND state = 'ok' ORDER BY id`),
    setState: db.prepare('UPDATE alert_rules SET state = ?, state_since = ? WHERE id = ? AND state != ?'),
    remove: db.prepare('DELETE FROM alert_rules WHERE server_id = ? AND id = ?'),
  };

  /** The rule's state change and its event, or nothing if it already was in that state. */
  function change(id: string, to: AlertRule['state'], value: number | null, reason: string | null): AlertRule | null {
    if (q.setState.run(to, iso(clock.now()), id, to).changes === 0) return null;
    const rule = toRule(required(q.byId.get(id)));
    events.raise(to === 'firing' ? 'alert.triggered' : 'alert.resolved', { alert: rule, value, reason }, { serverId: rule.server_id }, serviceActor('alerts'));
    return rule;
  }

  return {
    /** A new rule, `ok`; its kind's fields are the schema's (openapi/v1.yaml CreateAlertRuleRequest, a oneOf by `kind`). */
    create(serverId: string, input: NewAlertRule): AlertRule {
      return db.transaction(() => {
        const n = required(q.count.get(serverId));
        if (n >= ALERT_RULES_PER_SERVER) {
          throw quotaExceeded('alert_rules', ALERT_RULES_PER_SERVER, n, `A server may have ${ALERT_RULES_PER_SERVER} alert rules and this one has ${n}; delete one first.`);
        }
        const id = newId('alr', clock.now());
        const metric = input.kind === 'metric';
        q.insert.run({
          id, server_id: serverId, name: input.name ?? null, kind: input.kind,
          metric: metric ? input.metric : null, comparison: metric ? input.comparison : null, threshold: metric ? input.threshold : null,
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- openapi-typescript types a property with a `default` as present, but the request validator does not fill defaults (src/http/openapi.ts)
          duration_seconds: metric ? input.duration_seconds ?? 60 : 0, created_at: iso(clock.now()),
        });
        return toRule(required(q.get.get(serverId, id)));
      }).immediate();
    },
    get: (serverId: string, id: string): AlertRule | undefined => {
      const row = q.get.get(serverId, id);
      return row && toRule(row);
    },
    page(serverId: string, opts: { limit: number; startingAfter?: string }): { data: AlertRule[]; has_more: boolean } {
      const rows = q.page.all(serverId, opts.startingAfter ?? '', opts.limit + 1);
      return { data: rows.slice(0, opts.limit).map(toRule), has_more: rows.length > opts.limit };
    },
    /** Every rule of the server (the evaluator's view, one query per sample). */
    ofServer: (serverId: string): AlertRule[] => q.ofServer.all(serverId).map(toRule),
    remove: (serverId: string, id: string): boolean => q.remove.run(serverId, id).changes > 0,
    /** A state change with its event, one transaction; null if the rule is gone or already in that state. */
    transition: (id: string, to: AlertRule['state'], value: number | null): AlertRule | null =>
      db.transaction(() => change(id, to, value, null))(),
    /** Inside a crash's transaction (CrashesRepo.record): every `ok` crash rule of the server triggers. */
    crashed(serverId: string, reason: string): void {
      for (const row of q.crashRules.all(serverId)) change(row.id, 'firing', null, reason);
    },
  };
}

export type AlertsRepo = ReturnType<typeof createAlertsRepo>;
