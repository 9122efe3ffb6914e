// Past the account's cap on open streams (STREAMS_PER_USER; issue 38, docs/dashboard-budget.md), in Debian's
// Chromium: a script holds the account's only stream, so the page's events stream is refused (429
// too_many_streams). The page says so in words, still shows its data, asks again each minute, and is live again
// (the note gone, a new server listed from its event) once the script lets go.
import { DESKTOP_LIGHT, EMAIL, dashboardPerTest, waitOnPage } from './helpers';

const ctx = dashboardPerTest({ env: { STREAMS_PER_USER: '1' } });

test('past the stream cap the page says so, reads what it shows, and goes live again once a stream is free', async () => {
  const auth = { Authorization: `Bearer ${ctx.service.token(EMAIL)}` };
  const script = new AbortController();
  const held = await fetch(`${ctx.service.origin}/v1/events/stream`, { headers: auth, signal: script.signal });
  expect(held.status).toBe(200);

  const p = await ctx.open(DESKTOP_LIGHT);
  const { page } = p;
  await p.show(`${ctx.service.origin}/#/servers`);
  await waitOnPage(p, page.getByText('No servers yet. Create one below.'));
  const note = page.locator('#live-note');
  await note.waitFor({ timeout: 20_000 });
  expect(await note.textContent()).toMatch(/^Live updates are paused: your account has as many live views open as it may/);

  // The script lets go: within the minute the page asks again, and is live.
  script.abort();
  await note.waitFor({ state: 'hidden', timeout: 80_000 });
  await ctx.service.http.post('/v1/servers').set(auth).send({ name: 'Later', plan: 'micro', version: 'flying-squid-1.20' }).expect(201);
  await page.getByRole('row', { name: /Later/ }).waitFor({ timeout: 15_000 });
  expect(p.consoleErrors.filter((e) => !/status of 429/.test(e))).toEqual([]);
}, 150_000);
