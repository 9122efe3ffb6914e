import { EventEmitter } from 'node:events';
import type { RuntimeEvents } from './types';

/**
 * What the runtime publishes to the rest of the service, one bus per service: every real change of a server's
 * observed state, and the end of a removal (telemetry drops the server's history on it).
 */
export function createRuntimeEvents() {
  const emitter = new EventEmitter();
  return {
    emit: <E extends keyof RuntimeEvents>(event: E, e: RuntimeEvents[E]): void => void emitter.emit(event, e),
    on: <E extends keyof RuntimeEvents>(event: E, fn: (e: RuntimeEvents[E]) => void): void => void emitter.on(event, fn),
    off: <E extends keyof RuntimeEvents>(event: E, fn: (e: RuntimeEvents[E]) => void): void => void emitter.off(event, fn),
  };
}

export type RuntimeEventBus = ReturnType<typeof createRuntimeEvents>;
