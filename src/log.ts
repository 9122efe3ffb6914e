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

/** How long a log line may wait to be written with others, and how much may wait (README.md "Logs"). */
const BATCH_MS = 10;
const BATCH_BYTES = 64 * 1024;

/**
 * Writes lines to stdout together, at most BATCH_MS after the first of them (or at once past BATCH_BYTES): stdout
 * to a pipe or a file is a synchronous write(2) per call in Node, and one per access-log line was about half of
 * what logging cost a request (BENCHMARKS.md §1). Lines keep their order; what is pending when the process exits,
 * however it exits short of `kill -9`, is written then ('exit' runs synchronously), so a `kill -9` loses at most
 * the last BATCH_MS of lines.
 */
export function batchedStdout(out: { write(chunk: string): unknown } = process.stdout): (line: string) => void {
  let pending = '';
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (pending === '') return;
    const chunk = pending;
    pending = '';
    out.write(chunk);
  };
  process.on('exit', flush);
  return (line) => {
    pending += line + '\n';
    if (pending.length >= BATCH_BYTES) flush();
    else timer ??= setTimeout(flush, BATCH_MS).unref();
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
