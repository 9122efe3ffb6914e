import { AppError } from '../../errors';
import type { AlertsRepo } from '../../store/alerts-repo';
import type { ServersRepo } from '../../store/servers-repo';
import type { Handlers } from '../types';
import { page, withCursor } from './paging';
import { ownedServer } from './owned';

/** Alerts tag: listServerAlertRules, createServerAlertRule, getServerAlertRule, deleteServerAlertRule. */
export function alertHandlers(deps: { servers: ServersRepo; alerts: AlertsRepo }): Handlers {
  const notFound = (id: string) => new AppError('alert_rule_not_found', `No alert rule ${id} on this server.`);
  return {
    listServerAlertRules: ({ principal, path, query }) => {
      const server = ownedServer(deps.servers, principal, path.server_id);
      return { status: 200, body: withCursor(deps.alerts.page(server.id, page(query))) };
    },
    createServerAlertRule: ({ principal, path, body }) => {
      const server = ownedServer(deps.servers, principal, path.server_id);
      const rule = deps.alerts.create(server.id, body);
      return { status: 201, body: rule, headers: { Location: `/v1/servers/${server.id}/alerts/${rule.id}` } };
    },
    getServerAlertRule: ({ principal, path }) => {
      const server = ownedServer(deps.servers, principal, path.server_id);
      const rule = deps.alerts.get(server.id, path.alert_id);
      if (!rule) throw notFound(path.alert_id);
      return { status: 200, body: rule };
    },
    deleteServerAlertRule: ({ principal, path }) => {
      const server = ownedServer(deps.servers, principal, path.server_id);
      if (!deps.alerts.remove(server.id, path.alert_id)) throw notFound(path.alert_id);
      return { status: 204, body: undefined };
    },
  };
}
