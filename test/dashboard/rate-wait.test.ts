// When the account's rate limit is used up anyway (issue 38, docs/dashboard-budget.md), the page waits as long as
// the 429's Retry-After says, asks once more, and says why in a customer's words (their tabs and scripts, not
// "tokens"), in Debian's Chromium over real HTTP. A tiny budget (4 requests per 10 s) makes the page's own loading
// go past it.
import { DESKTOP_LIGHT, dashboardPerTest, waitOnPage } from './helpers';

const ctx = dashboardPerTest({ env: { RATE_LIMIT_PER_MINUTE: '4', RATE_LIMIT_WINDOW_S: '10' } });

test('a 429 is waited out and asked once more, and said in words a customer understands', async () => {
  const p = await ctx.open(DESKTOP_LIGHT);
  const { page } = p;
  const refused: string[] = [];
  page.on('response', (r) => void (r.status() === 429 && new URL(r.url()).pathname.startsWith('/v1/') && refused.push(new URL(r.url()).pathname)));
  await p.show(`${ctx.service.origin}/#/servers`);

  // Said while it waits (a message that leaves by itself: read while it is there).
  const toast = page.locator('#status .toast', { hasText: 'too many requests' });
  await waitOnPage(p, toast, { timeout: 20_000 });
  expect(await toast.first().textContent()).toMatch(
    /^Your account has made too many requests just now \(at most 4 every 10 seconds, counting this page, your other open tabs and any scripts using your API tokens\)\. This page waits \d+ seconds and tries again\.$/,
  );
  // The list loads after all: its refused reads were asked again once the window passed.
  await waitOnPage(p, page.getByText('No servers yet. Create one below.'), { timeout: 40_000 });
  await page.locator('[data-quota="servers"]').waitFor();
  expect(refused.length).toBeGreaterThan(0);
  expect(await page.locator('main').innerText()).not.toMatch(/tokens together|Could not/);
  // Refused reads are shown by Chromium as console errors; nothing else went wrong.
  expect(p.consoleErrors.filter((e) => !/status of 429/.test(e))).toEqual([]);
}, 90_000);
