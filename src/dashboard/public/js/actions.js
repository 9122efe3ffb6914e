// Power actions, shared by the server list and the server page. POST /v1/servers/{id}/actions answers 202 with
// a pending action; its end comes as an action.succeeded or action.failed event on the account's stream (live.js),
// and we say how it ended. Only the actions the server's state allows are offered (the spec's Servers tag: the
// state machine), and the ones that throw players out ask first, naming how many are online (issue 29).
import { api } from './api.js';
import { h, announce } from './dom.js';
import { plural } from './format.js';
import { isLive, recorder } from './live.js';
import { askDelete } from './delete-server.js';

/**
 * How long to wait for the action's event before reading the action once (docs/dashboard-budget.md): a start may
 * take a while, and the event normally comes within a second of the end. Without live events, a read every 5 s.
 */
const EVENT_WAIT_MS = 30_000;
const POLL_MS = 5000;

/** What each state allows: a start once stopped or crashed, a stop or kill while a game lives. */
const ALLOWED = {
  installing: [],
  stopped: ['start'],
  crashed: ['start', 'stop'],
  starting: ['stop', 'kill'],
  running: ['stop', 'restart', 'kill'],
  stopping: ['kill'],
  deleting: [],
  unreachable: [],
};
const DONE = { start: 'Started', stop: 'Stopped', restart: 'Restarted', kill: 'Killed' };

export function label(type) {
  return type[0].toUpperCase() + type.slice(1);
}

/** Who is online, for a confirmation: [] unless the game runs and can tell. */
export async function onlinePlayers(server) {
  if (server.state !== 'running') return [];
  try {
    return (await api('GET', `/v1/servers/${server.id}/players`)).players.map((p) => p.name);
  } catch {
    return [];
  }
}

/** "2 players are online (Alex, Steve)", or '' when nobody is. */
export function whoIsOnline(names) {
  if (!names.length) return '';
  const list = names.length <= 5 ? ` (${names.join(', ')})` : '';
  return `${plural(names.length, 'player')} ${names.length === 1 ? 'is' : 'are'} online${list}`;
}

/** Asks before an action that ends the game abruptly or throws players out; true to go ahead. */
export async function confirmAction(server, type) {
  if (type === 'start') return true;
  const online = whoIsOnline(await onlinePlayers(server));
  if (type === 'kill') {
    return confirm(`Kill ${server.name}? The game is ended at once, without saving the world.${online ? ` ${online}; they are disconnected.` : ''}`);
  }
  if (!online) return true;
  const what = type === 'restart' ? 'Restart' : 'Stop';
  return confirm(`${what} ${server.name}? ${online}; they are disconnected${type === 'restart' ? ' until it is back' : ''}.`);
}

/** Runs one action and resolves with the finished action; `report` gets progress and the outcome as text. */
export async function runAction(server, type, report, signal) {
  report(`${label(type)} ${server.name}: asked…`, false);
  const action = await finished(server.id, () => api('POST', `/v1/servers/${server.id}/actions`, { type }), signal);
  if (action.status === 'failed') report(`Could not ${type} ${server.name}: ${action.error?.detail ?? 'no reason given'}`, true);
  else if (action.status === 'succeeded') report(`${DONE[type]} ${server.name}.`, false, true);
  return action;
}

/**
 * Asks for an action (`ask()` POSTs it) and resolves with it once it ended: from its event, listened for from
 * before the POST so that a fast end is not missed; read now and then (GET …/actions/{id}) when no event comes.
 * Resolves with the action as it is when `signal` aborts (the page was left).
 */
export async function finished(serverId, ask, signal) {
  const events = recorder(signal);
  try {
    let action = await ask();
    while (action.status === 'pending' || action.status === 'running') {
      const id = action.id;
      const e = await events.next((x) => (x.type === 'action.succeeded' || x.type === 'action.failed') && x.data.action.id === id,
        isLive() ? EVENT_WAIT_MS : POLL_MS);
      if (signal?.aborted) return action;
      action = e ? e.data.action : await api('GET', `/v1/servers/${serverId}/actions/${id}`);
    }
    return action;
  } finally {
    events.stop();
  }
}

/**
 * The power buttons the server's state allows, and Delete; on a server shared with the reader, power only with the
 * `power` permission and Delete never (Server.access). `out` shows progress and the outcome (failures as
 * role=alert); `changed` is called after each action so the caller can refresh, `deleted` once the service
 * accepted a delete.
 */
export function powerButtons(server, out, changed, signal, deleted = changed) {
  const report = (text, failed, final = false) => {
    out.replaceChildren(h('span', failed ? { class: 'error', role: 'alert' } : {}, text));
    if (failed || final) announce(text, failed);
  };
  const act = (type) => async (event) => {
    const button = event.currentTarget;
    if (!(await confirmAction(server, type))) return;
    button.disabled = true;
    try {
      await runAction(server, type, report, signal);
    } catch (e) {
      report(`Could not ${type} ${server.name}: ${e.message}`, true);
    } finally {
      button.disabled = false;
      // A disabled button loses the focus; given back unless the customer moved on meanwhile (issue 38 §6).
      if (button.isConnected && document.activeElement === document.body) button.focus({ preventScroll: true });
      changed();
    }
  };
  const remove = async () => {
    const asked = await askDelete(server); // with the choice to keep its backups (delete-server.js)
    if (!asked) return;
    try {
      await api('DELETE', `/v1/servers/${server.id}${asked.keepBackups ? '?keep_backups=true' : ''}`);
      report(`Deleting ${server.name}…${asked.keepBackups ? ' Its backups are kept under Backups.' : ''}`, false, true);
      deleted();
    } catch (e) {
      report(`Could not delete ${server.name}: ${e.message}`, true);
      changed();
    }
  };
  const owner = server.access.role === 'owner';
  const allowed = server.access.permissions.includes('power') ? (ALLOWED[server.state] ?? []) : [];
  return h(
    'div',
    { class: 'buttons', role: 'group', 'aria-label': `Actions for ${server.name}` },
    allowed.map((type) =>
      h('button', { type: 'button', class: type === 'kill' ? 'danger' : '', 'aria-label': `${label(type)} ${server.name}`, 'data-action': type, onclick: act(type) }, label(type)),
    ),
    server.state === 'deleting' || !owner ? null : h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${server.name}`, 'data-action': 'delete', onclick: remove }, 'Delete'),
  );
}

/** Which action's button last had the focus in each box of power buttons (keepingFocus); null once it moved on. */
const focusedAction = new WeakMap();

/**
 * Draws a box of power buttons again (`draw()`) without dropping the keyboard focus (issue 38 §6): a redraw
 * replaces the buttons, and the button pressed is disabled while its action runs, so keyboard users found the focus
 * on <body>. When the focus was on one of the box's buttons, or was lost (on <body>) since it last was, it goes to
 * the button of the same action, or, when the new state does not offer it, to the state's first (Stop after a
 * start, Start after a stop). Focus that moved on elsewhere is left where it is.
 */
export function keepingFocus(box, draw) {
  if (!focusedAction.has(box)) {
    focusedAction.set(box, null);
    box.addEventListener('focusin', (e) => focusedAction.set(box, e.target.dataset?.action ?? ''));
    box.addEventListener('focusout', (e) => {
      if (e.relatedTarget && !box.contains(e.relatedTarget)) focusedAction.set(box, null);
    });
  }
  const active = document.activeElement;
  const inside = active !== box && box.contains(active);
  const want = inside ? (active.dataset?.action ?? '') : (!active || active === document.body) ? focusedAction.get(box) : null;
  draw();
  if (want === null || want === undefined) return;
  const next = (want && box.querySelector(`button[data-action="${want}"]`)) || box.querySelector('button');
  next?.focus({ preventScroll: true });
}
