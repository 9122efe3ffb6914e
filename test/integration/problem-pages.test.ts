// Problem type URIs resolve (RFC 9457 §3.1.1; docs/conventions.md "Errors"): `type` is <PUBLIC_URL>/problems/<code>,
// this service answers a page there for every registered code, and the spec it serves names PUBLIC_URL as its
// server. One app for the file: it only reads.
import { createTestApp, type TestApp } from '../helpers/app';
import { errorRegistry } from '../../src/errors';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { PUBLIC_URL: 'https://api.gsh.test/' } });
});
afterAll(() => t.finish());
afterEach(() => t.expectContract());

test('a problem\'s type is a page this service serves, for every registered code', async () => {
  const res = await t.http.get('/v1/servers');
  expect(res.body.type).toBe('https://api.gsh.test/problems/unauthorized');
  for (const code of Object.keys(errorRegistry)) {
    const page = await t.http.get(new URL(`https://api.gsh.test/problems/${code}`).pathname);
    expect([code, page.status, page.type]).toEqual([code, 200, 'text/html']);
    expect(page.text).toContain(`<code>${code}</code>`);
  }
  expect((await t.http.get('/problems')).text).toContain('/problems/quota_exceeded');
  const unknown = await t.http.get('/problems/no_such_code');
  expect([unknown.status, unknown.body.code]).toEqual([404, 'not_found']);
});

test('the served spec names PUBLIC_URL as its server, as YAML and as JSON', async () => {
  expect((await t.http.get('/openapi.json')).body.servers[0].url).toBe('https://api.gsh.test');
  expect((await t.http.get('/openapi.yaml')).text).toMatch(/^servers:\n {2}- url: https:\/\/api\.gsh\.test$/m);
});
