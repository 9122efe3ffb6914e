import { actorFor, userActor } from '../../actors';
import type { ConsoleLine } from '../../runtime/server/console-buffer';
import type { Consoles } from '../../runtime/services/consoles';
import type { IdempotencyRepo } from '../../store/idempotency-repo';
import type { Handlers } from '../types';
import { idempotent } from './idempotent';

/**
 * A line as `viewer` sees it: the token of an `input` line only for the account it belongs to (openapi/v1.yaml
 * ConsoleLine.token_id), so the owner and the members of a shared server never see each other's token ids. Most
 * lines pass as they are (the stream's frame is then built once for all: src/http/sse.ts).
 */
export function lineFor(line: ConsoleLine, viewer: string): ConsoleLine {
  if (line.actor === null || line.token_id === null || (line.actor.type === 'user' && line.actor.user_id === viewer)) return line;
  return { ...line, token_id: null, actor: actorFor(line.actor, viewer) };
}

/** Console tag: getServerConsole, sendServerCommand, streamServerConsole. */
export function consoleHandlers(deps: { consoles: Consoles; idempotency: IdempotencyRepo }): Handlers {
  const { consoles } = deps;
  return {
    getServerConsole: ({ principal, server, query }) => {
      const limit = query.limit ?? 100;
      return { status: 200, body: { data: consoles.recent(server.id, limit).map((l) => lineFor(l, principal.userId)) } };
    },

    sendServerCommand: (call) => {
      const { principal, server, body } = call;
      // The answer is the command as the console recorded it: an `input` line naming its sender and their token. A
      // command that acts as another operation needs that operation's permission too (command-permissions.ts).
      return idempotent(deps.idempotency, call, { operation: 'sendServerCommand', path: server.id, body }, () => ({
        status: 202 as const,
        body: consoles.sendCommand(server.id, body.command, userActor(principal.userId, principal.tokenId), server.access.permissions),
      }));
    },

    streamServerConsole: ({ principal, server, headers }) => {
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
          const send = (line: ConsoleLine) => write({ event: 'line', id: String(line.seq), data: lineFor(line, principal.userId) });
          return consoles.subscribe(server.id, send, { afterSeq });
        },
      };
    },
  };
}
