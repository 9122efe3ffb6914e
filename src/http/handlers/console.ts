import type { ServersRepo } from '../../store/servers-repo';
import type { Consoles } from '../../runtime/consoles';
import type { IdempotencyRepo } from '../../store/idempotency-repo';
import type { Handlers } from '../types';
import { idempotent } from './idempotent';
import { ownedServer } from './owned';

/** Console tag: getServerConsole, sendServerCommand, streamServerConsole. */
export function consoleHandlers(deps: { servers: ServersRepo; consoles: Consoles; idempotency: IdempotencyRepo }): Handlers {
  const { servers, consoles } = deps;
  return {
    getServerConsole: ({ principal, path, query }) => {
      const server = ownedServer(servers, principal, path.server_id);
      const limit = query.limit === undefined ? 100 : Number(query.limit);
      return { status: 200, body: { data: consoles.recent(server.id, limit) } };
    },

    sendServerCommand: (call) => {
      const { principal, path, body } = call;
      const server = ownedServer(servers, principal, path.server_id);
      // The answer is the command as the console recorded it: an `input` line with the caller's token id.
      return idempotent(deps.idempotency, call, { operation: 'sendServerCommand', path: server.id, body }, () => ({
        status: 202 as const,
        body: consoles.sendCommand(server.id, body.command, principal),
      }));
    },

    streamServerConsole: ({ principal, path, headers }) => {
      const server = ownedServer(servers, principal, path.server_id);
      const last = headers['last-event-id'];
      const asked = typeof last === 'string' ? Number(last) : 0;
      return {
        status: 200,
        serverId: server.id,
        // Resuming after `after` (the stream's own cursor) needs every line since; a client's Last-Event-ID
        // gets what is still buffered (the spec's streamServerConsole).
        stream: (write, after) => {
          const afterSeq = after === undefined ? asked : Number(after);
          if (after !== undefined && !consoles.holdsAllAfter(server.id, afterSeq)) return null;
          return consoles.subscribe(server.id, (line) => write({ event: 'line', id: String(line.seq), data: line }), { afterSeq });
        },
      };
    },
  };
}
