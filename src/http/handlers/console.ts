import type { ServersRepo } from '../../store/servers-repo';
import type { Runtime } from '../../runtime/runtime';
import type { IdempotencyRepo } from '../../store/idempotency-repo';
import type { Handlers } from '../types';
import { idempotent } from './idempotent';
import { ownedServer } from './owned';

/** Console tag: getServerConsole, sendServerCommand, streamServerConsole. */
export function consoleHandlers(deps: { servers: ServersRepo; runtime: Runtime; idempotency: IdempotencyRepo }): Handlers {
  const { servers, runtime } = deps;
  return {
    getServerConsole: ({ principal, path, query }) => {
      const server = ownedServer(servers, principal, path.server_id);
      const limit = query.limit === undefined ? 100 : Number(query.limit);
      return { status: 200, body: { data: runtime.console.recent(server.id, limit) } };
    },

    sendServerCommand: (call) => {
      const { principal, path, body } = call;
      const server = ownedServer(servers, principal, path.server_id);
      // The answer is the command as the console recorded it: an `input` line with the caller's token id.
      return idempotent(deps.idempotency, call, { operation: 'sendServerCommand', path: server.id, body }, () => ({
        status: 202 as const,
        body: runtime.sendCommand(server.id, body.command, principal),
      }));
    },

    streamServerConsole: ({ principal, path, headers }) => {
      const server = ownedServer(servers, principal, path.server_id);
      const last = headers['last-event-id'];
      const afterSeq = typeof last === 'string' ? Number(last) : 0;
      return {
        status: 200,
        serverId: server.id,
        stream: (write) =>
          runtime.console.subscribe(server.id, (line) => write({ event: 'line', id: String(line.seq), data: line }), {
            afterSeq,
          }),
      };
    },
  };
}
