#!/usr/bin/env node
// The README's pictures of a server's page (docs/screenshots/server-desktop.png and server-phone.png), taken from
// the running service as a customer sees it: builds the service, starts it like `npm start` on a fresh data folder
// and free ports, makes a dashboard account with the CLI, creates and starts a flying-squid server through the API,
// lets a real Minecraft client (mineflayer) join, waits for a minute of samples, and photographs the page in
// Debian's Chromium at 1280×900 (light) and 390×844 (dark). Everything it started is stopped at the end.
//
//   npx node scripts/screenshots.js        (about two minutes; the project's Node)
const fs = require('node:fs');
const os = require('node:os');
const net = require('node:net');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const { chromium } = require('playwright-core');
const mineflayer = require('mineflayer');

const root = path.join(__dirname, '..');
const out = path.join(root, 'docs', 'screenshots');
const EMAIL = 'demo@example.com';
const PASSWORD = 'a demo password';
const SAMPLES_MS = 60_000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function until(what, fn, ms = 120_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await fn().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(500);
  }
}

async function main() {
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b'], { cwd: root, stdio: 'inherit' });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-screenshots-'));
  const [port, gamePort] = [await freePort(), await freePort()];
  const env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', GAME_PORT_RANGE: `${gamePort}-${gamePort}`, METRICS_INTERVAL_S: '2' };
  execFileSync(process.execPath, [path.join(root, 'bin', 'gsh.js'), 'user', 'create', '--email', EMAIL, '--password', PASSWORD], { env, stdio: 'ignore' });
  const service = spawn(process.execPath, [path.join(root, 'dist', 'src', 'main.js')], { env, stdio: 'ignore' });
  const origin = `http://127.0.0.1:${port}`;
  let bot;
  let browser;
  try {
    await until('the service', async () => (await fetch(`${origin}/healthz`)).ok);
    const api = await signedInApi(origin);
    const server = await api('POST', '/v1/servers', { name: 'Survival', plan: 'small', version: 'flying-squid-1.20' });
    await until('the install', async () => (await api('GET', `/v1/servers/${server.id}`)).state === 'stopped');
    await api('POST', `/v1/servers/${server.id}/actions`, { type: 'start' });
    await until('the start', async () => (await api('GET', `/v1/servers/${server.id}`)).state === 'running');
    bot = mineflayer.createBot({ host: '127.0.0.1', port: gamePort, username: 'Alex', auth: 'offline', version: '1.20' });
    await new Promise((resolve, reject) => bot.once('spawn', resolve).once('error', reject));
    await sleep(SAMPLES_MS);

    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
    fs.mkdirSync(out, { recursive: true });
    await photograph(browser, origin, server.id, { viewport: { width: 1280, height: 900 }, colorScheme: 'light' }, 'server-desktop.png', 1300);
    await photograph(browser, origin, server.id, { viewport: { width: 390, height: 844 }, colorScheme: 'dark', isMobile: true, hasTouch: true }, 'server-phone.png', 1700);
    console.log(`Wrote ${path.relative(root, out)}/server-desktop.png and server-phone.png`);
  } finally {
    bot?.end();
    await browser?.close();
    service.kill('SIGTERM'); // a graceful shutdown: the game gets its stop command
    await new Promise((r) => service.once('exit', r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Signs in like the page does and returns a /v1 caller holding the page's kind of token. */
async function signedInApi(origin) {
  const signIn = await fetch(`${origin}/dashboard/sign-in`, { method: 'POST', headers: { Origin: origin, 'Content-Type': 'application/json' }, body: JSON.stringify({ email: EMAIL, password: PASSWORD }) });
  const { csrf_token: csrf } = await signIn.json();
  const cookie = signIn.headers.get('set-cookie').split(';')[0];
  const token = await (await fetch(`${origin}/dashboard/session-token`, { method: 'POST', headers: { Origin: origin, Cookie: cookie, 'X-CSRF-Token': csrf } })).json();
  return async (method, p, body) => {
    const res = await fetch(`${origin}${p}`, { method, headers: { Authorization: `Bearer ${token.token}`, 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) });
    if (!res.ok) throw new Error(`${method} ${p} answered ${res.status}: ${await res.text()}`);
    return res.json();
  };
}

/** One picture of the server's page, from the top, `height` CSS pixels tall. */
async function photograph(browser, origin, id, look, file, height) {
  const context = await browser.newContext({ ...look, locale: 'en-US', timezoneId: 'Europe/Berlin' });
  try {
    await context.request.post(`${origin}/dashboard/sign-in`, { headers: { Origin: origin }, data: { email: EMAIL, password: PASSWORD } });
    const page = await context.newPage();
    // The window is as tall as the picture, so nothing scrolls: the hover below would otherwise scroll the chart into
    // view, and the sticky section menu (app.css .sections) would be drawn where the scroll left it, over the page.
    await page.setViewportSize({ width: look.viewport.width, height });
    await page.goto(`${origin}/#/servers/${id}`);
    await page.locator('[data-player="Alex"]').waitFor({ timeout: 30_000 });
    await page.getByLabel('Last 15 minutes').check();
    await page.waitForFunction(() => !document.querySelector('.toast'), null, { timeout: 20_000 }); // nothing over the page
    await page.locator('svg[data-chart="ram_bytes"]').hover(); // one chart shows a value under the pointer
    await page.screenshot({ path: path.join(out, file) });
  } finally {
    await context.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
