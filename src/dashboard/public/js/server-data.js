// A server's settings and player lists, through the same /v1 calls as any client: the settings form is built from
// the software's own definitions (GET /v1/versions/{id}: each setting's JSON Schema), so new software needs no
// dashboard change; the lists are GET/PUT/DELETE …/players/{list}[/{name}] and PATCH …/players/{list}.
import { api } from './api.js';
import { h, fill, announce, errorBox } from './dom.js';
import { field } from './servers.js';

const LISTS = [['whitelist', 'Whitelist'], ['operators', 'Operators'], ['bans', 'Bans']];

export function settingsSection(server) {
  const body = h('div');
  const outcome = h('div');
  (async () => {
    const [version, current] = await Promise.all([api('GET', `/v1/versions/${server.version}`), api('GET', `/v1/servers/${server.id}/settings`)]);
    if (!version.settings.length) return fill(body, h('p', { class: 'muted' }, 'This software has no settings.'));
    const inputs = version.settings.map((d) => [d, input(d, current.values[d.name])]);
    const form = h('form', { class: 'settings' }, inputs.map(([d, el]) => field(d.name + (d.restart_required ? ' (after a restart)' : ''), el)),
      h('button', { type: 'submit' }, 'Save settings'));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const changes = {};
      for (const [d, el] of inputs) {
        const value = read(d, el);
        if (!d.creation_only && value !== current.values[d.name]) changes[d.name] = value;
      }
      if (!Object.keys(changes).length) return void outcome.replaceChildren(h('span', {}, 'Nothing changed.'));
      try {
        const saved = await api('PATCH', `/v1/servers/${server.id}/settings`, changes);
        Object.assign(current.values, saved.values);
        const note = saved.restart_pending.length ? ` A restart applies ${saved.restart_pending.join(', ')}.` : '';
        outcome.replaceChildren(h('span', {}, `Settings saved.${note}`));
        announce('Settings saved.');
      } catch (e) {
        outcome.replaceChildren(errorBox(`Not saved: ${e.message}`));
      }
    });
    fill(body, form);
  })().catch((e) => outcome.replaceChildren(errorBox(`Could not load the settings: ${e.message}`)));
  return h('section', { 'aria-labelledby': 'settings-title' }, h('h2', { id: 'settings-title' }, 'Settings'), body, outcome);
}

/** The control for one setting, from its JSON Schema. */
function input(d, value) {
  const s = d.schema;
  const common = { id: `setting-${d.name}`, name: d.name, disabled: d.creation_only, title: s.description ?? '' };
  if (Array.isArray(s.enum)) {
    return h('select', common, s.enum.map((v) => h('option', { value: String(v), selected: v === value }, String(v))));
  }
  if (s.type === 'boolean') return h('input', { ...common, type: 'checkbox', checked: value === true });
  if (s.type === 'integer' || s.type === 'number') {
    return h('input', { ...common, type: 'number', value: String(value ?? ''), min: s.minimum, max: s.maximum, step: s.type === 'integer' ? 1 : 'any' });
  }
  return h('input', { ...common, type: 'text', value: String(value ?? ''), maxlength: s.maxLength ?? 1000 });
}

function read(d, el) {
  const s = d.schema;
  if (s.type === 'boolean') return el.checked;
  if (s.type === 'integer' || s.type === 'number') return Number(el.value);
  if (Array.isArray(s.enum)) return s.enum.find((v) => String(v) === el.value);
  return el.value;
}

export function playerListsSection(server) {
  const body = h('div');
  const outcome = h('div');
  const say = (text, failed = false) => {
    outcome.replaceChildren(failed ? errorBox(text) : h('span', {}, text));
    if (!failed) announce(text);
  };
  let kept = null; // the lists this software keeps (VersionDetail.player_lists)
  async function render() {
    kept ??= (await api('GET', `/v1/versions/${server.version}`)).player_lists;
    const shown = [];
    for (const [list, title] of LISTS.filter(([l]) => kept.includes(l))) {
      shown.push(listBox(list, title, await api('GET', `/v1/servers/${server.id}/players/${list}`)));
    }
    fill(body, shown.length ? shown : h('p', { class: 'muted' }, 'This software keeps no player lists.'));
  }
  const run = (fn, done) => async (event) => {
    event.preventDefault?.();
    try {
      await fn();
      say(done);
    } catch (e) {
      say(e.message, true);
    }
    await render().catch((e) => say(e.message, true));
  };
  function listBox(list, title, data) {
    const name = h('input', { id: `add-${list}`, name: 'name', required: true, maxlength: 16, pattern: '[A-Za-z0-9_]{1,16}', autocomplete: 'off' });
    const add = h('form', { class: 'row' }, field(`Player to add to ${title.toLowerCase()}`, name), h('button', { type: 'submit' }, 'Add'));
    add.addEventListener('submit', (event) => run(() => api('PUT', `/v1/servers/${server.id}/players/${list}/${encodeURIComponent(name.value)}`), `Added ${name.value} to ${title.toLowerCase()}.`)(event));
    const toggle = data.enabled === null ? null : h('label', {}, h('input', {
      type: 'checkbox', checked: data.enabled,
      onchange: (event) => run(() => api('PATCH', `/v1/servers/${server.id}/players/${list}`, { enabled: event.target.checked }), `${title} ${event.target.checked ? 'on' : 'off'}.`)(event),
    }), ` ${title} on`);
    const entries = data.data.length
      ? h('ul', { class: 'plain' }, data.data.map((e) => h('li', {}, e.name, ' ',
        h('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${e.name} from ${title.toLowerCase()}`,
          onclick: run(() => api('DELETE', `/v1/servers/${server.id}/players/${list}/${e.name}`), `Removed ${e.name} from ${title.toLowerCase()}.`) }, 'Remove'))))
      : h('p', { class: 'muted' }, 'Nobody.');
    return h('div', { class: 'player-list', 'data-list': list }, h('h3', {}, title), toggle, entries, add);
  }
  render().catch((e) => say(`Could not load the player lists: ${e.message}`, true));
  return h('section', { 'aria-labelledby': 'players-title' }, h('h2', { id: 'players-title' }, 'Player lists'), body, outcome);
}
