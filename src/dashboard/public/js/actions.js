// Power actions, shared by the server list and the server page. POST /v1/servers/{id}/actions answers 202 with
// a pending action; we poll it until it ends, and show a failure with the service's own explanation.
import { api } from './api.js';
import { h, announce } from './dom.js';

export const POWER = ['start', 'stop', 'restart', 'kill'];
const POLL_MS = 1000;

/** Runs one action and resolves with the finished action; `report` gets progress and the outcome as text. */
export async function runAction(server, type, report, signal) {
  report(`${label(type)} ${server.name}: asked…`, false);
  let action = await api('POST', `/v1/servers/${server.id}/actions`, { type });
  while (action.status === 'pending' || action.status === 'running') {
    if (signal?.aborted) return action;
    await new Promise((r) => setTimeout(r, POLL_MS));
    action = await api('GET', `/v1/servers/${server.id}/actions/${action.id}`);
    if (action.status === 'running') report(`${label(type)} ${server.name}: running…`, false);
  }
  if (action.status === 'failed') report(`${label(type)} ${server.name} failed: ${action.error?.detail ?? 'no reason given'}`, true);
  else report(`${label(type)} ${server.name}: done.`, false);
  return action;
}

export function label(type) {
  return type[0].toUpperCase() + type.slice(1);
}

/**
 * The Start/Stop/Restart/Kill/Delete buttons for one server. `out` is the element that shows the outcome
 * (failures as role=alert); `changed` is called after each action so the caller can refresh, `deleted` once the
 * service accepted a delete.
 */
export function powerButtons(server, out, changed, signal, deleted = changed) {
  const report = (text, failed) => {
    out.replaceChildren(h('span', failed ? { class: 'error', role: 'alert' } : {}, text));
    if (!failed) announce(text);
  };
  const act = (type) => async (event) => {
    const button = event.currentTarget;
    button.disabled = true;
    try {
      await runAction(server, type, report, signal);
    } catch (e) {
      report(`${label(type)} ${server.name} failed: ${e.message}`, true);
    } finally {
      button.disabled = false;
      changed();
    }
  };
  const remove = async () => {
    if (!confirm(`Delete ${server.name}? Its world and files are removed for good.`)) return;
    try {
      await api('DELETE', `/v1/servers/${server.id}`);
      report(`Deleting ${server.name}…`, false);
      deleted();
    } catch (e) {
      report(`Delete ${server.name} failed: ${e.message}`, true);
      changed();
    }
  };
  return h(
    'div',
    { class: 'buttons', role: 'group', 'aria-label': `Actions for ${server.name}` },
    POWER.map((type) =>
      h('button', { type: 'button', class: type === 'kill' ? 'danger' : '', 'aria-label': `${label(type)} ${server.name}`, onclick: act(type) }, label(type)),
    ),
    h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${server.name}`, onclick: remove }, 'Delete'),
  );
}
