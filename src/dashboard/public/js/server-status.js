// "In the server list": what a player's client shows for this server before joining, asked of the game itself
// (getServerStatus, the Minecraft Java Edition Server List Ping): its icon, its MOTD, its version and players.
// Only for a game that answers the ping, and only while it runs: read when the page opens on a running server,
// when the server starts running again (update(), from the page's server.* re-read), and on the customer's
// "Ask again" (docs/dashboard-budget.md). A game without the ping shows no section.
import { api } from './api.js';
import { h, fill, errorBox } from './dom.js';
import { plural } from './format.js';

/** The game whose servers answer the ping (ServerStatus; src/http/handlers/status.ts). */
const PINGED_GAME = 'Minecraft Java Edition';

function preview(st) {
  const icon = st.icon
    ? h('img', { src: st.icon, alt: 'Server icon', width: 64, height: 64 })
    : h('div', { class: 'no-icon', role: 'img', 'aria-label': 'No server icon' }, 'no icon');
  const meta = [st.version_name, `${st.online}/${st.max} ${st.max === 1 ? 'player' : 'players'}`, `answered in ${plural(st.latency_ms, 'ms', 'ms')}`].filter(Boolean).join(' · ');
  return h('div', { class: 'server-preview', id: 'server-preview' },
    icon,
    h('div', {}, h('p', { class: 'motd', id: 'server-motd' }, st.motd || ' '), h('p', { class: 'meta' }, meta)));
}

/** The section, or null for a game without the ping; update(server) with each newer read of the server. */
export function statusSection(server, game) {
  if (game !== PINGED_GAME) return null;
  const body = h('div');
  const again = h('button', { type: 'button', class: 'quiet' }, 'Ask again');
  const el = h('section', { 'aria-labelledby': 'preview-title' },
    h('h2', { id: 'preview-title' }, 'In the server list'),
    h('p', { class: 'muted' }, 'What players see in their game\'s server list, as the game answers it now.'),
    body, again);
  let state = null;
  let asking = false;
  async function ask() {
    if (asking) return;
    asking = true;
    again.disabled = true;
    try {
      fill(body, preview(await api('GET', `/v1/servers/${server.id}/status`)));
    } catch (e) {
      fill(body, errorBox(`The game did not answer: ${e.message}`));
    } finally {
      asking = false;
      again.disabled = state !== 'running';
    }
  }
  again.addEventListener('click', () => void ask());
  const update = (s) => {
    const was = state;
    state = s.state;
    again.disabled = state !== 'running' || asking;
    if (state === 'running' && was !== 'running') void ask();
    else if (state !== 'running') fill(body, h('p', { class: 'muted', id: 'server-preview-off' }, `Shown while the server runs; it is ${state} now.`));
  };
  update(server);
  return { el, update };
}
