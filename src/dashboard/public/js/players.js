// Who is online (GET …/players, while the game runs) with quick actions on each player: whitelist, operator and
// ban, each offered only where the software keeps that list (VersionDetail.player_lists), and kick where the
// software can (VersionDetail.kick; kickServerPlayer). A ban or a kick of a player who is online disconnects them
// (docs/architecture.md "Player lists"); both ask first. Read when the page opens, when the server starts running
// and after the customer's own quick actions; in between, player.joined and player.left events (live.js) add and
// remove players without a read (docs/dashboard-budget.md).
import { api, newKey } from './api.js';
import { h, fill, announce, errorBox } from './dom.js';
import { versionDetail } from './catalog.js';
import { onEvent, whenChanged } from './live.js';

const QUICK = {
  whitelist: { add: 'Whitelist', remove: 'Remove from whitelist', done: (n, on) => `${on ? 'Added' : 'Removed'} ${n} ${on ? 'to' : 'from'} the whitelist.` },
  operators: { add: 'Make operator', remove: 'Remove operator', done: (n, on) => (on ? `${n} is an operator now.` : `${n} is no longer an operator.`) },
  bans: { add: 'Ban', remove: 'Unban', done: (n, on) => (on ? `Banned ${n}; they were disconnected.` : `Unbanned ${n}.`) },
};

/**
 * The section and `update(server)`, which the page calls with each fresh read of the server. `listsChanged()`
 * tells the player lists section to redraw after a quick action.
 */
export function playersSection(serverAtStart, signal, hooks = {}) {
  let server = serverAtStart;
  const body = h('div', { id: 'players-online' }, h('p', { class: 'muted' }, 'Loading…'));
  const outcome = h('div', { class: 'outcome' });
  const say = (text, failed = false) => {
    outcome.replaceChildren(failed ? errorBox(text) : h('span', {}, text));
    announce(text, failed);
  };
  let shown = '';
  let last = null; // { online, detail, lists } from the last read, which the events then change
  // The join and leave events that came while a read was under way: its answer may be from before them (a kick's
  // read races the game's report of the leave), so they are applied to it as well.
  let during = null;

  async function refresh() {
    if (server.state !== 'running') {
      shown = '';
      last = null;
      return void fill(body, h('p', { class: 'muted' }, `Nobody: the server is ${server.state}.`));
    }
    const seen = (during = []);
    try {
      const [online, detail] = await Promise.all([api('GET', `/v1/servers/${server.id}/players`), versionDetail(server.version)]);
      const lists = {};
      for (const list of detail.player_lists) lists[list] = new Set((await api('GET', `/v1/servers/${server.id}/players/${list}`)).data.map((e) => e.name.toLowerCase()));
      last = seen.reduce(applied, { online, detail, lists });
      draw();
    } finally {
      if (during === seen) during = null;
    }
  }

  /** `state` with a player.joined or player.left event applied (the events carry the player). */
  function applied(state, e) {
    const others = state.online.players.filter((p) => p.uuid !== e.data.player.uuid);
    const players = e.type === 'player.joined' ? [...others, e.data.player] : others;
    return { ...state, online: { ...state.online, online: players.length, players } };
  }

  function draw() {
    const { online, detail, lists } = last;
    const key = JSON.stringify([online.online, online.max, online.players.map((p) => p.name), Object.entries(lists).map(([k, v]) => [k, [...v]])]);
    if (key === shown) return; // unchanged: keep the DOM (and the keyboard focus) as it is
    shown = key;
    fill(body,
      h('p', {}, h('strong', { id: 'players-count' }, `${online.online} of ${online.max}`), ' players online'),
      online.players.length
        ? h('ul', { class: 'players' }, online.players.map((p) => h('li', { 'data-player': p.name },
          h('span', { class: 'name' }, p.name),
          h('span', { class: 'buttons', role: 'group', 'aria-label': `Quick actions for ${p.name}` },
            detail.player_lists.filter((l) => QUICK[l]).map((list) => quickButton(p.name, list, lists[list].has(p.name.toLowerCase()))),
            detail.kick ? kickButton(p.name) : null))))
        : h('p', { class: 'muted' }, 'Nobody is playing right now.'));
  }

  /** A join or a leave from the account's events: applied to the last read (the events carry the player). */
  onEvent((e) => {
    if (e.server_id !== server.id || (e.type !== 'player.joined' && e.type !== 'player.left')) return;
    during?.push(e);
    if (!last) return;
    last = applied(last, e);
    draw();
  }, signal);

  function quickButton(name, list, on) {
    const q = QUICK[list];
    const put = !on;
    const click = async (event) => {
      if (list === 'bans' && put && !confirm(`Ban ${name} from ${server.name}? They are disconnected at once and cannot join again until unbanned.`)) return;
      event.currentTarget.disabled = true;
      try {
        await api(put ? 'PUT' : 'DELETE', `/v1/servers/${server.id}/players/${list}/${encodeURIComponent(name)}`);
        say(q.done(name, put));
      } catch (e) {
        say(`Could not change ${name}: ${e.message}`, true);
      }
      shown = '';
      hooks.listsChanged?.();
      await refresh().catch((e) => say(e.message, true));
    };
    const text = put ? q.add : q.remove;
    // The visible text starts the accessible name (WCAG 2.5.3 Label in Name): "Make operator Steve".
    return h('button', { type: 'button', class: list === 'bans' && put ? 'danger' : 'quiet', 'aria-label': `${text} ${name}`, onclick: click }, text);
  }

  function kickButton(name) {
    const click = async (event) => {
      if (!confirm(`Kick ${name} from ${server.name}? They are disconnected, and may join again.`)) return;
      event.currentTarget.disabled = true;
      try {
        // The key makes a double click (or a retry after a lost answer) one kick.
        await api('POST', `/v1/servers/${server.id}/kicks`, { player: name }, { 'Idempotency-Key': newKey() });
        say(`Kicked ${name}.`);
      } catch (e) {
        say(`Could not kick ${name}: ${e.message}`, true);
      }
      shown = '';
      await refresh().catch((e) => say(e.message, true));
    };
    return h('button', { type: 'button', class: 'danger', 'aria-label': `Kick ${name}`, onclick: click }, 'Kick');
  }

  refresh().catch((e) => fill(body, errorBox(`Could not load who is online: ${e.message}`)));
  whenChanged(signal, () => false, refresh, { fallbackMs: 120_000 }); // read slowly only while events are not live
  return {
    el: h('section', { 'aria-labelledby': 'online-title' }, h('h2', { id: 'online-title' }, 'Who is online'), body, outcome),
    /**
     * The page's fresh read of the server: who is online is read again when it has just started running (not on a
     * timer of its own), so it is asked only of a server just seen running. It can still stop in between: the 409
     * counts as nobody.
     */
    update(s) {
      const was = server.state;
      server = s;
      if (signal.aborted || s.state === was) return;
      refresh().catch(() => undefined);
    },
    refresh,
  };
}
