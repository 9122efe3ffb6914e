// How long a client may take to send a request body (docs/conventions.md "Limits"). Node's own `requestTimeout`
// bounds the whole request, body included, which is right for a JSON body of at most 64 KiB and wrong for an
// upload: a 500 MB world over a home line takes minutes. So Node's limit is off (service.ts listenHttp) and this
// guard applies two rules instead, by the body's kind:
//   - a JSON body (application/json, application/merge-patch+json) must have arrived `wholeMs` after the request
//     began;
//   - any other body (a file, an archive: streamed to its handler) may take as long as it needs while bytes keep
//     coming, and is ended after `idleMs` without one.
// Either way the client gets a 408 (RFC 9110 §15.5.9) when nothing was answered yet, and the connection is closed.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

export interface BodyGuardOptions {
  wholeMs: number;
  idleMs: number;
  /** How often requests are looked at: a body is ended within this much after its limit. */
  checkMs: number;
}

const JSON_TYPES = /^application\/(json|merge-patch\+json)\b/i;

interface Receiving {
  req: IncomingMessage;
  res: ServerResponse;
  began: number;
  lastByte: number;
  whole: boolean;
}

/** Attaches the guard to `server`'s requests; its timer runs only while a body is being received. */
export function guardBodies(server: Server, options: BodyGuardOptions): void {
  const receiving = new Set<Receiving>();
  let timer: NodeJS.Timeout | null = null;

  function check(): void {
    const now = Date.now();
    for (const r of receiving) {
      const late = r.whole ? now - r.began > options.wholeMs : now - r.lastByte > options.idleMs;
      if (!late) continue;
      receiving.delete(r);
      if (!r.res.headersSent) {
        r.res.writeHead(408, { Connection: 'close', 'Content-Type': 'text/plain' });
        r.res.end('The request body did not arrive in time.\n');
      }
      r.req.socket.destroySoon();
    }
    if (receiving.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // Only a request that has a body (RFC 9110 §8.6, RFC 9112 §6.3): one without is complete at its headers, though
    // `complete` is set only after this event; guarding it would end a long answer (an event stream) it is waiting on.
    const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
    if (req.complete || !hasBody) return;
    const now = Date.now();
    const r: Receiving = { req, res, began: now, lastByte: now, whole: JSON_TYPES.test(req.headers['content-type'] ?? '') };
    receiving.add(r);
    // The socket's own data events: a listener on `req` would put the body in flowing mode before its handler reads it.
    const onData = () => {
      r.lastByte = Date.now();
    };
    req.socket.on('data', onData);
    const done = () => {
      receiving.delete(r);
      req.socket.off('data', onData);
    };
    req.once('end', done);
    req.once('close', done);
    res.once('close', done);
    timer ??= setInterval(check, options.checkMs);
    timer.unref();
  });
}
