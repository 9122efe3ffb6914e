// A server's player lists (whitelist, operators, bans: those VersionDetail.player_lists says its software keeps),
// through GET/PUT/DELETE …/players/{list}[/{name}] and PATCH …/players/{list}, like any client. `changed()` tells
// the page (the players online with their quick actions) that a list changed here.
import { api } from './api.js';
import { h, fill, announce, errorBox, field } from './dom.js';
import { versionDetail } from './catalog.js';

export const LISTS = [['whitelist', 'Whitelist'], ['operators', 'Operators'], ['bans', 'Bans']];

export function playerListsSection(server, hooks = {}) {
  const body = h('div');
  const outcome = h('div');
  const say = (text, failed = false) => {
    outcome.replaceChildren(failed ? errorBox(text) : h('span', {}, text));
    if (!failed) announce(text);
  };
  async function render() {
    const kept = (await versionDetail(server.version)).player_lists;
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
      hooks.changed?.();
    } catch (e) {
      say(e.message, true);
    }
    await render().catch((e) => say(e.message, true));
  };
  function listBox(list, title, data) {
    const lower = title.toLowerCase();
    const name = h('input', { id: `add-${list}`, name: 'name', required: true, maxlength: 16, pattern: '[A-Za-z0-9_]{1,16}', autocomplete: 'off' });
    const add = h('form', { class: 'row' }, field(`Player to add to ${lower}`, name), h('button', { type: 'submit' }, 'Add'));
    add.addEventListener('submit', (event) => run(() => api('PUT', `/v1/servers/${server.id}/players/${list}/${encodeURIComponent(name.value)}`), `Added ${name.value} to ${lower}.`)(event));
    const toggle = data.enabled === null ? null : h('label', { class: 'check' }, h('input', {
      type: 'checkbox', checked: data.enabled,
      onchange: (event) => run(() => api('PATCH', `/v1/servers/${server.id}/players/${list}`, { enabled: event.target.checked }), `${title} ${event.target.checked ? 'on: only its players may join' : 'off'}.`)(event),
    }), ` ${title} on`);
    const entries = data.data.length
      ? h('ul', { class: 'plain' }, data.data.map((e) => h('li', {}, e.name, ' ',
        h('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${e.name} from ${lower}`,
          onclick: run(() => api('DELETE', `/v1/servers/${server.id}/players/${list}/${e.name}`), `Removed ${e.name} from ${lower}.`) }, 'Remove'))))
      : h('p', { class: 'muted' }, 'Nobody.');
    return h('div', { class: 'player-list', 'data-list': list }, h('h3', {}, title), toggle, entries, add);
  }
  render().catch((e) => say(`Could not load the player lists: ${e.message}`, true));
  return { el: h('section', { 'aria-labelledby': 'players-title' }, h('h2', { id: 'players-title' }, 'Player lists'), body, outcome), render };
}
