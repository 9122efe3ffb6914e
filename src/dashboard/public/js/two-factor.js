// Settings → Two-factor (issue 39 §5): codes from an authenticator app (TOTP, RFC 6238: the key is shown as text
// and as its otpauth:// URI, and a first right code turns it on), passkeys (WebAuthn, through @simplewebauthn/browser
// bundled into vendor/), and the recovery codes, shown once when the first factor is turned on. With any of them
// on, sign-in asks for one after the password. The operator can reset them: `npx gsh user reset-2fa`.
import { sessionCall } from './api.js';
import { h, fill, announce, errorBox, field } from './dom.js';
import { startRegistration } from './vendor/simplewebauthn-browser.js';
import { timeEl } from './format.js';

function recoveryCodes(codes) {
  return h('div', { class: 'card', id: 'new-recovery-codes', role: 'region', 'aria-labelledby': 'recovery-codes-title' },
    h('h3', { id: 'recovery-codes-title' }, 'Your recovery codes'),
    h('p', {}, 'Keep these somewhere safe, away from your phone. Each signs you in once if you lose your second factor. They are shown only now.'),
    h('ol', { class: 'recovery-codes', id: 'recovery-codes' }, codes.map((c) => h('li', {}, h('code', {}, c)))));
}

export async function twoFactorView(main) {
  let state = await sessionCall('GET', '/dashboard/second-factor');
  const outcome = h('div');
  const codesShown = h('div');
  const app = h('section', { class: 'card narrow-left', 'aria-labelledby': 'app-title' });
  const keys = h('section', { class: 'card narrow-left', 'aria-labelledby': 'passkeys-title' });
  const codes = h('section', { class: 'card narrow-left', 'aria-labelledby': 'codes-title' });

  const fail = (what) => (e) => outcome.replaceChildren(errorBox(`${what}: ${e.message}`));
  const update = (next, message) => {
    state = next;
    if (next.recovery_codes) codesShown.replaceChildren(recoveryCodes(next.recovery_codes));
    draw();
    if (message) announce(message);
  };

  function drawApp() {
    const title = h('h2', { id: 'app-title' }, 'Authenticator app');
    if (state.totp === 'on') {
      const off = h('button', { type: 'button', class: 'danger' }, 'Turn off authenticator app');
      off.addEventListener('click', () => sessionCall('DELETE', '/dashboard/totp').then((s) => update(s, 'Authenticator app turned off.'), fail('Not turned off')));
      return fill(app, title, h('p', { id: 'totp-status' }, 'On: sign-in asks for a code from your app.'), off);
    }
    const start = h('button', { type: 'button' }, 'Set up an authenticator app');
    start.addEventListener('click', () => sessionCall('POST', '/dashboard/totp').then(enrol, fail('Not started')));
    fill(app, title, h('p', { id: 'totp-status' }, 'Off. An app such as a password manager or an authenticator makes a new six-digit code every 30 seconds.'), start);
  }

  function enrol({ secret, uri }) {
    outcome.replaceChildren();
    const code = h('input', { id: 'confirm-code', type: 'text', inputmode: 'numeric', autocomplete: 'one-time-code', maxlength: 7, required: true });
    const form = h('form', { 'aria-labelledby': 'enrol-title' },
      h('h3', { id: 'enrol-title' }, 'Add this account to your app'),
      h('p', {}, 'Type this key into the app (as a time-based key), or open the link on the phone that has the app:'),
      h('code', { class: 'factor-key', id: 'totp-secret' }, secret),
      h('p', {}, h('a', { href: uri, id: 'totp-uri' }, uri)),
      field('Code the app shows now', code, { help: 'Two-factor is on once a right code is given; until then sign-in asks only for the password.' }),
      h('button', { type: 'submit' }, 'Turn on'));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      sessionCall('POST', '/dashboard/totp/confirm', { code: code.value.trim() })
        .then((s) => update(s, 'Authenticator app turned on.'), fail('Not turned on'));
    });
    app.append(form);
    code.focus();
  }

  function drawKeys() {
    const name = h('input', { id: 'passkey-name', type: 'text', maxlength: 64, required: true, value: 'This device' });
    const form = h('form', {}, field('Name of the new passkey', name), h('button', { type: 'submit' }, 'Add a passkey'));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      outcome.replaceChildren();
      try {
        const optionsJSON = await sessionCall('POST', '/dashboard/passkeys/options');
        const response = await startRegistration({ optionsJSON });
        update(await sessionCall('POST', '/dashboard/passkeys', { name: name.value.trim(), response }), 'Passkey added.');
      } catch (e) {
        fail('No passkey added')(e.name === 'NotAllowedError' ? new Error('the browser did not make one (cancelled or timed out)') : e);
      }
    });
    const list = state.passkeys.length
      ? h('ul', { id: 'passkeys' }, state.passkeys.map((p) => {
        const remove = h('button', { type: 'button', class: 'danger', 'aria-label': `Remove passkey ${p.name}` }, 'Remove');
        remove.addEventListener('click', () => sessionCall('DELETE', `/dashboard/passkeys/${p.id}`).then((s) => update(s, `Passkey ${p.name} removed.`), fail('Not removed')));
        const used = p.last_used_at ? [', last used ', timeEl(p.last_used_at)] : ', never used';
        return h('li', {}, h('strong', {}, p.name), ' — added ', timeEl(p.created_at), used, ' ', remove);
      }))
      : h('p', { class: 'muted' }, 'No passkeys.');
    fill(keys, h('h2', { id: 'passkeys-title' }, 'Passkeys'),
      h('p', {}, 'A passkey lets this browser or a security key prove it is you, with no code to type.'), list, form);
  }

  function drawCodes() {
    const title = h('h2', { id: 'codes-title' }, 'Recovery codes');
    if (state.totp !== 'on' && !state.passkeys.length) return fill(codes, title, h('p', { class: 'muted' }, 'Made when you turn on an app or add a passkey.'));
    const again = h('button', { type: 'button', class: 'quiet' }, 'Make new recovery codes');
    again.addEventListener('click', () => sessionCall('POST', '/dashboard/recovery-codes').then((s) => update(s, 'New recovery codes made; the old ones no longer work.'), fail('Not made')));
    fill(codes, title, h('p', { id: 'codes-left' }, `${state.recovery_codes_left} unused.`), again);
  }

  function draw() {
    drawApp();
    drawKeys();
    drawCodes();
  }
  draw();
  fill(main, h('h1', {}, 'Two-factor'),
    h('p', { class: 'muted' }, 'With a second factor on, a stolen password alone no longer signs in.'),
    codesShown, outcome, app, keys, codes);
}
