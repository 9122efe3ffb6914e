// The dashboard's entry: sign-in, the header, and a hash router (#/servers, #/servers/srv_…, #/servers/srv_…/files/…,
// #/backups, #/settings/tokens, #/settings/ssh-keys, #/settings/webhooks, #/settings/password, #/settings/two-factor).
// Hash routes need no server routes: the service serves one page at `/`.
import { resume, signIn, signOut, hooks, session, ApiError, SignedOut, busyText } from './api.js';
import { h, fill, announce, errorBox } from './dom.js';
import { onStatus, startLive, stopLive } from './live.js';
import { serversView } from './servers.js';
import { serverView } from './server.js';
import { filesView } from './files.js';
import { tokensView } from './tokens.js';
import { sshKeysView } from './ssh-keys.js';
import { webhooksView } from './webhooks.js';
import { passwordView } from './password.js';
import { twoFactorView } from './two-factor.js';
import { secondFactorView } from './sign-in-factor.js';
import { goneView, isGone } from './gone.js';
import { keptBackupsView } from './kept-backups.js';

const main = document.getElementById('main');
const ROUTES = [
  // A server's page and its sections (#/servers/srv_…/console: sections.js); its files are a page of their own.
  [/^#\/servers\/(srv_[0-9A-Za-z]+)(?:\/(?!files$)([a-z-]+))?$/, serverView, 'Server'],
  [/^#\/servers\/(srv_[0-9A-Za-z]+)\/files(?:\/(.*))?$/, filesView, 'Files'],
  [/^#\/settings\/tokens$/, tokensView, 'API tokens'],
  [/^#\/settings\/ssh-keys$/, sshKeysView, 'SSH keys'],
  [/^#\/settings\/webhooks$/, webhooksView, 'Webhooks'],
  [/^#\/settings\/password$/, passwordView, 'Password'],
  [/^#\/settings\/two-factor$/, twoFactorView, 'Two-factor'],
  [/^#\/servers$/, serversView, 'Servers'],
  [/^#\/backups$/, keptBackupsView, 'Kept backups'],
];
let current = null; // AbortController of the shown view: ends its polling and streams when it is left
let within = null; // the shown view's moves within itself (a server page's sections): true when it took the hash

function showChrome(signedIn) {
  document.getElementById('nav').hidden = !signedIn;
  document.getElementById('who').hidden = !signedIn;
  document.getElementById('who-email').textContent = signedIn ? session.email : '';
}

function leave() {
  current?.abort();
  current = null;
  within = null;
}

async function route() {
  if (!location.hash.startsWith('#/')) {
    if (location.hash === '') location.replace('#/servers');
    return; // in-page anchors such as the skip link are not routes
  }
  if (within?.(location.hash)) return; // shown without reading the page again
  const [pattern, view, title] = ROUTES.find(([p]) => p.test(location.hash)) ?? [];
  if (!view) return void location.replace('#/servers');
  leave();
  current = new AbortController();
  const signal = current.signal;
  for (const a of document.querySelectorAll('#nav a')) {
    if (location.hash.startsWith(a.getAttribute('href'))) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  document.title = `${title} · Dashboard`;
  fill(main, h('p', { class: 'muted' }, 'Loading…'));
  try {
    const shown = await view(main, signal, ...location.hash.match(pattern).slice(1));
    if (!signal.aborted) within = shown?.within ?? null;
    // Move focus to the new page's heading, so screen readers announce the page change (as a full load would).
    const heading = signal.aborted ? null : main.querySelector('h1');
    heading?.setAttribute('tabindex', '-1');
    heading?.focus();
  } catch (e) {
    if (signal.aborted || e instanceof SignedOut) return;
    if (isGone(e)) goneView(main); // a server's page whose server the reader no longer has (issue 38 §2)
    else fill(main, h('h1', {}, title), errorBox(`Could not load this page: ${e.message}`));
  }
}

function signInView(message) {
  leave();
  stopLive();
  showChrome(false);
  document.title = 'Sign in · Dashboard';
  const error = h('div', {}, message ? errorBox(message) : null);
  const email = h('input', { id: 'email', name: 'email', type: 'email', required: true, autocomplete: 'username' });
  const password = h('input', { id: 'password', name: 'password', type: 'password', required: true, autocomplete: 'current-password' });
  const button = h('button', { type: 'submit' }, 'Sign in');
  const form = h('form', { class: 'card narrow', 'aria-labelledby': 'sign-in-title' },
    h('h1', { id: 'sign-in-title' }, 'Sign in'),
    h('div', { class: 'field' }, h('label', { for: 'email' }, 'Email'), email),
    h('div', { class: 'field' }, h('label', { for: 'password' }, 'Password'), password),
    button, error);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    button.disabled = true;
    error.replaceChildren();
    try {
      const factors = await signIn(email.value, password.value);
      if (!factors) return void signedIn();
      // The password was right; the account asks for its second factor before the session is made.
      document.title = 'Two-factor sign-in · Dashboard';
      secondFactorView(main, factors, signedIn, (why) => signInView(why));
    } catch (e) {
      const text = e instanceof ApiError ? e.message : 'The service could not be reached; try again.';
      error.replaceChildren(errorBox(`Not signed in: ${text}`));
      password.value = '';
      password.focus();
    } finally {
      button.disabled = false;
    }
  });
  fill(main, form);
  email.focus();
}

function signedIn() {
  showChrome(true);
  startLive(session.email);
  announce(`Signed in as ${session.email}.`);
  route();
}

hooks.signedOut = () => signInView('Your session has ended; sign in again.');
hooks.waiting = (seconds, limit) => announce(`${busyText(limit)} This page waits ${seconds} seconds and tries again.`);

/** Said above every page while the account's events are not live (live.js): the pages read slowly meanwhile. */
const LIVE_NOTES = {
  limited: 'Live updates are paused: your account has as many live views open as it may (in other tabs, or scripts using your API tokens). Close one to resume; until then this page reads again every minute or so.',
  retrying: 'Live updates are interrupted; reconnecting. Until then this page reads again every minute or so.',
  stopped: 'Live updates are off for this page; reload it to try again.',
};
onStatus((s) => {
  const note = document.getElementById('live-note');
  note.textContent = LIVE_NOTES[s] ?? '';
  note.hidden = !LIVE_NOTES[s];
});
window.addEventListener('hashchange', () => session.email && route());
document.getElementById('sign-out').addEventListener('click', async () => {
  leave();
  stopLive();
  await signOut();
  signInView();
  announce('Signed out.');
});

resume()
  .then((ok) => (ok ? signedIn() : signInView()))
  .catch(() => signInView('The service could not be reached; reload to try again.'));
