import type { ServersRepo } from '../../store/servers-repo';
import type { ServerRuntime } from '../runtime-port';
import type { Handlers } from '../types';
import { ownedServer } from './owned';

/** Console tag: getServerConsole, sendServerCommand, streamServerConsole. */
export function consoleHandlers(deps: { servers: ServersRepo; runtime: ServerRuntime }): Handlers {
  const { servers, runtime } = deps;
  return {
    getServerConsole: ({ principal, path, query }) => {
      const server = ownedServer(servers, principal, path.server_id);
      const limit = query.limit === undefined ? 100 : Number(query.limit);
      return { status: 200, body: { data: runtime.console.recent(server.id, limit) } };
    },

    sendServerCommand: ({ principal, path, body }) => {
      const server = ownedServer(servers, principal, path.server_id);
      runtime.sendCommand(server.id, body.command);
      // sendCommand records the command on the console synchronously, as an `input` line: that line is the answer.
      const [line] = runtime.console.recent(server.id, 1);
      return { status: 202, body: line };
    },

    streamServerConsole: ({ principal, path, headers }) => {
      const server = ownedServer(servers, principal, path.server_id);
      const last = headers['last-event-id'];
      const afterSeq = typeof last === 'string' ? Number(last) : 0;
      return {
        status: 200,
        stream: (write) =>
          runtime.console.subscribe(server.id, (line) => write({ event: 'line', id: String(line.seq), data: line }), {
            afterSeq,
          }),
      };
    },
  };
}
