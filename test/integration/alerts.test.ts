// Alert rules through the API (openapi/v1.yaml createServerAlertRule), evaluated by src/runtime/loops/alerts.ts on the
// test app's real database, fed samples by hand so each transition is exact: when a rule triggers and resolves,
// that each change is one alert.* event, and that hovering around the threshold is no storm. Real servers:
// test/e2e/alerts.test.ts.
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';
import { silentLogger } from '../../src/log';
import { createAlerts, type AlertSample } from '../../src/runtime/loops/alerts';
import { plans } from '../../src/catalog/plans';

let t: TestApp;
let token: string;
let id: string;
const auth = () => ({ Authorization: `Bearer ${token}` });

beforeEach(async () => {
  t = await createTestApp();
  token = t.token();
  id = (await t.http.post('/v1/servers').set(auth()).send({ name: 'watched', plan: 'micro', version: 'flying-squid-1.20' })).body.id;
  await until('installed', async () => (await t.http.get(`/v1/servers/${id}`).set(auth())).body.state === 'stopped');
});
afterEach(async () => {
  await t.runtime.idle();
  await t.finish();
});

/** An evaluator on the app's store, and a way to hand it samples at a second since the start. */
function evaluator() {
  let listener: (s: AlertSample) => void = () => undefined;
  const alerts = createAlerts({ subscribe: (fn) => ((listener = fn), () => undefined), repo: t.store.alerts, servers: t.store.servers, plans, log: silentLogger });
  alerts.start();
  return (second: number, values: Partial<AlertSample>) =>
    listener({ server_id: id, at: new Date(Date.UTC(2026, 0, 1) + second * 1000).toISOString(), tps: 20, cpu_percent: 5, ram_bytes: 1 << 20, players_online: 0, ...values });
}
const alertEvents = async () =>
  ((await t.http.get('/v1/events').query({ server_id: id, limit: 100 }).set(auth())).body.data as Array<{ type: string; data: { alert: { id: string; state: string }; value: number | null; reason: string | null } }>)
    .filter((e) => e.type.startsWith('alert.'));

// Each step: [second, the sample's values]; `want`: the alert.* events, as [type, value].
type Step = [number, Partial<AlertSample>];
const cases: Array<[string, { rule: object; steps: Step[]; want: Array<[string, number | null]> }]> = [
  ['TPS below 15 for 10 s: triggers after 10 s of it, resolves after 10 s without', {
    rule: { kind: 'metric', metric: 'tps', comparison: 'below', threshold: 15, duration_seconds: 10 },
    steps: [[0, { tps: 12 }], [5, { tps: 11 }], [10, { tps: 10 }], [15, { tps: 19 }], [20, { tps: 19.5 }], [25, { tps: 20 }]],
    want: [['alert.triggered', 10], ['alert.resolved', 20]],
  }],
  ['a good sample in between starts the count again', {
    rule: { kind: 'metric', metric: 'tps', comparison: 'below', threshold: 15, duration_seconds: 10 },
    steps: [[0, { tps: 12 }], [6, { tps: 18 }], [8, { tps: 12 }], [14, { tps: 12 }], [18, { tps: 12 }]],
    want: [['alert.triggered', 12]],
  }],
  ['hovering around the threshold every sample: one trigger, no storm', {
    rule: { kind: 'metric', metric: 'cpu_percent', comparison: 'above', threshold: 50, duration_seconds: 5 },
    steps: [[0, { cpu_percent: 60 }], [5, { cpu_percent: 70 }], [6, { cpu_percent: 40 }], [7, { cpu_percent: 60 }], [8, { cpu_percent: 40 }], [9, { cpu_percent: 60 }], [10, { cpu_percent: 40 }]],
    want: [['alert.triggered', 70]],
  }],
  ['exactly at the threshold is not above it', {
    rule: { kind: 'metric', metric: 'players_online', comparison: 'above', threshold: 2, duration_seconds: 0 },
    steps: [[0, { players_online: 2 }], [1, { players_online: 3 }], [2, { players_online: 2 }]],
    want: [['alert.triggered', 3], ['alert.resolved', 2]],
  }],
  ['ram_percent is of the plan (micro: 512 MiB)', {
    rule: { kind: 'metric', metric: 'ram_percent', comparison: 'above', threshold: 90, duration_seconds: 0 },
    steps: [[0, { ram_bytes: 400 * 2 ** 20 }], [1, { ram_bytes: 480 * 2 ** 20 }]],
    want: [['alert.triggered', 93.8]],
  }],
  ['no TPS reported yet counts for neither side', {
    rule: { kind: 'metric', metric: 'tps', comparison: 'below', threshold: 15, duration_seconds: 4 },
    steps: [[0, { tps: 10 }], [2, { tps: null }], [4, { tps: 10 }], [8, { tps: 10 }]],
    want: [['alert.triggered', 10]],
  }],
];

test.each(cases)('%s', async (_name, { rule, steps, want }) => {
  const plansMicro = plans.find((p) => p.id === 'micro')!;
  expect(plansMicro.memory_mb).toBe(512);
  const created = await t.http.post(`/v1/servers/${id}/alerts`).set(auth()).send(rule);
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ ...rule, state: 'ok', state_since: null });
  const sample = evaluator();
  for (const [second, values] of steps) sample(second, values);
  const events = await alertEvents();
  expect(events.map((e) => [e.type, e.data.value])).toEqual(want);
  for (const e of events) expect(e.data.alert.id).toBe(created.body.id);
  const now = (await t.http.get(created.headers.location).set(auth())).body;
  expect(now.state).toBe(want.length % 2 === 1 ? 'firing' : 'ok');
});

test('a crash rule triggers on a crash with its reason (in the crash\'s transaction) and resolves on the next sample', async () => {
  const rule = (await t.http.post(`/v1/servers/${id}/alerts`).set(auth()).send({ kind: 'crash', name: 'Any crash' })).body;
  expect(rule).toMatchObject({ kind: 'crash', name: 'Any crash', duration_seconds: 0, state: 'ok' });
  expect(rule.metric).toBeUndefined();
  const sample = evaluator();
  t.store.crashes.record(id, { exit_code: 137, signal: null, reason: 'out_of_memory', last_lines: [] });
  t.store.crashes.record(id, { exit_code: 1, signal: null, reason: 'exited', last_lines: [] }); // already firing: no second trigger
  sample(0, {});
  const events = await alertEvents();
  expect(events.map((e) => [e.type, e.data.reason])).toEqual([['alert.triggered', 'out_of_memory'], ['alert.resolved', null]]);
});

test.each<[string, object, string[]]>([
  ['a metric rule without its metric', { kind: 'metric', comparison: 'below', threshold: 1 }, ['/body/metric']],
  ['a metric rule with nothing', { kind: 'metric' }, ['/body/metric', '/body/comparison', '/body/threshold']],
  ['a crash rule with a threshold', { kind: 'crash', threshold: 3, duration_seconds: 5 }, ['/body/threshold', '/body/duration_seconds']],
])('%s is 400 with pointers, and nothing is created', async (_name, body, pointers) => {
  const res = await t.http.post(`/v1/servers/${id}/alerts`).set(auth()).send(body);
  expect([res.status, res.body.code]).toEqual([400, 'validation_failed']);
  expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(pointers);
  expect((await t.http.get(`/v1/servers/${id}/alerts`).set(auth())).body.data).toEqual([]);
});

test('20 rules per server; then 403 quota_exceeded; a deleted rule is 404 and frees its place', async () => {
  const rule = { kind: 'metric', metric: 'tps', comparison: 'below', threshold: 15 };
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) ids.push((await t.http.post(`/v1/servers/${id}/alerts`).set(auth()).send(rule)).body.id);
  expect(ids.every(Boolean)).toBe(true);
  const over = await t.http.post(`/v1/servers/${id}/alerts`).set(auth()).send(rule);
  expect(over.body).toMatchObject({ status: 403, code: 'quota_exceeded', quota: 'alert_rules', limit: 20, used: 20 });
  const page = (await t.http.get(`/v1/servers/${id}/alerts`).query({ limit: 15 }).set(auth())).body;
  expect([page.data.length, page.has_more, page.next_cursor]).toEqual([15, true, ids[14]]);
  expect((await t.http.delete(`/v1/servers/${id}/alerts/${ids[0]}`).set(auth())).status).toBe(204);
  const gone = await t.http.get(`/v1/servers/${id}/alerts/${ids[0]}`).set(auth());
  expect([gone.status, gone.body.code]).toEqual([404, 'alert_rule_not_found']);
  expect((await t.http.post(`/v1/servers/${id}/alerts`).set(auth()).send(rule)).status).toBe(201);
});
