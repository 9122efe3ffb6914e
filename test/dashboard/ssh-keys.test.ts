// Settings → SSH keys (src/dashboard/public/js/ssh-keys.js; issue 40 §2) in Debian's Chromium against a real service
// and its real SFTP server: on a 390×844 phone in the dark, a private key and a line that is no key are refused in
// words before anything is sent; a real ed25519 key (ssh-keygen) is added and listed with OpenSSH's fingerprint,
// added again is refused in words; Debian's real `sftp` logs in with it as the server's Files page says, and once
// it is deleted (after the confirmation) no longer does. At 1280×800 in the light: a key listed, its deletion
// cancelled then confirmed. The list is read once per navigation; axe-core clean, no horizontal scrolling.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import {
  DESKTOP_LIGHT, PHONE_DARK, EMAIL, expectAccessible, expectFits, expectScheme, openPage, startDashboard, waitForText, waitOnPage,
  type Dashboard, type Look, type TestPage,
} from './helpers';
import { launchChromium } from '../helpers/browser';
import { tempDirsOfFile } from '../helpers/app';
import { until } from '../helpers/wait';
import { silentLogger } from '../../src/log';
import { buildSftp } from '../../src/sftp';
import { hostKeyFile } from '../../src/sftp/host-key';
import type { SftpServer } from '../../src/sftp/server';

const tmp = tempDirsOfFile('ssh-keys-ui');
const PHONE: Look = { ...PHONE_DARK, viewport: { width: 390, height: 844 } };
const DESKTOP: Look = { ...DESKTOP_LIGHT, name: 'desktop 1280×800, light', viewport: { width: 1280, height: 800 } };

let browser: Browser;
let service: Dashboard;
let sftp: SftpServer;
let port: number;
const pages: TestPage[] = [];

/** A free loopback port for SFTP_PORT: the service says it (getServerSftp) and the SFTP server listens on it. */
async function freePort(): Promise<number> {
  const probe = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => probe.once('listening', r));
  const { port: free } = probe.address() as net.AddressInfo;
  await new Promise((r) => probe.close(r));
  return free;
}

beforeAll(async () => {
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
}, 60_000);
beforeEach(async () => {
  port = await freePort();
  service = await startDashboard({ env: { SFTP_PORT: String(port) } });
  sftp = buildSftp(service.config.dataDir, { store: service.store, files: service.runtime.files, actors: service.actors }, silentLogger).sftp;
  await sftp.listen(port, '127.0.0.1');
}, 60_000);
afterEach(async () => {
  try {
    for (const p of pages.splice(0)) await p.close();
    await sftp.close();
    await service.runtime.idle();
  } finally {
    await service.finish();
  }
}, 90_000);

async function open(look: Look) {
  const p = await openPage(browser, service, look);
  pages.push(p);
  return p;
}

async function looksRight(p: TestPage, where: string) {
  await expectFits(p.page, where);
  await expectAccessible(p.page, where);
  await expectScheme(p.page, p.look);
}

/** A real key pair from OpenSSH's ssh-keygen, and the folder it is in (with the SFTP host key trusted there). */
function keyPair(comment: string) {
  const dir = tmp();
  const file = path.join(dir, 'id_ed25519');
  expect(spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', file]).status).toBe(0);
  const hostPub = fs.readFileSync(`${hostKeyFile(service.config.dataDir)}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
  fs.writeFileSync(path.join(dir, 'known_hosts'), `[127.0.0.1]:${port} ${hostPub}\n`);
  const fingerprint = spawnSync('ssh-keygen', ['-lf', `${file}.pub`], { encoding: 'utf8' }).stdout.split(' ')[1];
  return { dir, file, pub: fs.readFileSync(`${file}.pub`, 'utf8').trim(), private: fs.readFileSync(file, 'utf8'), fingerprint };
}

/** Debian's OpenSSH sftp in batch mode with the key alone (no password, no agent); its exit status and output. */
async function sftpBatch(key: { dir: string; file: string }, user: string, sftpPort: string, commands: string[]) {
  const batch = path.join(key.dir, 'batch');
  fs.writeFileSync(batch, `${commands.join('\n')}\n`);
  const child = spawn('sftp', [
    '-b', batch, '-P', sftpPort, '-F', '/dev/null', '-i', key.file,
    '-o', 'StrictHostKeyChecking=yes', '-o', `UserKnownHostsFile=${path.join(key.dir, 'known_hosts')}`,
    '-o', 'IdentitiesOnly=yes', '-o', 'PasswordAuthentication=no', '-o', 'BatchMode=yes', `${user}@127.0.0.1`,
  ], { cwd: key.dir, stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const status = await new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { status, out };
}

/** The page's reads of its key list (GET /v1/ssh-keys), counted from now. */
function keyReads(p: TestPage): () => number {
  let n = 0;
  p.page.on('request', (r) => void (r.method() === 'GET' && new URL(r.url()).pathname === '/v1/ssh-keys' && n++));
  return () => n;
}

test('on a phone in the dark: refused in words, a real key added, sftp logs in with it, deleted after the confirmation', async () => {
  const auth = { Authorization: `Bearer ${service.token(EMAIL)}` };
  const { id } = (await service.http.post('/v1/servers').set(auth).send({ name: 'Keyed', plan: 'micro', version: 'flying-squid-1.20' })).body as { id: string };
  const key = keyPair('laptop');
  const p = await open(PHONE);
  const { page } = p;
  const posts: string[] = [];
  const reads = keyReads(p);
  page.on('request', (r) => void (r.method() === 'POST' && new URL(r.url()).pathname === '/v1/ssh-keys' && posts.push(r.postData() ?? '')));
  await p.show(`${service.origin}/#/servers`);
  await page.getByRole('link', { name: 'SSH keys' }).click();
  await waitOnPage(p, page.getByRole('heading', { name: 'SSH keys', level: 1 }));
  await waitOnPage(p, page.locator('#no-ssh-keys'));
  await looksRight(p, 'ssh keys, none');

  // A private key pasted by mistake: said at the field, and never sent.
  const line = page.getByLabel('Public key');
  await line.fill(key.private);
  await page.getByRole('button', { name: 'Add key' }).click();
  await waitForText(page.locator('#ssh-key-line-error'), /^This is a private key: keep it secret\. Paste the line of the matching \.pub file instead\.$/);
  expect(await line.getAttribute('aria-invalid')).toBe('true');
  await line.fill('hello world');
  await page.getByRole('button', { name: 'Add key' }).click();
  await waitForText(page.locator('#ssh-key-line-error'), /^This is not a public key line/);
  expect(posts).toEqual([]);
  await expectAccessible(page, 'ssh keys, a refused line');

  // The real key: listed with OpenSSH's own fingerprint, its comment as its name.
  await line.fill(key.pub);
  await page.getByRole('button', { name: 'Add key' }).click();
  const listed = page.locator('tbody tr', { hasText: 'laptop' });
  await waitOnPage(p, listed);
  expect(await listed.locator('.fingerprint').innerText()).toBe(key.fingerprint);
  expect(await line.inputValue()).toBe('');
  expect(posts).toHaveLength(1);
  // Again: refused by the service (409 ssh_key_exists), said in words at the field.
  await line.fill(key.pub);
  await page.getByRole('button', { name: 'Add key' }).click();
  await waitForText(page.locator('#ssh-key-line-error'), /^This key is on your account already \(see the list below\)\.$/);
  expect(await page.locator('tbody tr').count()).toBe(1);
  await looksRight(p, 'ssh keys, one key');
  await p.screenshot('ssh-keys-phone-dark');
  expect(reads()).toBe(1); // read once on arrival; adding changed the list from the answer

  // Debian's sftp logs in with the key, as the server's Files page says (its username and port).
  await until('installed', async () => (await service.http.get(`/v1/servers/${id}`).set(auth)).body.state === 'stopped');
  await p.show(`${service.origin}/#/servers/${id}/files`);
  const panel = page.locator('section[aria-labelledby="sftp-title"]');
  await waitOnPage(p, panel.getByRole('textbox', { name: 'Username', exact: true }));
  const user = await panel.getByRole('textbox', { name: 'Username', exact: true }).inputValue();
  const sftpPort = await panel.getByRole('textbox', { name: 'Port', exact: true }).inputValue();
  expect([user, sftpPort]).toEqual([`${id}.${EMAIL}`, String(port)]);
  fs.writeFileSync(path.join(key.dir, 'hello.txt'), 'over sftp');
  const ok = await sftpBatch(key, user, sftpPort, ['put hello.txt hello.txt', 'ls']);
  expect(ok.status).toBe(0);
  expect(fs.readFileSync(path.join(service.config.dataDir, 'servers', id, 'hello.txt'), 'utf8')).toBe('over sftp');

  // Deleted after the confirmation: gone from the list, and the key no longer logs in.
  await p.show(`${service.origin}/#/settings/ssh-keys`);
  await waitOnPage(p, page.getByRole('button', { name: 'Delete the key laptop' }));
  await page.getByRole('button', { name: 'Delete the key laptop' }).click();
  await waitOnPage(p, page.locator('#no-ssh-keys'));
  expect(p.dialogs).toEqual([`Delete the SSH key “laptop” (${key.fingerprint})? SFTP sessions logged in with it end at once.`]);
  expect((await service.http.get('/v1/ssh-keys').set(auth)).body.data).toEqual([]);
  const refused = await sftpBatch(key, user, sftpPort, ['ls']);
  expect(refused.status).not.toBe(0);
  expect(refused.out).toMatch(/Permission denied/);
  expect(reads()).toBe(2); // once per navigation to the page, none after the delete
  expect(p.foreignRequests()).toEqual([]);
  // Chromium logs every 4xx answer: the one 409 is the key added twice, and nothing else went wrong.
  const conflict = (e: string) => /status of 409/.test(e);
  expect(p.consoleErrors.filter(conflict)).toHaveLength(1);
  expect(p.consoleErrors.filter((e) => !conflict(e))).toEqual([]);
}, 180_000);

test('at 1280×800 in the light: a key listed; its deletion cancelled, then confirmed', async () => {
  const auth = { Authorization: `Bearer ${service.token(EMAIL)}` };
  const key = keyPair('desktop');
  expect((await service.http.post('/v1/ssh-keys').set(auth).send({ public_key: key.pub, name: 'Work desktop' })).status).toBe(201);
  const p = await open(DESKTOP);
  const { page } = p;
  await p.show(`${service.origin}/#/settings/ssh-keys`);
  const listed = page.locator('tbody tr', { hasText: 'Work desktop' });
  await waitOnPage(p, listed);
  expect(await listed.locator('.fingerprint').innerText()).toBe(key.fingerprint);
  expect(await page.locator('#nav a[aria-current="page"]').innerText()).toBe('SSH keys');
  await looksRight(p, 'ssh keys, desktop');

  p.answer.yes = false;
  await page.getByRole('button', { name: 'Delete the key Work desktop' }).click();
  expect(p.dialogs).toHaveLength(1);
  expect(await listed.count()).toBe(1);
  expect((await service.http.get('/v1/ssh-keys').set(auth)).body.data).toHaveLength(1);
  p.answer.yes = true;
  await page.getByRole('button', { name: 'Delete the key Work desktop' }).click();
  await waitOnPage(p, page.locator('#no-ssh-keys'));
  // Focus goes to the list's heading, not lost with the removed button.
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('ssh-key-list');
  expect((await service.http.get('/v1/ssh-keys').set(auth)).body.data).toEqual([]);
  await p.screenshot('ssh-keys-desktop-light');
  expect(p.consoleErrors).toEqual([]);
}, 120_000);
