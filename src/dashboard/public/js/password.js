// Settings → Password: a new password ends every session of the account (other browsers are signed out at once;
// this one carries on in a new session), and the box revokes every API token as well, for when a token or the
// old password may have leaked.
import { changePassword } from './api.js';
import { h, fill, announce, errorBox, field } from './dom.js';

export async function passwordView(main) {
  const outcome = h('div');
  const current = h('input', { id: 'current-password', type: 'password', required: true, autocomplete: 'current-password' });
  const next = h('input', { id: 'new-password', type: 'password', required: true, minlength: 8, maxlength: 1000, autocomplete: 'new-password' });
  const again = h('input', { id: 'new-password-again', type: 'password', required: true, autocomplete: 'new-password' });
  const revoke = h('input', { id: 'revoke-tokens', type: 'checkbox' });
  const button = h('button', { type: 'submit' }, 'Change password');
  const form = h('form', { class: 'card narrow-left', 'aria-labelledby': 'change-password' },
    h('h2', { id: 'change-password' }, 'Change your password'),
    field('Current password', current),
    field('New password', next),
    field('New password again', again),
    h('label', { class: 'check' }, revoke, ' Also revoke every API token ',
      h('span', { class: 'muted' }, '— scripts and SDKs using them stop working')),
    button,
    outcome);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    outcome.replaceChildren();
    if (next.value !== again.value) return void outcome.replaceChildren(errorBox('The new passwords differ.'));
    button.disabled = true;
    const revokeTokens = revoke.checked;
    try {
      const done = await changePassword(current.value, next.value, revokeTokens);
      form.reset();
      const tokens = revokeTokens ? ` Revoked ${done.tokens_revoked} API token(s).` : '';
      const text = `Password changed. Every other browser was signed out.${tokens}`;
      outcome.replaceChildren(h('p', { id: 'password-changed' }, text));
      announce(text);
    } catch (e) {
      outcome.replaceChildren(errorBox(`Not changed: ${e.message}`));
    } finally {
      button.disabled = false;
    }
  });
  fill(main,
    h('h1', {}, 'Password'),
    h('p', { class: 'muted' }, 'A new password signs you out everywhere else.'),
    form);
}
