// CORS for /v1 (docs/conventions.md "Browsers"): any origin by default, a configured list otherwise, never
// credentials; preflights answered before the rate limiter; the dashboard's cookie routes stay same-origin.
// One app per configuration; the requests only read or are refused.
import { createTestApp, type TestApp } from '../helpers/app';
import { launchBrowser } from '../helpers/browser';
import http from 'node:http';

describe('CORS_ORIGINS=* (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '2' } });
  });
  afterAll(() => t.finish());
  afterEach(() => t.expectContract());

  test('a preflight is answered 204 with the methods and headers the API takes, and costs no rate-limit budget', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await t.http.options('/v1/servers').set('Origin', 'https://tool.example.org')
        .set('Access-Control-Request-Method', 'POST').set('Access-Control-Request-Headers', 'authorization, content-type, idempotency-key');
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-methods']).toContain('POST');
      expect(res.headers['access-control-allow-headers']).toMatch(/Authorization.*Idempotency-Key/);
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(res.headers.ratelimit).toBeUndefined();
    }
    // The budget of 2 is untouched by the five preflights.
    const first = await t.http.get('/v1/plans').set('Authorization', `Bearer ${t.token()}`);
    expect(first.headers.ratelimit).toMatch(/r=1/);
  });

  test('an answer exposes the rate limit, Retry-After, Location and Request-Id, and allows no credentials', async () => {
    const res = await t.http.get('/v1/plans').set('Origin', 'https://tool.example.org');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-expose-headers'].split(', ')).toEqual(
      expect.arrayContaining(['RateLimit', 'RateLimit-Policy', 'Retry-After', 'Location', 'Request-Id']),
    );
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  test('the dashboard answers no CORS headers', async () => {
    const res = await t.http.options('/dashboard/sign-in').set('Origin', 'https://tool.example.org').set('Access-Control-Request-Method', 'POST');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const page = await t.http.get('/dashboard/session').set('Origin', 'https://tool.example.org');
    expect(page.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('CORS_ORIGINS=<list>', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { CORS_ORIGINS: 'https://tool.example.org, http://localhost:5173' } });
  });
  afterAll(() => t.finish());

  test.each([
    ['a listed origin', 'http://localhost:5173', 'http://localhost:5173'],
    ['another origin', 'https://evil.example.net', undefined],
  ])('%s', async (_name, origin, want) => {
    const pre = await t.http.options('/v1/servers').set('Origin', origin).set('Access-Control-Request-Method', 'GET');
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe(want);
    expect(pre.headers.vary).toMatch(/Origin/);
    const res = await t.http.get('/v1/plans').set('Origin', origin).set('Authorization', `Bearer ${t.token()}`);
    expect(res.headers['access-control-allow-origin']).toBe(want);
    t.expectContract();
  });
});

test('a page on another origin calls the API with a bearer token in a real browser, and reads the exposed headers', async () => {
  const t = await createTestApp();
  const api = await t.listen();
  // The third-party tool: a page served from another origin (another port).
  const page = http.createServer((_req, res) => res.setHeader('Content-Type', 'text/html').end('<!doctype html><title>tool</title>'));
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  const pageUrl = `http://localhost:${(page.address() as { port: number }).port}/`;
  const browser = await launchBrowser();
  try {
    const tab = await browser.context.newPage();
    await tab.goto(pageUrl);
    const got = await tab.evaluate(async ({ base, token }) => {
      const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Idempotency-Key': 'browser-1' };
      const res = await fetch(`${base}/v1/tokens`, { method: 'POST', headers, body: JSON.stringify({ name: 'from a page', scopes: ['servers:read'] }) });
      return { status: res.status, location: res.headers.get('Location'), requestId: res.headers.get('Request-Id'), rateLimit: res.headers.get('RateLimit') };
    }, { base: api.base, token: t.token() });
    expect(got.status).toBe(201);
    expect(got.location).toMatch(/^\/v1\/tokens\/tok_/);
    expect(got.requestId).toMatch(/^req_/);
    expect(got.rateLimit).toMatch(/r=\d+/);
    t.expectContract();
  } finally {
    await browser.close();
    page.close();
    await api.close();
    await t.finish();
  }
});
