import type { Telemetry } from '../../telemetry';
import type { Handlers } from '../types';
import { windowOrThrow } from '../../telemetry/range';

/** Replayed on reconnect at most (the spec's streamServerMetrics description). */
const REPLAY_LIMIT = 1000;

/** Metrics tag: getServerMetrics, streamServerMetrics. */
export function metricsHandlers(deps: { telemetry: Telemetry }): Handlers {
  const { telemetry } = deps;
  return {
    getServerMetrics: ({ server, query }) => {
      const { range, ms, endMs } = windowOrThrow(query, telemetry.store.now());
      return { status: 200, body: telemetry.store.query(server.id, ms, range, endMs) };
    },

    streamServerMetrics: ({ server, headers }) => {
      const last = headers['last-event-id'];
      return {
        status: 200,
        serverId: server.id,
        stream: (write, after) => {
          // After the stream's own cursor when it resumes, else after the client's Last-Event-ID, if any.
          const from = after ?? (typeof last === 'string' ? last : undefined);
          // Subscribe first, then replay: a sample taken in between is sent once (ids are unix seconds and only
          // grow, so skip repeats). Compared as numbers: a client's Last-Event-ID may be any digit string.
          let lastSent = from === undefined ? 0 : Number(from);
          const send = (sample: { id: string }) => {
            if (Number(sample.id) <= lastSent) return;
            lastSent = Number(sample.id);
            write({ event: 'sample', id: sample.id, data: sample });
          };
          const unsubscribe = telemetry.sampler.subscribe(send, server.id);
          if (from === undefined) return unsubscribe;
          const missed = telemetry.store.after(server.id, from, REPLAY_LIMIT);
          // A full replay may not be all: a resuming stream would skip the rest, so it is dropped instead.
          if (after !== undefined && missed.length === REPLAY_LIMIT) {
            unsubscribe();
            return null;
          }
          for (const s of missed) send(s);
          return unsubscribe;
        },
      };
    },
  };
}
