// The Host check (RFC 9110 §7.2, §15.5.20): with ALLOWED_HOSTS set, a request for any other host name is a 421
// problem everywhere but /healthz, so a name an attacker points at this address (DNS rebinding) reaches nothing.
import { loadConfig } from '../../src/config';
import { createTestApp, type TestApp } from '../helpers/app';

type Case = [string, { path: string; host: string; forwarded?: string; want: number }];

/** Sends `path` with this Host (and X-Forwarded-Host) and a valid token; checks the status and, for 421, the problem. */
async function expectAnswer(t: TestApp, token: string, { path, host, forwarded, want }: Case[1]) {
  let req = t.http.get(path).set('Host', host).set('Authorization', `Bearer ${token}`);
  if (forwarded) req = req.set('X-Forwarded-Host', forwarded);
  const res = await req;
  expect(res.status).toBe(want);
  if (want === 421) {
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 421, code: 'misdirected_request' });
  }
}

describe('with ALLOWED_HOSTS', () => {
  // Read-only: every request is a GET; one app for the table.
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await createTestApp({ env: { ALLOWED_HOSTS: 'api.example.test, [::1]' } });
    token = t.token();
  });
  afterAll(() => t.close());
  afterEach(() => t.expectContract());

  test.each<Case>([
    ['a listed host', { path: '/v1/plans', host: 'api.example.test', want: 200 }],
    ['a listed host, another case and a port', { path: '/v1/plans', host: 'API.Example.TEST:8443', want: 200 }],
    ['a listed host as a fully qualified name', { path: '/v1/plans', host: 'api.example.test.', want: 200 }],
    ['a listed IPv6 literal with a port', { path: '/v1/plans', host: '[::1]:8080', want: 200 }],
    ['another host on /v1', { path: '/v1/plans', host: 'rebound.attacker.example', want: 421 }],
    ['a listed name inside another', { path: '/v1/plans', host: 'api.example.test.attacker.example', want: 421 }],
    ['another host on an unknown /v1 path', { path: '/v1/nothing', host: 'rebound.attacker.example', want: 421 }],
    ['another host on the docs', { path: '/openapi.json', host: 'rebound.attacker.example', want: 421 }],
    ['another host on the dashboard', { path: '/', host: 'rebound.attacker.example', want: 421 }],
    ['X-Forwarded-Host is ignored without TRUST_PROXY', { path: '/v1/plans', host: 'evil.example', forwarded: 'api.example.test', want: 421 }],
    ['health checks by address are answered', { path: '/healthz', host: '10.0.0.7:8080', want: 200 }],
  ])('%s', async (_name, c) => expectAnswer(t, token, c));
});

describe('with ALLOWED_HOSTS behind a trusted proxy', () => {
  // Read-only: every request is a GET; one app for the table.
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await createTestApp({ env: { ALLOWED_HOSTS: 'api.example.test', TRUST_PROXY: 'true' } });
    token = t.token();
  });
  afterAll(() => t.close());
  afterEach(() => t.expectContract());

  test.each<Case>([
    ['the host the client asked the proxy for is listed', { path: '/v1/plans', host: '10.0.0.7', forwarded: 'api.example.test', want: 200 }],
    ['the host the client asked the proxy for is not', { path: '/v1/plans', host: 'api.example.test', forwarded: 'evil.example', want: 421 }],
  ])('%s', async (_name, c) => expectAnswer(t, token, c));
});

test('without ALLOWED_HOSTS every host is served (the default: the operator decides)', async () => {
  const t = await createTestApp();
  try {
    await expectAnswer(t, t.token(), { path: '/v1/plans', host: 'anything.example', want: 200 });
    t.expectContract();
  } finally {
    await t.close();
  }
});

test.each([
  ['a port', 'api.example.test:8443'],
  ['a path', 'api.example.test/x'],
  ['a space inside', 'api example'],
  ['a wildcard', '*.example.test'],
])('ALLOWED_HOSTS with %s is refused at start', (_name, value) => {
  expect(() => loadConfig({ ALLOWED_HOSTS: value })).toThrow(/ALLOWED_HOSTS/);
});
