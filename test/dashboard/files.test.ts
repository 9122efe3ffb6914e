// The file manager (src/dashboard/public/js/files.js; issue 40 §4) in Debian's Chromium against a real service and a
// real flying-squid server's files: on a 390 px phone in the dark, browse and breadcrumbs, make a folder, upload a
// real file from disk, a folder (webkitdirectory) and a dropped file with progress, download, edit a text file in
// CodeMirror and save it with If-Match (a change made meanwhile through the API is refused with 412 and said, then
// their version loaded or ours saved over it), rename, delete after the confirmation, import a zipped world into
// `world` and be offered a start, and the SFTP panel's values and copy button. At 1280×800 in the light: the same
// page by keyboard alone, and a member without the `files` permission told why it is closed. axe-core clean, no
// horizontal scrolling, no request anywhere but the service, no console error (a CSP violation is one).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import {
  DESKTOP_LIGHT, PHONE_DARK, EMAIL, addAccount, dashboardPerTest, expectAccessible, expectFits, expectScheme, waitForText, waitOnPage,
  type Look, type TestPage,
} from './helpers';
import { tempDirsOfFile } from '../helpers/app';
import { until } from '../helpers/wait';
import { zipOf } from '../helpers/zip';

const SFTP_PORT = '2299'; // only said by getServerSftp: buildService starts no SFTP server (startService does)
// The SFTP panel's host is PUBLIC_URL's (getServerSftp), not the page's: the page is served on 127.0.0.1.
const ctx = dashboardPerTest({ env: { SFTP_PORT, PUBLIC_URL: 'http://files.example.test' } });
const tmp = tempDirsOfFile('files-ui');
const PHONE: Look = { ...PHONE_DARK, viewport: { width: 390, height: 844 } };
const DESKTOP: Look = { ...DESKTOP_LIGHT, name: 'desktop 1280×800, light', viewport: { width: 1280, height: 800 } };
const PROPERTIES = 'motd=A Minecraft Server\nmax-players=10\n# the view distance\nview-distance=10\n';

async function serverWithFiles(name: string) {
  const auth = { Authorization: `Bearer ${ctx.service.token(EMAIL)}` };
  const { id } = (await ctx.service.http.post('/v1/servers').set(auth).send({ name, plan: 'micro', version: 'flying-squid-1.20' })).body as { id: string };
  await until('installed', async () => (await ctx.service.http.get(`/v1/servers/${id}`).set(auth)).body.state === 'stopped');
  const put = (p: string, body: string | Buffer) => ctx.service.http.put(`/v1/servers/${id}/files/content`).query({ path: p }).set(auth)
    .set('Content-Type', 'application/octet-stream').send(Buffer.from(body));
  expect((await put('server.properties', PROPERTIES)).status).toBe(201);
  const read = async (p: string) => {
    const res = await ctx.service.http.get(`/v1/servers/${id}/files/content`).query({ path: p }).set(auth)
      .buffer(true).parse((r, cb) => {
        const c: Buffer[] = [];
        r.on('data', (d: Buffer) => c.push(d)).on('end', () => cb(null, Buffer.concat(c)));
      });
    return { status: res.status, body: res.body as Buffer };
  };
  const meta = (p: string) => ctx.service.http.get(`/v1/servers/${id}/files/metadata`).query({ path: p }).set(auth);
  return { id, auth, put, read, meta };
}

const row = (page: Page, name: string) => page.locator('.file-list tbody tr').filter({ has: page.locator('th', { hasText: new RegExp(`^${name}( \\(folder\\))?$`) }) });

async function looksRight(p: TestPage, where: string) {
  await expectFits(p.page, where);
  await expectAccessible(p.page, where);
  await expectScheme(p.page, p.look);
}

test('on a phone in the dark: browse, make a folder, upload, download, edit and save (412 said), rename, delete, import a world, SFTP', async () => {
  const s = await serverWithFiles('Kingdom');
  const p = await ctx.open(PHONE);
  const { page } = p;
  await p.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ctx.service.origin });
  await p.show(`${ctx.service.origin}/#/servers/${s.id}`);
  await page.getByRole('link', { name: 'Files' }).click();
  await waitOnPage(p, page.getByRole('heading', { name: 'Files of Kingdom', level: 1 }));
  await waitOnPage(p, row(page, 'server.properties'));
  // Folders first, then files (the API's order), the service's own console log not shown.
  const names = await page.locator('.file-list tbody th').allTextContents();
  expect(names.indexOf('server.properties')).toBeGreaterThan(names.findIndex((n) => n.endsWith('(folder)')));
  expect(names).not.toContain('logs (folder)');
  // A file the service writes (FileEntry.read_only) says so in words in its row and offers only its download.
  const managed = page.locator('.file-list tbody tr[data-path="settings.json"]');
  expect(await managed.locator('th').innerText()).toMatch(/^settings\.json\s+managed by the service$/);
  expect(await managed.getByRole('button').allTextContents()).toEqual(['Download']);
  expect(await page.locator('#managed-help').innerText()).toMatch(/^Files managed by the service are written anew before every start/);
  expect(await row(page, 'server.properties').getByRole('button').allTextContents()).toEqual(['Edit', 'Download', 'Rename', 'Delete']);
  await looksRight(p, 'files, top folder');

  // A new folder, then into it: the breadcrumbs name where we are.
  await page.getByLabel('New folder').fill('plugins');
  await page.getByRole('button', { name: 'Create folder' }).click();
  await row(page, 'plugins').waitFor();
  expect((await s.meta('plugins')).body.type).toBe('directory');
  await row(page, 'plugins').getByRole('link').click();
  await waitOnPage(p, page.locator('.breadcrumbs [aria-current="page"]', { hasText: 'plugins' }));
  expect(page.url()).toBe(`${ctx.service.origin}/#/servers/${s.id}/files/plugins`);
  await page.getByText('This folder is empty.').waitFor();

  // A real file from disk through the file chooser, with progress to the end.
  const dir = tmp();
  const jar = crypto.randomBytes(300 * 1024);
  fs.writeFileSync(path.join(dir, 'worldedit.jar'), jar);
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Upload files' }).click()]);
  await chooser.setFiles(path.join(dir, 'worldedit.jar'));
  await waitForText(page.locator('.upload-progress'), /^Uploaded 1 file \(300 KiB\)\.$/);
  expect(await page.getByRole('progressbar', { name: 'Upload progress' }).evaluate((e) => [(e as HTMLProgressElement).value, (e as HTMLProgressElement).max])).toEqual([jar.length, jar.length]);
  await row(page, 'worldedit.jar').waitFor();
  expect((await s.read('plugins/worldedit.jar')).body.equals(jar)).toBe(true);

  // A folder (webkitdirectory): its sub-folders are made, each file lands where it was.
  const folder = path.join(dir, 'Essentials');
  fs.mkdirSync(path.join(folder, 'lang'), { recursive: true });
  fs.writeFileSync(path.join(folder, 'config.yml'), 'ops: [alex]\n');
  fs.writeFileSync(path.join(folder, 'lang', 'en.txt'), 'hello');
  await page.locator('#upload-folder').setInputFiles(folder);
  await waitForText(page.locator('.upload-progress'), /^Uploaded 2 files/);
  await row(page, 'Essentials').waitFor();
  expect((await s.read('plugins/Essentials/config.yml')).body.toString()).toBe('ops: [alex]\n');
  expect((await s.read('plugins/Essentials/lang/en.txt')).body.toString()).toBe('hello');

  // Dropped on the list (a DataTransfer as a drag from the desktop carries it).
  const transfer = await page.evaluateHandle(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(['dropped text'], 'notes.txt', { type: 'text/plain' }));
    return dt;
  });
  await page.locator('.drop-zone').dispatchEvent('drop', { dataTransfer: transfer });
  await row(page, 'notes.txt').waitFor();
  expect((await s.read('plugins/notes.txt')).body.toString()).toBe('dropped text');

  // Rename, then delete after the confirmation.
  await page.getByRole('button', { name: 'Rename notes.txt' }).click();
  await page.getByLabel('New name').fill('readme.txt');
  await page.getByLabel('New name').press('Enter');
  await row(page, 'readme.txt').waitFor();
  expect((await s.meta('plugins/notes.txt')).status).toBe(404);
  expect((await s.read('plugins/readme.txt')).body.toString()).toBe('dropped text');
  await page.getByRole('button', { name: 'Delete Essentials' }).click();
  await row(page, 'Essentials').waitFor({ state: 'detached' });
  expect(p.dialogs).toContain('Delete the folder Essentials and everything in it? This cannot be undone.');
  expect((await s.meta('plugins/Essentials')).status).toBe(404);
  await looksRight(p, 'files, plugins');

  // Back to the top through the breadcrumbs; download a file: its bytes.
  await page.locator('.breadcrumbs').getByRole('link', { name: 'Files' }).click();
  await row(page, 'server.properties').waitFor();
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download server.properties' }).click()]);
  expect(file.suggestedFilename()).toBe('server.properties');
  expect(fs.readFileSync((await file.path())!, 'utf8')).toBe(PROPERTIES);

  // Edit: CodeMirror, highlighted as properties.
  await page.getByRole('button', { name: 'Edit server.properties' }).click();
  const content = page.getByRole('textbox', { name: 'Contents of server.properties' });
  await waitOnPage(p, content);
  await page.getByText('(properties)').waitFor();
  // The comment line is drawn in the comment colour, not the text's: the highlighting is on.
  const colours = await page.locator('.cm-line', { hasText: '# the view distance' }).evaluate((line) => {
    const token = line.querySelector('span');
    return [token ? getComputedStyle(token).color : null, getComputedStyle(line).color];
  });
  expect(colours[0]).not.toBeNull();
  expect(colours[0]).not.toBe(colours[1]);
  await looksRight(p, 'files, editor');
  await content.click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('difficulty=hard\n');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await waitForText(page.locator('.editor-status'), /^Saved at /);
  const mine = `${PROPERTIES}difficulty=hard\n`;
  expect((await s.read('server.properties')).body.toString()).toBe(mine);

  // Someone else saves meanwhile (through the API): our save is refused and said; their text is kept.
  expect((await s.put('server.properties', 'motd=Changed elsewhere\n')).status).toBe(200);
  await content.click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('pvp=false\n');
  await page.keyboard.press('Control+s');
  await waitOnPage(p, page.getByText('Not saved: someone else changed server.properties after you opened it.'));
  expect((await s.read('server.properties')).body.toString()).toBe('motd=Changed elsewhere\n');
  await expectAccessible(page, 'files, editor after a 412');
  await p.screenshot('files-editor-conflict');
  await page.getByRole('button', { name: 'Load their version' }).click();
  await waitForText(page.locator('.editor-status'), /^Loaded the version saved by someone else/);
  expect(await content.innerText()).toMatch(/^motd=Changed elsewhere\n*$/);
  // Again, and this time ours goes over theirs, knowingly.
  expect((await s.put('server.properties', 'motd=Changed again\n')).status).toBe(200);
  await content.click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('gamemode=creative');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByRole('button', { name: 'Save mine over theirs' }).click();
  await waitForText(page.locator('.editor-status'), /^Saved at /);
  expect((await s.read('server.properties')).body.toString()).toBe('motd=Changed elsewhere\ngamemode=creative');
  await page.getByRole('button', { name: 'Close' }).click();
  await row(page, 'server.properties').waitFor();

  // Import a zipped single-player world into `world`: the page sees its one top folder and strips it.
  const zip = path.join(dir, 'MyWorld.zip');
  fs.writeFileSync(zip, await zipOf([['MyWorld/level.dat', 'imported-block'], ['MyWorld/region/r.0.0.mca', 'region bytes']]));
  await page.getByLabel('World archive (.zip or .tar.gz)').setInputFiles(zip);
  await page.getByText('The archive holds one folder, MyWorld: put what is inside it, not MyWorld itself').waitFor();
  expect(await page.locator('#import-strip').isChecked()).toBe(true);
  expect(await page.getByLabel('Put it in the folder').inputValue()).toBe('world');
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await waitForText(page.locator('section[aria-labelledby="import-title"] .outcome'), /Imported MyWorld\.zip into world: 2 files/);
  expect((await s.read('world/level.dat')).body.toString()).toBe('imported-block');
  expect((await s.read('world/region/r.0.0.mca')).body.toString()).toBe('region bytes');
  // The server is stopped: it is offered a start, which is asked for.
  await page.getByRole('button', { name: 'Start now' }).click();
  await until('a start asked for', async () => ((await ctx.service.http.get(`/v1/servers/${s.id}/actions`).set(s.auth)).body.data as Array<{ type: string }>).some((a) => a.type === 'start'));

  // SFTP: host, port, username, each with a copy button.
  const sftp = page.locator('section[aria-labelledby="sftp-title"]');
  expect(await sftp.getByRole('textbox', { name: 'Host', exact: true }).inputValue()).toBe('files.example.test');
  expect(await sftp.getByRole('textbox', { name: 'Port', exact: true }).inputValue()).toBe(SFTP_PORT);
  expect(await sftp.getByRole('textbox', { name: 'Username', exact: true }).inputValue()).toBe(`${s.id}.${EMAIL}`);
  expect(await sftp.getByRole('textbox', { name: 'Command line', exact: true }).inputValue()).toBe(`sftp -P ${SFTP_PORT} ${s.id}.${EMAIL}@files.example.test`);
  await sftp.getByRole('button', { name: 'Copy the username' }).click();
  await until('copied', async () => (await page.evaluate(() => navigator.clipboard.readText())) === `${s.id}.${EMAIL}`, 10_000);
  await looksRight(p, 'files, after an import');
  await p.screenshot('files-phone-dark');

  expect(p.foreignRequests()).toEqual([]);
  // Chromium logs every 4xx answer; the two 412s are the refused saves above, and nothing else went wrong.
  const refused = (e: string) => /status of 412 .*\/files\/content\?path=server\.properties/.test(e);
  expect(p.consoleErrors.filter(refused)).toHaveLength(2);
  expect(p.consoleErrors.filter((e) => !refused(e))).toEqual([]);
}, 240_000);

test('at 1280×800 in the light by keyboard alone; a member without the files permission is told why', async () => {
  const s = await serverWithFiles('Keyboard');
  const p = await ctx.open(DESKTOP);
  const { page } = p;
  await p.show(`${ctx.service.origin}/#/servers/${s.id}/files`);
  await waitOnPage(p, row(page, 'server.properties'));
  await looksRight(p, 'files, desktop');

  // Tab to the file's Edit button and open it with Enter: the editor takes the focus.
  const edit = page.getByRole('button', { name: 'Edit server.properties' });
  for (let i = 0; i < 80 && !(await edit.evaluate((e) => e === document.activeElement)); i++) await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  const content = page.getByRole('textbox', { name: 'Contents of server.properties' });
  await waitOnPage(p, content);
  await until('the editor focused', () => content.evaluate((e) => e.matches(':focus')), 10_000);
  await page.keyboard.press('Control+End');
  await page.keyboard.type('spawn-protection=0\n');
  await page.keyboard.press('Control+s');
  await waitForText(page.locator('.editor-status'), /^Saved at /);
  expect((await s.read('server.properties')).body.toString()).toBe(`${PROPERTIES}spawn-protection=0\n`);
  // Tab leaves the editor (no keyboard trap): to Save, then Close, which Enter presses.
  await page.keyboard.press('Tab');
  expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Save');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await row(page, 'server.properties').waitFor();
  await until('focus back on Edit', () => edit.evaluate((e) => e === document.activeElement), 10_000);
  await p.screenshot('files-desktop-light');
  expect(p.consoleErrors).toEqual([]);

  // A member who may use the console but not the files: the page says why instead of showing them.
  const member = 'member@example.com';
  addAccount(ctx.service.db, member);
  expect((await ctx.service.http.post(`/v1/servers/${s.id}/members`).set(s.auth).send({ email: member, permissions: ['console'] })).status).toBe(201);
  const m = await ctx.open(DESKTOP, { email: member });
  await m.show(`${ctx.service.origin}/#/servers/${s.id}`);
  await m.page.getByRole('link', { name: 'Files' }).click();
  await waitOnPage(m, m.page.locator('#files-denied'));
  expect(await m.page.locator('#files-denied').textContent()).toMatch(/^Keyboard is shared with you without the Files permission, so its files .* are not available to you\./);
  expect(await m.page.locator('.file-list').count()).toBe(0);
  await looksRight(m, 'files, member without the permission');
  expect(m.consoleErrors).toEqual([]);
}, 180_000);
