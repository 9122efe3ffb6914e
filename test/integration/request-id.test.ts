// Request-Id on every answer (docs/conventions.md "Request ids"): echoed when the client sends a valid one, made
// otherwise, repeated in problem documents and written on every log line about the request. Every 503 says
// Retry-After. One app for the file: the requests below only read or are refused.
import { createTestApp, type TestApp } from '../helpers/app';
import { createLogger } from '../../src/log';

let t: TestApp;
const lines: Array<Record<string, unknown>> = [];
beforeAll(async () => {
  t = await createTestApp({ logger: createLogger((l) => lines.push(JSON.parse(l))) });
});
afterAll(() => t.finish());
afterEach(() => t.expectContract());

test.each([
  ['an answer', '/v1/plans', true],
  ['a problem (no token)', '/v1/plans', false],
  ['a problem (unknown route)', '/v1/nowhere', true],
  ['an answer outside /v1', '/healthz', false],
])('%s carries a fresh Request-Id, and a valid one sent is echoed', async (_name, path, authed) => {
  const auth = authed ? { Authorization: `Bearer ${t.token()}` } : {};
  const made = await t.http.get(path).set(auth);
  expect(made.headers['request-id']).toMatch(/^req_[A-Za-z0-9_-]{20}$/);
  const echoed = await t.http.get(path).set(auth).set('Request-Id', 'client-7f3a');
  expect(echoed.headers['request-id']).toBe('client-7f3a');
  if (made.status >= 400) expect([made.body.request_id, echoed.body.request_id]).toEqual([made.headers['request-id'], 'client-7f3a']);
});

test('a Request-Id that is too long or not visible ASCII is replaced, not echoed', async () => {
  for (const bad of ['x'.repeat(201), 'has space']) {
    const res = await t.http.get('/healthz').set('Request-Id', bad);
    expect(res.headers['request-id']).toMatch(/^req_/);
  }
});

test('every log line about a request carries its id', async () => {
  lines.length = 0;
  await t.http.get('/v1/servers').set('Authorization', `Bearer ${t.token()}`).set('Request-Id', 'trace-me');
  const mine = lines.filter((l) => l.request_id === 'trace-me');
  expect(mine.map((l) => l.msg)).toContain('request');
  expect(lines.filter((l) => l.msg === 'request' && l.path === '/v1/servers').every((l) => l.request_id === 'trace-me')).toBe(true);
});
