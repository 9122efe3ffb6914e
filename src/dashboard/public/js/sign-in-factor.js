// The sign-in's second step, for an account with a second factor (issue 39 §5): after the right password the
// service asks for a code from the authenticator app, a recovery code, or a passkey before it makes the session.
// The passkey ceremony runs in @simplewebauthn/browser, bundled into vendor/ (scripts/bundle-webauthn.js).
import { ApiError, passkeySignInOptions, signInSecondFactor } from './api.js';
import { h, fill, errorBox, field } from './dom.js';
import { startAuthentication } from './vendor/simplewebauthn-browser.js';

function failure(e) {
  if (e instanceof ApiError) return e.message;
  if (e?.name === 'NotAllowedError') return 'The passkey was not used (cancelled or timed out).';
  return e?.message ? `The passkey did not work: ${e.message}` : 'The service could not be reached; try again.';
}

/**
 * Shows the second step in `main`. `factors` says what the account has (`{totp, passkey}`); `done()` runs once
 * signed in, `restart()` goes back to the password form (a sign-in left waiting expires after 5 minutes).
 */
export function secondFactorView(main, factors, done, restart) {
  const error = h('div');
  const busy = async (button, proofOf) => {
    button.disabled = true;
    error.replaceChildren();
    try {
      await signInSecondFactor(await proofOf());
      done();
    } catch (e) {
      error.replaceChildren(errorBox(`Not signed in: ${failure(e)}`));
      if (e instanceof ApiError && e.status === 401 && /expired/.test(e.message)) restart(e.message);
    } finally {
      button.disabled = false;
    }
  };

  const code = h('input', { id: 'totp-code', name: 'code', type: 'text', inputmode: 'numeric', autocomplete: 'one-time-code', pattern: '[0-9 ]*', maxlength: 7, required: true });
  const codeButton = h('button', { type: 'submit' }, 'Verify code');
  const codeForm = factors.totp ? h('form', {},
    field('Code from your authenticator app', code, { help: 'Six digits; a new one every 30 seconds.' }), codeButton) : null;
  codeForm?.addEventListener('submit', (event) => {
    event.preventDefault();
    busy(codeButton, async () => ({ code: code.value.trim() })).then(() => { code.value = ''; });
  });

  const passkeyButton = factors.passkey ? h('button', { type: 'button', id: 'use-passkey' }, 'Use a passkey') : null;
  passkeyButton?.addEventListener('click', () => busy(passkeyButton, async () => {
    const optionsJSON = await passkeySignInOptions();
    return { passkey: await startAuthentication({ optionsJSON }) };
  }));

  const recovery = h('input', { id: 'recovery-code', name: 'recovery_code', type: 'text', autocomplete: 'off', spellcheck: 'false', maxlength: 40, required: true });
  const recoveryButton = h('button', { type: 'submit', class: 'quiet' }, 'Use recovery code');
  const recoveryForm = h('form', {},
    field('Recovery code', recovery, { help: 'One of the codes you kept when you turned two-factor on; each works once.' }), recoveryButton);
  recoveryForm.addEventListener('submit', (event) => {
    event.preventDefault();
    busy(recoveryButton, async () => ({ recovery_code: recovery.value.trim() }));
  });
  const other = h('details', {}, h('summary', {}, 'Lost your phone or passkey?'), recoveryForm);

  const back = h('button', { type: 'button', class: 'quiet' }, 'Back to email and password');
  back.addEventListener('click', () => restart());

  fill(main, h('section', { class: 'card narrow', 'aria-labelledby': 'second-factor-title' },
    h('h1', { id: 'second-factor-title' }, 'Two-factor sign-in'),
    h('p', {}, 'Your password was right. Now prove it is you with your second factor.'),
    passkeyButton, codeForm, other, error, back));
  (code.isConnected ? code : passkeyButton)?.focus();
}
