import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * One JSON line per event. Callers pass fields, never whole requests, so no header can reach a log line; and
 * every line is passed through `redact` on its way out, so even a token pasted into a URL or an error message
 * is never written (SECURITY.md; test/e2e/service-process.test.ts reads the logs to check).
 */
export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Our token format (`gsh_` + base64url) and anything after a Bearer scheme. */
const SECRETS = /gsh_[A-Za-z0-9_-]+|(?<=Bearer\s+)[^\s"',]+/gi;

export function redact(text: string): string {
  return text.replace(SECRETS, '[redacted]');
}

/**
 * The request being answered, if any: `requestIdMiddleware` (src/http/request-id.ts) runs the rest of the request
 * inside it, so every line logged while answering it, by any layer, carries its `request_id`
 * (docs/conventions.md "Request ids"). Node's AsyncLocalStorage follows the request through awaits and timers.
 */
export const requestContext = new AsyncLocalStorage<{ requestId: string }>();

export function createLogger(write: (line: string) => void = (l) => process.stdout.write(l + '\n')): Logger {
  const emit = (level: string) => (msg: string, fields: Record<string, unknown> = {}) => {
    const requestId = requestContext.getStore()?.requestId;
    const line = { time: new Date().toISOString(), level, msg, ...(requestId ? { request_id: requestId } : {}), ...fields };
    write(redact(JSON.stringify(line)));
  };
  return { info: emit('info'), warn: emit('warn'), error: emit('error') };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
