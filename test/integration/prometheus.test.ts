// The operator's Prometheus metrics (README "Metrics"), scraped over real sockets and read with an independent
// parser: the counters move with real traffic, labels stay bounded, and /metrics is never open to tenants.
// Game ports 29200-29249 (29200-29209 here, 29240-29249 for the METRICS_PORT service).
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createTestApp, tempDir, type TestApp } from '../helpers/app';
import { scrape } from '../helpers/prometheus';
import { until } from '../helpers/wait';
import { loadConfig } from '../../src/config';
import { silentLogger } from '../../src/log';
import { startService } from '../../src/service';

const METRICS_TOKEN = 'metrics-token-for-the-operator-0123456789';
const software = path.join(__dirname, '..', 'runtime', 'fixtures', 'software');

let t: TestApp;
let base: string;
let closeListener: () => Promise<void>;

// Each test gets its own service, database and data folder (docs/conventions.md "Tests").
beforeEach(async () => {
  t = await createTestApp({
    boot: true,
    software,
    env: { GAME_PORT_RANGE: '29200-29209', METRICS_TOKEN, RATE_LIMIT_PER_MINUTE: '20', WEBHOOK_ALLOW_PRIVATE: 'true' },
    runtime: { backoffMs: 200, stopTimeoutMs: 3_000, reconcileMs: 500 },
  });
  const listener = await t.listen();
  base = listener.base;
  closeListener = listener.close;
});
afterEach(async () => {
  await closeListener();
  await t.finish();
});

test('counters move with real traffic: requests by operationId and status, rate limiting, actions, crashes, streams', async () => {
  const token = t.token('ops@example.com');
  const auth = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  const before = await scrape(`${base}/metrics`, METRICS_TOKEN);
  expect(before.value('gsh_http_request_duration_seconds_count', { operation: 'listServers', status: '200' })).toBe(0);

  for (let i = 0; i < 3; i++) expect((await fetch(`${base}/v1/servers`, { headers: auth })).status).toBe(200);
  const created = await fetch(`${base}/v1/servers`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: 'Crashy', plan: 'micro', version: 'fake-game-crash-1.0' }),
  });
  expect(created.status).toBe(201);
  const id = ((await created.json()) as { id: string }).id;
  await until('installed', () => t.store.servers.find(id)?.state === 'stopped');
  expect((await fetch(`${base}/v1/servers/${id}/actions`, { method: 'POST', headers: auth, body: '{"type":"start"}' })).status).toBe(202);
  await until('a crash', () => t.store.crashes.list(id, 1).length > 0);
  await t.runtime.idle();

  // An event stream, open while we scrape.
  const stream = new AbortController();
  const open = await fetch(`${base}/v1/servers/${id}/console/stream`, { headers: auth, signal: stream.signal });
  expect(open.status).toBe(200);
  // Requests without a valid token share a budget per address (20 here): the 21st is refused.
  const anonymous = [];
  for (let i = 0; i < 21; i++) anonymous.push((await fetch(`${base}/v1/servers`)).status);
  expect(anonymous).toContain(429);

  const after = await scrape(`${base}/metrics`, METRICS_TOKEN);
  stream.abort();
  expect(after.value('gsh_http_request_duration_seconds_count', { operation: 'listServers', status: '200' })).toBe(3);
  expect(after.value('gsh_http_request_duration_seconds_count', { operation: 'listServers', status: '401' })).toBe(20);
  expect(after.value('gsh_http_request_duration_seconds_count', { operation: 'createServer', status: '201' })).toBe(1);
  expect(after.value('gsh_http_request_duration_seconds_count', { operation: 'v1', status: '429' })).toBe(1);
  expect(after.value('gsh_rate_limit_rejections_total', { area: 'v1' })).toBe(1);
  expect(after.value('gsh_streams_open')).toBe(1);
  expect(after.value('gsh_actions_finished_total', { type: 'start', outcome: 'failed' })).toBeGreaterThanOrEqual(1);
  const reasons = after.families.find((f) => f.name === 'gsh_crashes_total')!.metrics;
  expect(reasons.reduce((n, m) => n + Number(m.value), 0)).toBeGreaterThanOrEqual(1);
  expect(t.store.crashes.list(id, 1)[0].reason).toBe(reasons[0].labels!.reason);
  const states = after.families.find((f) => f.name === 'gsh_servers')!.metrics;
  expect(states.map((m) => m.labels!.state).sort()).toEqual(
    ['crashed', 'deleting', 'installing', 'running', 'starting', 'stopped', 'stopping', 'unreachable'],
  );
  expect(states.reduce((n, m) => n + Number(m.value), 0)).toBe(1);
  expect(after.value('gsh_sqlite_file_bytes', { file: 'main' })).toBeGreaterThan(0);
  expect(after.value('gsh_sqlite_file_bytes', { file: 'wal' })).toBeGreaterThan(0);
  for (const name of ['gsh_telemetry_sampler_lag_seconds', 'gsh_telemetry_sampler_round_seconds', 'gsh_telemetry_rows_written_total']) {
    expect(after.has(name)).toBe(true);
  }
  // Node's default metrics.
  for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds']) {
    expect(after.has(name)).toBe(true);
  }
});

test('webhook deliveries and their backlog: a delivery that cannot be made stays pending, and is counted', async () => {
  const token = t.token('hooks@example.com');
  const auth = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  const before = await scrape(`${base}/metrics`, METRICS_TOKEN);
  expect(before.value('gsh_webhook_deliveries', { status: 'pending' })).toBe(0);
  // Port 9 (discard) on loopback: nothing listens, so every attempt fails and the delivery is retried later.
  const hook = await fetch(`${base}/v1/webhooks`, { method: 'POST', headers: auth, body: JSON.stringify({ url: 'http://127.0.0.1:9/in', event_types: ['server.created'] }) });
  expect(hook.status).toBe(201);
  const id = ((await hook.json()) as { id: string }).id;
  expect((await fetch(`${base}/v1/webhooks/${id}/test`, { method: 'POST', headers: auth })).status).toBe(202);
  const after = await scrape(`${base}/metrics`, METRICS_TOKEN);
  expect(after.value('gsh_webhook_deliveries', { status: 'pending' })).toBe(1);
  expect(after.value('gsh_webhook_deliveries', { status: 'succeeded' })).toBe(0);
});

test('labels are bounded: no server, user or token id in any label', async () => {
  const token = t.token('ops@example.com');
  const auth = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  const created = await fetch(`${base}/v1/servers`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'A', plan: 'micro', version: 'fake-game-1.0' }) });
  const id = ((await created.json()) as { id: string }).id;
  await fetch(`${base}/v1/servers/${id}`, { headers: auth });
  await fetch(`${base}/v1/servers/srv_nosuchserver00000000`, { headers: auth });
  await fetch(`${base}/dashboard/${id}`);
  await fetch(`${base}/no/such/${id}`);
  await t.runtime.idle();
  const { families } = await scrape(`${base}/metrics`, METRICS_TOKEN);
  const allowed = new Set(['operation', 'status', 'area', 'type', 'outcome', 'reason', 'state', 'file', 'le']);
  for (const family of families.filter((f) => f.name.startsWith('gsh_'))) {
    for (const sample of family.metrics) {
      for (const [label, value] of Object.entries(sample.labels ?? {})) {
        expect([family.name, allowed.has(label)]).toEqual([family.name, true]);
        expect(value).not.toMatch(/(srv|usr|tok|act|crs)_/);
      }
    }
  }
  const operations = new Set(families.find((f) => f.name === 'gsh_http_request_duration_seconds_count')!.metrics.map((m) => m.labels!.operation));
  expect([...operations].sort()).toEqual(['createServer', 'dashboard', 'getServer', 'other']);
});

test.each([
  ['no token', undefined],
  ['a tenant API token', 'tenant'],
  ['a wrong token', `${METRICS_TOKEN}x`],
])('/metrics refuses %s with a 401 problem', async (_name, presented) => {
  const token = presented === 'tenant' ? t.token('tenant@example.com') : presented;
  const res = await fetch(`${base}/metrics`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  expect(res.status).toBe(401);
  expect(res.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
  expect(res.headers.get('www-authenticate')).toBe('Bearer realm="gsh-metrics"');
  const body = (await res.json()) as { code: string };
  expect(body.code).toBe('unauthorized');
});

test('without METRICS_TOKEN the main port serves no /metrics, even to a valid API token', async () => {
  const plain = await createTestApp();
  try {
    const res = await plain.http.get('/metrics').set('Authorization', `Bearer ${plain.token()}`);
    expect(res.status).toBe(404);
    expect(plain.prometheus).toBeUndefined();
  } finally {
    await plain.finish();
  }
});

test('METRICS_PORT serves /metrics on a listener of its own, and only there', async () => {
  const dir = tempDir('metrics-port');
  const config = loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', GAME_PORT_RANGE: '29240-29249' });
  const service = await startService(config, silentLogger);
  try {
    const main = `http://127.0.0.1:${(service.http.address() as AddressInfo).port}`;
    const metrics = `http://127.0.0.1:${(service.metricsHttp!.address() as AddressInfo).port}`;
    expect(config.prometheus.host).toBe('127.0.0.1');
    expect((await fetch(`${main}/metrics`)).status).toBe(404);
    for (let i = 0; i < 2; i++) expect((await fetch(`${main}/healthz`)).status).toBe(200);
    const scraped = await scrape(`${metrics}/metrics`);
    expect(scraped.value('gsh_http_request_duration_seconds_count', { operation: 'healthz', status: '200' })).toBe(2);
    expect((await fetch(`${metrics}/v1/servers`)).status).toBe(404);
  } finally {
    await service.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
