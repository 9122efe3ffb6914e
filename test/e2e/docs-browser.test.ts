import fs from 'node:fs';
import path from 'node:path';
import { createTestApp, type TestApp } from '../helpers/app';
import type { Browser, BrowserContext } from 'playwright-core';
import { CHROMIUM, artifactsDir, launchChromium } from '../helpers/browser';
import { loadSpec } from '../../src/spec';

let t: TestApp;
let server: { base: string; close(): Promise<void> };
let base: string;
// One browser for the file (docs/conventions.md "Tests"); each test opens a context of its own, a fresh profile.
let browser: Browser;
let context: BrowserContext;
beforeAll(async () => {
  // Streams end after 2 s, so the quickstart's browser stream reader (which reads until the end) finishes.
  [t, browser] = await Promise.all([createTestApp({ env: { PUBLIC_URL: 'https://play.example.net', STREAM_MAX_LIFETIME_S: '2' } }), launchChromium(CHROMIUM)]);
  server = await t.listen();
  base = server.base;
});
beforeEach(async () => {
  context = await browser.newContext();
});
afterEach(() => context?.close());
afterAll(async () => {
  await browser?.close();
  await server.close();
  await t.close();
});

test('the API docs render in a real browser and load nothing from outside this host', async () => {
  const page = await context.newPage();
  const outside: string[] = [];
  // Any request to another origin is recorded and refused, so the test also proves the page works without them.
  await page.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.origin !== base && url.protocol !== 'data:' && url.protocol !== 'blob:') {
      outside.push(url.href);
      return route.abort();
    }
    return route.continue();
  });
  const errors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text())); // CSP violations land here too
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${base}/docs`);
  await page.getByRole('heading', { name: /Game Server Hosting API/ }).first().waitFor({ timeout: 30_000 });
  fs.mkdirSync(artifactsDir, { recursive: true });
  await page.getByText('Create a server').first().waitFor({ timeout: 30_000 });
  await page.screenshot({ path: path.join(artifactsDir, 'docs.png') });
  // The page is live, not just prerendered HTML: the sidebar opens a tag and shows its operations.
  await page.getByText('Metrics', { exact: true }).first().click();
  await page.getByText('Get TPS, RAM, CPU and players over a time range').first().waitFor({ timeout: 10_000 });
  expect(errors).toEqual([]);
  expect(outside).toEqual([]);
});

test('the docs teach: this instance as the server, code samples, rendered tag tables, scope names whole', async () => {
  const page = await context.newPage();
  await page.setViewportSize({ width: 1400, height: 1000 });
  await page.goto(`${base}/docs#tag/Servers/operation/createServer`);
  await page.getByText('Create a server').first().waitFor({ timeout: 30_000 });
  const html = await page.content();
  // PUBLIC_URL where the spec has its placeholder: the server and every code sample's URL.
  expect(html).toContain('https://play.example.net/v1/servers');
  expect(html).not.toMatch(/https:\/\/gsh\.example\.com\/v1/);
  // The samples are there, each language a choice of the sample panel.
  await page.getByText("curl -sS -X POST 'https://play.example.net/v1/servers'").first().waitFor({ timeout: 10_000 });
  // The Servers tag's Markdown table of transitions is a table, not pipes.
  await page.goto(`${base}/docs#tag/Servers`);
  await page.getByText("the server's files are ready").first().waitFor({ timeout: 10_000 });
  expect(await page.locator('table td', { hasText: "the server's files are ready" }).count()).toBeGreaterThan(0);
  // Scope names in the Authentication table sit on one line each.
  await page.goto(`${base}/docs#section/Authentication`);
  await page.getByText('listing, creating and revoking your own tokens').first().waitFor({ timeout: 10_000 });
  for (const scope of ['servers:read', 'servers:write', 'tokens:manage']) {
    const lines = await page.locator('td code', { hasText: new RegExp(`^${scope}$`) }).first().evaluate((el) => el.getClientRects().length);
    expect([scope, lines]).toEqual([scope, 1]);
  }
  fs.mkdirSync(artifactsDir, { recursive: true });
  await page.screenshot({ path: path.join(artifactsDir, 'docs-create-server.png') });
});

test('the quickstart\'s browser stream reader reads a stream with its token in a header, in Chromium', async () => {
  const token = t.token();
  const created = await t.http.post('/v1/servers').set({ Authorization: `Bearer ${token}` }).send({ name: 'Streamed', plan: 'small', version: 'flying-squid-1.20.5' });
  expect(created.status).toBe(201);
  // The snippet exactly as the spec's Quickstart shows it (the first js block after "Open a stream").
  const description: string = (loadSpec().document as { info: { description: string } }).info.description;
  const from = description.indexOf('**Open a stream from a browser.**');
  const snippet = /```js\n([\s\S]*?)```/.exec(description.slice(from))![1].replace(/^ {3}/gm, '');
  const page = await context.newPage();
  await page.goto(`${base}/docs`);
  const logged: string[] = [];
  page.on('console', (m) => m.type() === 'log' && logged.push(m.text()));
  await page.evaluate(
    ({ code, origin, serverId, token }) => new Function('base', 'serverId', 'token', 'lastId', `return (async () => { ${code} })();`)(origin, serverId, token, undefined),
    { code: snippet, origin: base, serverId: created.body.id, token },
  );
  // The console's buffered lines came as events (`line`, with a ConsoleLine), then the stream ended.
  expect(logged.length).toBeGreaterThan(0);
  expect(logged[0]).toMatch(/^line /);
});
