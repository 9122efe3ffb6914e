import fs from 'node:fs';
import path from 'node:path';
import { createTestApp, type TestApp } from '../helpers/app';
import { artifactsDir, launchBrowser } from '../helpers/browser';

let t: TestApp;
let server: { base: string; close(): Promise<void> };
let base: string;
beforeAll(async () => {
  t = await createTestApp();
  server = await t.listen();
  base = server.base;
});
afterAll(async () => {
  await server.close();
  await t.close();
});

test('the API docs render in a real browser and load nothing from outside this host', async () => {
  const { context, close } = await launchBrowser();
  try {
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
  } finally {
    await close();
  }
});
