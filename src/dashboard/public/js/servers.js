// Servers: the list (state and address, refreshed every few seconds), the create form, and power buttons.
import { api, listAll, newKey } from './api.js';
import { h, fill, announce, errorBox, every } from './dom.js';
import { powerButtons } from './actions.js';

const REFRESH_MS = 3000;

export async function serversView(main, signal) {
  const [plans, versions] = await Promise.all([api('GET', '/v1/plans'), api('GET', '/v1/versions')]);
  const tableBox = h('div', {}, h('p', { class: 'muted' }, 'Loading servers…'));
  const outcome = h('div', { class: 'outcome' });
  fill(
    main,
    h('h1', {}, 'Servers'),
    createForm(plans.data, versions.data, () => refresh()),
    h('section', { 'aria-labelledby': 'your-servers' }, h('h2', { id: 'your-servers' }, 'Your servers'), outcome, tableBox),
  );

  let shown = '';
  async function refresh() {
    const servers = await listAll('/v1/servers');
    const key = JSON.stringify(servers.map((s) => [s.id, s.name, s.state, s.address]));
    if (key === shown) return; // unchanged: keep the DOM (and the keyboard focus) as it is
    shown = key;
    fill(tableBox, servers.length ? table(servers, gameOf(versions.data), outcome, refresh, signal) : h('p', { class: 'muted' }, 'No servers yet. Create one above.'));
  }
  await refresh();
  every(REFRESH_MS, signal, refresh);
}

/** The game of each version id (Version.game), so every server says which client its players need. */
export function gameOf(versions) {
  const games = new Map(versions.map((v) => [v.id, v.game]));
  return (server) => games.get(server.version) ?? server.software;
}

/** host:port, with the transport when it is not TCP (a Luanti server is UDP). */
export function addressText(address) {
  if (!address) return '–';
  return h('code', {}, `${address.host}:${address.port}${address.transport === 'udp' ? ' (UDP)' : ''}`);
}

function table(servers, game, outcome, refresh, signal) {
  const changed = () => refresh().catch((e) => announce(e.message));
  return h(
    'table',
    {},
    h('caption', { class: 'sr-only' }, 'Your servers with their state and address'),
    h('thead', {}, h('tr', {}, ['Name', 'State', 'Address', 'Game', 'Plan', 'Version', 'Actions'].map((c) => h('th', { scope: 'col' }, c)))),
    h(
      'tbody',
      {},
      servers.map((s) =>
        h(
          'tr',
          { 'data-server-id': s.id },
          h('th', { scope: 'row' }, h('a', { href: `#/servers/${s.id}` }, s.name)),
          h('td', {}, stateBadge(s.state)),
          h('td', {}, addressText(s.address)),
          h('td', {}, game(s)),
          h('td', {}, s.plan),
          h('td', {}, s.version),
          h('td', {}, powerButtons(s, outcome, changed, signal)),
        ),
      ),
    ),
  );
}

export function stateBadge(state) {
  return h('span', { class: `badge state-${state}` }, state);
}

function createForm(plans, versions, created) {
  const error = h('div');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'create-server' },
    h('h2', { id: 'create-server' }, 'Create a server'),
    h('div', { class: 'row' },
      field('Name', h('input', { id: 'server-name', name: 'name', required: true, maxlength: 64, autocomplete: 'off' })),
      field('Plan', h('select', { id: 'server-plan', name: 'plan', required: true },
        plans.map((p) => h('option', { value: p.id }, `${p.name} — ${p.memory_mb} MiB, ${p.player_slots} players`)))),
      field('Version', versionPicker(versions)),
    ),
    h('button', { type: 'submit' }, 'Create server'),
    error,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = { name: String(data.get('name')).trim(), plan: data.get('plan'), version: data.get('version') };
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    error.replaceChildren();
    try {
      // The key makes a double submit (or a retry after a lost answer) create one server, not two.
      const server = await api('POST', '/v1/servers', body, { 'Idempotency-Key': newKey() });
      form.reset();
      announce(`Created ${server.name}; it is ${server.state}.`);
      await created();
    } catch (e) {
      error.replaceChildren(errorBox(`Could not create the server: ${e.message}`));
    } finally {
      button.disabled = false;
    }
  });
  return form;
}

/**
 * The versions grouped by game (one <optgroup> each, in catalog order). The catalog lists each software's
 * versions oldest first; the newest of the first game is offered by default.
 */
function versionPicker(versions) {
  const games = [...new Set(versions.map((v) => v.game))];
  const first = versions.filter((v) => v.game === games[0]).at(-1);
  return h('select', { id: 'server-version', name: 'version', required: true },
    games.map((game) => h('optgroup', { label: game },
      versions.filter((v) => v.game === game)
        .map((v) => h('option', { value: v.id, selected: v === first }, `${v.software} ${v.game_version}`)))));
}

/** A labelled form control (every input has a visible <label for>). */
export function field(text, control) {
  return h('div', { class: 'field' }, h('label', { for: control.id }, text), control);
}
