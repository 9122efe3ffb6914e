/**
 * A sign a game gives of itself (software definitions, software-catalog.ts): an IPC message of a type (or the same
 * message as a report line where no IPC channel crosses, docker/container-process.ts REPORT_PREFIX), or a console
 * line matching a regex. A game's readiness is one (`ready`), a live backup's pause another (`backup.live.paused`).
 */
export type Signal = { ipc: string } | { console: RegExp };

/** Parses `{"ipc": "<message type>"}` or `{"console": "<regex>"}` at `key`; `fail` throws naming the field. */
export function parseSignal(raw: unknown, key: string, fail: (msg: string) => never): Signal {
  const usage = `"${key}" must be {"ipc": "<message type>"} or {"console": "<regex>"}`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return fail(usage);
  const r = raw as Record<string, unknown>;
  if (typeof r.ipc === 'string' && r.ipc !== '') return { ipc: r.ipc };
  if (typeof r.console === 'string' && r.console !== '') {
    try {
      return { console: new RegExp(r.console) };
    } catch (err) {
      return fail(`"${key}.console" is not a valid regex: ${(err as Error).message}`);
    }
  }
  return fail(usage);
}

/** Whether a message or console line is the signal. */
export function isSignal(signal: Signal, event: { message: unknown } | { line: string }): boolean {
  if ('ipc' in signal) return 'message' in event && (event.message as { type?: unknown } | null)?.type === signal.ipc;
  return 'line' in event && signal.console.test(event.line);
}
