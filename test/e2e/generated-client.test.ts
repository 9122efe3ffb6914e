import createClient from 'openapi-fetch';
import type { paths } from '../../generated/v1';
import { createTestApp, type TestApp } from '../helpers/app';

// A client author's day one: generate types from the published spec, point openapi-fetch at a listening
// service, and drive it. Everything below is type-checked against generated/v1.ts by `npm test`.
// Each test gets its own listening app and database (the first one creates, renames and deletes servers).
let t: TestApp;
let server: { base: string; close(): Promise<void> };
let baseUrl: string;
beforeEach(async () => {
  t = await createTestApp();
  server = await t.listen();
  baseUrl = server.base;
});
afterEach(async () => {
  await server.close();
  await t.finish();
});

test('a generated client creates, reads, pages, renames and deletes servers', async () => {
  const specRes = await fetch(`${baseUrl}/openapi.json`);
  expect(specRes.status).toBe(200);
  expect(((await specRes.json()) as { info: { title: string } }).info.title).toBe('Game Server Hosting API');

  const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${t.token()}` } });
  const plans = await client.GET('/v1/plans');
  const versions = await client.GET('/v1/versions');
  expect(plans.data?.data.length).toBeGreaterThan(0);

  const created = await client.POST('/v1/servers', {
    body: { name: 'SDK made me', plan: plans.data!.data[0].id, version: versions.data!.data[0].id },
    params: { header: { 'Idempotency-Key': 'sdk-1' } },
  });
  expect(created.response.status).toBe(201);
  const id = created.data!.id;

  const got = await client.GET('/v1/servers/{server_id}', { params: { path: { server_id: id } } });
  expect(got.data?.name).toBe('SDK made me');

  const listed = await client.GET('/v1/servers', { params: { query: { limit: 1 } } });
  expect(listed.data?.data.map((s) => s.id)).toEqual([id]);

  const renamed = await client.PATCH('/v1/servers/{server_id}', { params: { path: { server_id: id } }, body: { name: 'Renamed' } });
  expect(renamed.data?.name).toBe('Renamed');

  const bad = await client.POST('/v1/servers', { body: { name: '', plan: 'micro', version: 'x-1' } });
  expect(bad.response.status).toBe(400);
  expect(bad.error?.code).toBe('validation_failed');
  expect(bad.response.headers.get('content-type')).toMatch(/^application\/problem\+json/);

  const deleted = await client.DELETE('/v1/servers/{server_id}', { params: { path: { server_id: id } } });
  expect(deleted.data?.state).toBe('deleting');
});

test('/healthz, /openapi.yaml and /docs answer without a token, and the docs load nothing from outside', async () => {
  expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
  const yaml = await fetch(`${baseUrl}/openapi.yaml`);
  expect(await yaml.text()).toMatch(/^openapi: 3\.1\.0/);
  const docs = await fetch(`${baseUrl}/docs`);
  expect(docs.status).toBe(200);
  const html = await docs.text();
  expect(html).toContain('Game Server Hosting API');
  // No script or stylesheet is loaded from another origin.
  expect(html.match(/<(script|link)[^>]+(src|href)="https?:\/\/[^"]+"/g) ?? []).toEqual([]);
  expect(docs.headers.get('content-security-policy')).toContain("default-src 'self'");
});
