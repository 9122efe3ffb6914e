// Servers: the account's quota use, the create form (plans and game versions by name, and the settings that can
// only be chosen now, such as a world's seed), and the list (state, address, game, plan, the power buttons the
// state allows), read again when the account's events say a server changed (live.js; docs/dashboard-budget.md).
import { api, listAll, newKey } from './api.js';
import { h, fill, announce, errorBox, field, showFieldErrors, table } from './dom.js';
import { fmtMiB, plural } from './format.js';
import { powerButtons } from './actions.js';
import { catalog, planFigures, planName, versionDetail, versionName } from './catalog.js';
import { settingField } from './settings.js';
import { whenChanged } from './live.js';
import { dnsNameField, inWords, learnZone } from './dns-name.js';
import { fieldsMarked, sayAs } from './problems.js';

export async function serversView(main, signal) {
  const cat = await catalog();
  const quota = h('section', { class: 'card', 'aria-labelledby': 'quota-title' }, h('h2', { id: 'quota-title' }, 'Your account'), h('p', { class: 'muted' }, 'Loading…'));
  const listBox = h('div', {}, h('p', { class: 'muted' }, 'Loading servers…'));
  const outcome = h('div', { class: 'outcome' });
  // Shown once the list says the service gives names (ServerList.dns_zone): no request of its own.
  const dnsName = dnsNameField('server-dns-name');
  fill(
    main,
    h('h1', {}, 'Servers'),
    quota,
    h('section', { 'aria-labelledby': 'your-servers' }, h('h2', { id: 'your-servers' }, 'Your servers'), outcome, listBox),
    createForm(cat, () => refresh(), dnsName),
  );

  let shown = '';
  async function refresh() {
    const [servers, use] = await Promise.all([listAll('/v1/servers', (page) => dnsName.show(learnZone(page.dns_zone))), api('GET', '/v1/quota')]);
    const key = JSON.stringify([servers.map((s) => [s.id, s.name, s.state, s.address, s.access]), use]);
    if (key === shown) return; // unchanged: keep the DOM (and the keyboard focus) as it is
    shown = key;
    fill(quota, h('h2', { id: 'quota-title' }, 'Your account'), quotaUse(use));
    fill(listBox, servers.length ? serverTable(servers, cat, outcome, refresh, signal) : h('p', { class: 'muted' }, 'No servers yet. Create one below.'));
  }
  await refresh();
  // A server made, changed, deleted or changing state (server.*) changes the list and the quota's use.
  whenChanged(signal, (e) => e.type.startsWith('server.'), refresh, { fallbackMs: 60_000, failed: (e) => announce(e.message, true) });
}

/** GET /v1/quota as three meters: servers, running, memory (docs/conventions.md "Quotas"). */
function quotaUse(use) {
  const item = (id, title, used, limit, text) => h('div', { class: 'quota', 'data-quota': id },
    h('label', { for: `quota-${id}` }, title), ' ',
    h('meter', { id: `quota-${id}`, min: 0, max: limit, value: Math.min(used, limit), high: limit * 0.9, optimum: 0 }),
    h('div', { class: 'muted' }, text));
  return h('div', { class: 'quotas' },
    item('servers', 'Servers', use.servers.used, use.servers.limit, `${use.servers.used} of ${use.servers.limit}`),
    item('running', 'Running', use.running.used, use.running.limit, `${use.running.used} of ${use.running.limit}`),
    item('memory', 'Memory', use.memory_mb.used, use.memory_mb.limit, `${fmtMiB(use.memory_mb.used)} of ${fmtMiB(use.memory_mb.limit)}`));
}

/** host:port, with the transport when it is not TCP (a Luanti server is UDP). */
export function addressText(address) {
  if (!address) return '–';
  return h('code', {}, `${address.host}:${address.port}${address.transport === 'udp' ? ' (UDP)' : ''}`);
}

export function stateBadge(state) {
  return h('span', { class: `badge state-${state}` }, state);
}

function serverTable(servers, cat, outcome, refresh, signal) {
  const changed = () => refresh().catch((e) => announce(e.message, true));
  return table('Your servers with their state and address', ['Name', 'State', 'Address', 'Game', 'Plan', ''],
    servers.map((s) => [
      h('span', {}, h('a', { href: `#/servers/${s.id}` }, s.name), s.access.role === 'member' ? h('span', { class: 'badge shared', title: 'Shared with you by its owner' }, 'shared') : null),
      stateBadge(s.state),
      addressText(s.address),
      versionName(cat, s.version),
      planName(cat, s.plan),
      powerButtons(s, outcome, changed, signal),
    ]),
    (i) => ({ 'data-server-id': servers[i].id }));
}

function createForm(cat, created, dnsName) {
  const error = h('div');
  const name = h('input', { id: 'server-name', name: 'name', required: true, maxlength: 64, autocomplete: 'off' });
  // ServerName's rules (openapi/v1.yaml) in the customer's words; the page trims the spaces around a name itself.
  sayAs(name, { label: 'the name', empty: 'Give the server a name.', maxLength: 'A server name can be at most 64 characters long.',
    pattern: 'A server name cannot hold control characters, such as a tab or a line break.' });
  const plan = h('select', { id: 'server-plan', name: 'plan', required: true },
    cat.plans.map((p) => h('option', { value: p.id }, `${p.name}: ${planFigures(p)}`)));
  const version = versionPicker(cat.versions);
  const world = h('fieldset', { id: 'creation-settings', hidden: true });
  let worldFields = [];
  const controls = new Map([['/body/name', name], ['/body/plan', plan], ['/body/version', version], ['/body/dns_name', dnsName.control]]);
  const form = h('form', { class: 'card', 'aria-labelledby': 'create-server', novalidate: true },
    h('h2', { id: 'create-server' }, 'Create a server'),
    h('div', { class: 'row' }, field('Name', name), field('Plan', plan), field('Version', version)),
    dnsName.el,
    world,
    h('button', { type: 'submit' }, 'Create server'),
    error);

  /**
   * The version's creation-only settings (a world's generator and seed): chosen here or never. Only the answer for
   * the version picked last is shown (an earlier, slower answer would put back the previous version's fields), and
   * what the person already chose stays chosen where the new version has the same setting and allows the value.
   */
  let asked = 0;
  async function showWorld() {
    const ask = ++asked;
    const detail = await versionDetail(version.value);
    if (ask !== asked) return;
    const chosen = new Map(worldFields.map(([d, f]) => [d.name, f.read()]));
    const keep = (d) => {
      const v = chosen.get(d.name);
      return v !== undefined && v !== null && (!Array.isArray(d.schema.enum) || d.schema.enum.includes(v)) ? v : d.schema.default;
    };
    const only = detail.settings.filter((d) => d.creation_only);
    for (const key of [...controls.keys()]) if (key.startsWith('/body/settings/')) controls.delete(key);
    worldFields = only.map((d) => [d, settingField(d, keep(d), cat.plan(plan.value), { prefix: 'create', creating: true })]);
    for (const [d, f] of worldFields) controls.set(`/body/settings/${d.name}`, f.control);
    fill(world, h('legend', {}, 'World: chosen now, it cannot change later'), worldFields.map(([, f]) => f.el));
    world.hidden = only.length === 0;
  }
  version.addEventListener('change', () => showWorld().catch((e) => error.replaceChildren(errorBox(e.message))));
  showWorld().catch((e) => error.replaceChildren(errorBox(e.message)));

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const body = { name: name.value.trim(), plan: plan.value, version: version.value };
    const settings = {};
    for (const [d, f] of worldFields) {
      const value = f.read();
      if (value !== null && value !== undefined && value !== d.schema.default) settings[d.name] = value;
    }
    if (Object.keys(settings).length) body.settings = settings;
    if (!dnsName.el.hidden && dnsName.read()) body.dns_name = dnsName.read();
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    error.replaceChildren();
    showFieldErrors(form, controls, []);
    try {
      // The key makes a double submit (or a retry after a lost answer) create one server, not two.
      const server = await api('POST', '/v1/servers', body, { 'Idempotency-Key': newKey() });
      name.value = '';
      dnsName.control.value = '';
      announce(`Created ${server.name}; it is ${server.state}.`);
      await created();
    } catch (e) {
      if (e.problem?.code === 'dns_not_configured') dnsName.show(learnZone(null)); // names stopped since the list was read
      const left = showFieldErrors(form, controls, inWords(e.problem));
      const atFields = fieldsMarked(form); // one per field, however many rules its value broke
      error.replaceChildren(errorBox(atFields && !left.length
        ? `Not created: ${plural(atFields, 'field')} ${atFields === 1 ? 'needs' : 'need'} a change.`
        : `Could not create the server: ${e.message}`));
    } finally {
      button.disabled = false;
    }
  });
  return form;
}

/**
 * The versions grouped by game (one <optgroup> each, in catalog order), each by its game version, newest first:
 * the catalog lists each software's versions oldest first. The newest of the first game is the default.
 */
function versionPicker(versions) {
  const games = [...new Set(versions.map((v) => v.game))];
  const first = versions.filter((v) => v.game === games[0]).at(-1);
  return h('select', { id: 'server-version', name: 'version', required: true },
    games.map((game) => h('optgroup', { label: game },
      versions.filter((v) => v.game === game).reverse()
        .map((v) => h('option', { value: v.id, selected: v === first, title: v.description }, `${game} ${v.game_version}`)))));
}
