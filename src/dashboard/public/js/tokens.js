// Settings → API tokens, through /v1/tokens: the same store and rules as for any API client, so a token
// revoked here is refused by the API from its next request on. The secret is shown once and never kept.
import { api, listAll } from './api.js';
import { h, fill, announce, errorBox, field, table } from './dom.js';
import { timeEl } from './format.js';

const SCOPES = [
  ['servers:read', 'Read servers, catalog, consoles, players and metrics'],
  ['servers:write', 'Create, change, operate and delete servers (includes read)'],
  ['tokens:manage', 'List, create and revoke tokens'],
  ['files', 'Log in to SFTP with this token as the password (the server\'s files page says how)'],
];
const EXPIRY = [['', 'Never'], ['86400', '1 day'], ['604800', '7 days'], ['2592000', '30 days'], ['7776000', '90 days'], ['31536000', '1 year']];

export async function tokensView(main) {
  const listBox = h('div');
  const reveal = h('div');
  const outcome = h('div');
  fill(
    main,
    h('h1', {}, 'API tokens'),
    h('p', { class: 'muted' }, 'Tokens let scripts and SDKs use the API: send one as “Authorization: Bearer <token>”.'),
    reveal, // above the form, so a new secret shows where the page starts, not below a phone's fold (issue 38 §6)
    createForm(reveal, () => refresh()),
    h('section', { 'aria-labelledby': 'token-list' }, h('h2', { id: 'token-list' }, 'Your tokens'), outcome, listBox),
  );

  async function refresh() {
    const tokens = await listAll('/v1/tokens');
    fill(listBox, tokens.length ? tokenTable(tokens, outcome, refresh) : h('p', { class: 'muted' }, 'No tokens.'));
  }
  await refresh();
}

function tokenTable(tokens, outcome, refresh) {
  const revoke = (t) => async () => {
    if (!confirm(`Revoke the token “${t.name}” (${t.prefix}…)? Anything using it stops working at once.`)) return;
    try {
      await api('DELETE', `/v1/tokens/${t.id}`);
      announce(`Revoked ${t.name}: it no longer works.`);
      outcome.replaceChildren();
    } catch (e) {
      outcome.replaceChildren(errorBox(`Could not revoke ${t.name}: ${e.message}`));
    }
    await refresh();
  };
  return table('Your API tokens', ['Name', 'Prefix', 'Scopes', 'Created', 'Last used', 'Expires', ''], tokens.map((t) => [
    t.name,
    h('code', {}, `${t.prefix}…`),
    t.scopes.join(', '),
    timeEl(t.created_at),
    timeEl(t.last_used_at),
    t.expires_at ? timeEl(t.expires_at) : 'never',
    h('button', { type: 'button', class: 'danger', 'aria-label': `Revoke ${t.name} (${t.prefix}…)`, onclick: revoke(t) }, 'Revoke'),
  ]), (i) => ({ 'data-token-id': tokens[i].id }));
}

function createForm(reveal, created) {
  const error = h('div');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'create-token' },
    h('h2', { id: 'create-token' }, 'Create a token'),
    h('div', { class: 'row' },
      field('Name', h('input', { id: 'token-name', name: 'name', required: true, maxlength: 64, autocomplete: 'off' })),
      field('Expires', h('select', { id: 'token-expiry', name: 'expiry' }, EXPIRY.map(([v, t]) => h('option', { value: v, selected: v === '7776000' }, t))))),
    h('fieldset', {}, h('legend', {}, 'Scopes'),
      SCOPES.map(([scope, text]) => h('label', { class: 'check' },
        h('input', { type: 'checkbox', name: 'scopes', value: scope, checked: scope === 'servers:read' }), ` ${scope} `, h('span', { class: 'muted' }, `— ${text}`)))),
    h('button', { type: 'submit' }, 'Create token'),
    error,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const scopes = data.getAll('scopes');
    error.replaceChildren();
    if (!scopes.length) return void error.replaceChildren(errorBox('Pick at least one scope.'));
    const expiry = String(data.get('expiry'));
    try {
      const token = await api('POST', '/v1/tokens', {
        name: String(data.get('name')),
        scopes,
        expires_in_seconds: expiry ? Number(expiry) : null,
      });
      form.reset();
      showOnce(reveal, token);
      await created();
    } catch (e) {
      error.replaceChildren(errorBox(`Could not create the token: ${e.message}`));
    }
  });
  return form;
}

/**
 * The secret, shown once: it lives only in this element until "Done" removes it. It gets the focus, and the box is
 * scrolled into view whole, so it is seen and can be copied without scrolling (issue 38 §6).
 */
function showOnce(reveal, token) {
  const secret = h('code', { id: 'new-token', class: 'secret', tabindex: -1, 'aria-describedby': 'new-token-once' }, token.token);
  const copy = h('button', { type: 'button', onclick: async () => {
    try {
      await navigator.clipboard.writeText(token.token);
      announce('Copied the token.');
    } catch {
      // No clipboard permission (or not a secure context): select it so Ctrl+C works.
      getSelection().selectAllChildren(secret);
      announce('Press Ctrl+C to copy the selected token.');
    }
  } }, 'Copy');
  const box = h('section', { class: 'card reveal', 'aria-labelledby': 'new-token-title' },
    h('h2', { id: 'new-token-title', tabindex: -1 }, `New token “${token.name}”`),
    h('p', { id: 'new-token-once' }, h('strong', {}, 'Copy it now: it is shown only this once.')),
    h('p', { class: 'row' }, secret, copy),
    h('button', { type: 'button', onclick: () => {
      reveal.replaceChildren();
      document.getElementById('token-name')?.focus(); // not lost to <body> with the box
    } }, 'Done'));
  fill(reveal, box);
  box.scrollIntoView({ block: 'nearest' });
  secret.focus({ preventScroll: true });
}
