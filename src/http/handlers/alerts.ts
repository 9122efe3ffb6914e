import { AppError } from '../../errors';
import type { AlertsRepo } from '../../store/alerts-repo';
import type { Handlers } from '../types';
import { page, withCursor } from './paging';

/** Alerts tag: listServerAlertRules, createServerAlertRule, getServerAlertRule, deleteServerAlertRule. */
export function alertHandlers(deps: { alerts: AlertsRepo }): Handlers {
  const notFound = (id: string) => new AppError('alert_rule_not_found', `No alert rule ${id} on this server.`);
  return {
    listServerAlertRules: ({ server, query }) => {
      return { status: 200, body: withCursor(deps.alerts.page(server.id, page(query))) };
    },
    createServerAlertRule: ({ server, body }) => {
      const rule = deps.alerts.create(server.id, body);
      return { status: 201, body: rule, headers: { Location: `/v1/servers/${server.id}/alerts/${rule.id}` } };
    },
    getServerAlertRule: ({ server, path }) => {
      const rule = deps.alerts.get(server.id, path.alert_id);
      if (!rule) throw notFound(path.alert_id);
      return { status: 200, body: rule };
    },
    deleteServerAlertRule: ({ server, path }) => {
      if (!deps.alerts.remove(server.id, path.alert_id)) throw notFound(path.alert_id);
      return { status: 204, body: undefined };
    },
  };
}
