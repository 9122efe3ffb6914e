import type { Context } from 'openapi-backend';
import { consoleHandlers } from '../../src/http/handlers/console';
import { metricsHandlers } from '../../src/http/handlers/metrics';
import type { SseEvent, StreamReply } from '../../src/http/types';
import { ConsoleBuffer } from '../../src/runtime/server/console-buffer';
import type { Runtime } from '../../src/service';
import type { Principal } from '../../src/store/tokens-repo';
import type { Telemetry } from '../../src/telemetry';
import { createTestApp, type TestApp } from '../helpers/app';

/**
 * The two stream operations' side of a stream pulled by its client (src/http/sse.ts): `stream(write, after)`
 * resumes after the stream's own cursor with nothing missing, or answers null when what came since is no longer
 * held; without `after` it starts where the client asked (Last-Event-ID), whatever is still held.
 */

let t: TestApp;
let serverId: string;
let principal: Principal;

beforeAll(async () => {
  t = await createTestApp();
  const token = t.token('resume@example.com');
  const created = await t.http.post('/v1/servers').set('Authorization', `Bearer ${token}`).send({ name: 'resume', plan: 'micro', version: 'flying-squid-1.20' });
  expect(created.status).toBe(201);
  serverId = created.body.id;
  principal = { userId: t.store.users.ensure('resume@example.com').id, tokenId: 'tok_resume', scopes: ['servers:read'], expiresAt: null } as Principal;
});
afterAll(() => t.finish());

/** Calls a stream operation's handler as the app does; `lastEventId` is the client's header. */
function open(handler: unknown, lastEventId?: string): StreamReply {
  const call = {
    principal,
    path: { server_id: serverId },
    server: { id: serverId, ownerId: principal.userId, access: { role: 'owner', permissions: [] } },
    query: {},
    body: undefined,
    headers: lastEventId === undefined ? {} : { 'last-event-id': lastEventId },
    context: {} as Context,
  };
  return (handler as (c: typeof call) => StreamReply)(call);
}

describe('console', () => {
  /** A console of five lines with ten written (6 to 10 held), as the runtime hands it to the handler. */
  function consoleOfTen() {
    const buffer = new ConsoleBuffer(5, null, () => '2026-11-22T08:00:00.000Z');
    for (let i = 1; i <= 10; i++) buffer.push('stdout', `line ${i}`);
    const consoles = {
      subscribe: (_id: string, fn: (l: unknown) => void, opts: { afterSeq?: number } = {}) => buffer.subscribe(fn as never, opts.afterSeq),
      holdsAllAfter: (_id: string, seq: number) => buffer.holdsAllAfter(seq),
    } as unknown as Runtime['consoles'];
    return { buffer, handler: consoleHandlers({ consoles, idempotency: t.store.idempotency }).streamServerConsole };
  }
  const held = [6, 7, 8, 9, 10];

  test.each([
    { name: 'no Last-Event-ID: every held line', lastEventId: undefined, after: undefined, want: held },
    { name: 'Last-Event-ID of a held line: the lines after it', lastEventId: '7', after: undefined, want: [8, 9, 10] },
    { name: 'Last-Event-ID older than the buffer: what is held', lastEventId: '2', after: undefined, want: held },
    { name: 'after the line before the oldest held: all of them', lastEventId: '2', after: '5', want: held },
    { name: 'after a held line: the lines after it', lastEventId: undefined, after: '8', want: [9, 10] },
    { name: 'after the newest line: nothing yet', lastEventId: undefined, after: '10', want: [] },
    { name: 'after a line that left the buffer: refused', lastEventId: undefined, after: '4', want: null },
  ])('$name', ({ lastEventId, after, want }) => {
    const { buffer, handler } = consoleOfTen();
    const got: SseEvent[] = [];
    const off = open(handler, lastEventId).stream((e) => got.push(e), after);
    if (want === null) expect(off).toBeNull();
    else expect(got.map((e) => [e.event, Number(e.id)])).toEqual(want.map((seq) => ['line', seq]));
    // Refused means not subscribed either; otherwise live lines follow, until unsubscribed.
    const live = buffer.push('stdout', 'live');
    expect(got.at(-1)?.id === String(live.seq)).toBe(want !== null);
    off?.();
    buffer.push('stdout', 'after the end');
    expect(got.some((e) => (e.data as { text: string }).text === 'after the end')).toBe(false);
  });
});

describe('metrics', () => {
  const REPLAY_LIMIT = 1000;
  let ids: string[];

  beforeAll(() => {
    const start = Math.floor(Date.now() / 1000) - 2 * REPLAY_LIMIT;
    const samples = Array.from({ length: REPLAY_LIMIT + 5 }, (_, i) => ({
      server_id: serverId,
      at: new Date((start + i) * 1000).toISOString(),
      tps: 20,
      cpu_percent: 1,
      ram_bytes: 1024,
      players_online: 0,
      players_max: 5,
    }));
    ids = t.metrics.write(samples).map((s) => s.id);
  });

  const handler = () => metricsHandlers({ telemetry: { store: t.metrics, sampler: t.sampler } as Telemetry }).streamServerMetrics;

  test.each([
    { name: 'no Last-Event-ID: live samples only', lastEventId: undefined, after: undefined, want: 0 },
    { name: 'Last-Event-ID with more than 1,000 since: the first 1,000', lastEventId: 0, after: undefined, want: REPLAY_LIMIT },
    { name: 'after a sample with fewer than 1,000 since: all of them', lastEventId: undefined, after: 5, want: REPLAY_LIMIT - 1 },
    { name: 'after a sample with 1,000 or more since: refused, not cut short', lastEventId: undefined, after: 4, want: null },
  ])('$name', ({ lastEventId, after, want }) => {
    const got: SseEvent[] = [];
    const off = open(handler(), lastEventId === undefined ? undefined : ids[lastEventId]).stream((e) => got.push(e), after === undefined ? undefined : ids[after]);
    if (want === null) return expect(off).toBeNull();
    off?.();
    expect(got).toHaveLength(want);
    const first = after ?? lastEventId;
    if (first !== undefined) expect(got.map((e) => e.id)).toEqual(ids.slice(first + 1, first + 1 + want));
  });
});
