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

/** Either word that SECRETS needs: a line with neither is returned as it is (most lines: the lookbehind is slow). */
const MAY_HOLD_SECRET = /gsh_|bearer/i;

export function redact(text: string): string {
  return MAY_HOLD_SECRET.test(text) ? text.replace(SECRETS, '[redacted]') : text;
}

/**
 * The request being answered, if any: `requestIdMiddleware` (src/http/request-id.ts) runs the rest of the request
 * inside it, so every line logged while answering it, by any layer, carries its `request_id`
 * (docs/conventions.md "Request ids"). Node's AsyncLocalStorage follows the request through awaits and timers.
 */
export const requestContext = new AsyncLocalStorage<{ requestId: string }>();

/**
 * Writes lines to stdout together, once per turn of the event loop: stdout to a pipe or a file is a synchronous
 * write(2) per call in Node, and one per access-log line was the largest cost of logging (BENCHMARKS.md §1).
 * Lines are written in order; what is pending when the process exits, however it exits short of `kill -9`, is
 * written then ('exit' runs synchronously), so at most one loop turn of lines is lost to a `kill -9`.
 */
export function batchedStdout(out: { write(chunk: string): unknown } = process.stdout): (line: string) => void {
  let pending = '';
  const flush = () => {
    if (pending === '') return;
    const chunk = pending;
    pending = '';
    out.write(chunk);
  };
  process.on('exit', flush);
  return (line) => {
    if (pending === '') setImmediate(flush);
    pending += line + '\n';
  };
}

export function createLogger(write: (line: string) => void = batchedStdout()): Logger {
  const emit = (level: string) => (msg: string, fields: Record<string, unknown> = {}) => {
    const requestId = requestContext.getStore()?.requestId;
    const line = { time: new Date().toISOString(), level, msg, ...(requestId ? { request_id: requestId } : {}), ...fields };
    write(redact(JSON.stringify(line)));
  };
  return { info: emit('info'), warn: emit('warn'), error: emit('error') };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
