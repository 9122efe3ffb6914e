// "Restart now" after a settings change that reaches a running game only at its next start (ServerSettings
// .restart_pending; SettingDefinition.restart_required). Offered to whoever may restart (the `power` permission)
// while the game runs; a restart asks first when players are online (actions.js confirmAction), and the offer goes
// once it is done. Without `power`, the page says whom to ask.
import { h } from './dom.js';
import { confirmAction, runAction } from './actions.js';

/**
 * Fills `el` with what waits for a restart: `names` (the settings' titles), the server as last read (`latest()`),
 * and a Restart now button when it runs and the reader may restart it. `restarted()` after a restart succeeded.
 */
export function offerRestart(el, names, latest, signal, restarted) {
  if (!names.length) return void el.replaceChildren();
  const s = latest();
  const what = `${names.join(', ')} ${names.length === 1 ? 'waits' : 'wait'} for the next start.`;
  const note = h('span', { id: 'restart-pending' }, what);
  if (s.state !== 'running') return void el.replaceChildren(h('div', { class: 'restart-offer' }, note));
  if (!s.access.permissions.includes('power')) {
    const who = s.access.owner_email ?? 'the owner';
    return void el.replaceChildren(h('div', { class: 'restart-offer' }, note, h('span', { class: 'muted' }, `Ask ${who} to restart it, or for the power permission to restart it yourself.`)));
  }
  const out = h('span', { role: 'status' });
  const button = h('button', { type: 'button', id: 'restart-now' }, 'Restart now');
  button.addEventListener('click', async () => {
    const server = latest();
    if (!(await confirmAction(server, 'restart'))) return;
    button.disabled = true;
    try {
      const action = await runAction(server, 'restart', (text) => (out.textContent = text), signal);
      if (action.status === 'succeeded') {
        el.replaceChildren();
        restarted();
      }
    } catch (e) {
      out.textContent = `Could not restart ${server.name}: ${e.message}`;
    } finally {
      button.disabled = false;
    }
  });
  el.replaceChildren(h('div', { class: 'restart-offer' }, note, button, out));
}
