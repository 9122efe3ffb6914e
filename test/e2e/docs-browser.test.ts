import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createTestApp, type TestApp } from '../helpers/app';
import { artifactsDir, launchBrowser } from '../helpers/browser';

let t: TestApp;
let http: Server;
let base: string;
beforeAll(async () => {
  t = await createTestApp();
  http = t.app.listen(0, '127.0.0.1');
  await new Promise((r) => http.once('listening', r));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => http.close(r));
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
