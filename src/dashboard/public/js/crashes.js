// A server's crash history (GET …/crashes, the spec's listServerCrashes: newest first, at most 100), for readers
// with the `console` permission: when, why in words, the exit code or signal, and the console lines before it,
// each crash opened on its own. Read once per navigation and again when the account's events say this server
// crashed (server.crashed; docs/dashboard-budget.md): nothing on a timer.
import { api } from './api.js';
import { h, fill, errorBox } from './dom.js';
import { plural, timeEl } from './format.js';
import { whenChanged } from './live.js';
import { withoutClock } from './game-text.js';

/** Crash.reason in words; a reason this page does not know yet is shown as the service sent it. */
const REASONS = {
  exited: 'The game exited by itself',
  out_of_memory: 'It ran out of memory: the system ended it for using more than its plan has',
  memory_limit: 'It used more memory than its plan has, so the service ended it',
  start_timeout: 'It did not become ready in time',
  port_in_use: 'Its port was taken by another program',
  spawn_failed: 'The game could not be launched',
  install_failed: 'Its files could not be prepared',
  disk_quota_exceeded: 'It went over its plan\'s disk space, so the service stopped it',
};

export function reasonText(reason) {
  return REASONS[reason] ?? `It stopped (${reason})`;
}

/** "exit code 1", "signal SIGKILL", or '' when neither is known. */
function howItEnded(c) {
  if (c.signal) return `signal ${c.signal}`;
  if (c.exit_code !== null) return `exit code ${c.exit_code}`;
  return '';
}

function crashItem(c) {
  const how = howItEnded(c);
  const lines = c.last_lines.length
    ? h('pre', { class: 'crash-lines', tabindex: 0 }, c.last_lines.map(withoutClock).join('\n'))
    : h('p', { class: 'muted' }, 'The console had no lines before it.');
  return h('li', { 'data-crash-id': c.id },
    h('details', {},
      h('summary', {}, timeEl(c.at), ' ', h('span', { class: 'crash-reason' }, `${reasonText(c.reason)}${how ? ` (${how})` : ''}.`)),
      h('p', { class: 'muted' }, c.last_lines.length ? `The last ${plural(c.last_lines.length, 'console line')} before it:` : null),
      lines));
}

export function crashesSection(server, signal) {
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  let shown = null; // the ids last drawn ('' for none)
  async function refresh() {
    const { data } = await api('GET', `/v1/servers/${server.id}/crashes`);
    const key = data.map((c) => c.id).join();
    if (key === shown) return; // unchanged: keep what the reader opened
    shown = key;
    fill(body, data.length
      ? [h('p', { class: 'muted' }, `${plural(data.length, 'crash', 'crashes')}, newest first. Open one for the console lines before it.`), h('ul', { class: 'crashes' }, data.map(crashItem))]
      : h('p', { class: 'muted' }, 'No crashes: the game never stopped without being asked to.'));
  }
  const failed = (e) => fill(body, errorBox(`Could not list the crashes: ${e.message}`));
  whenChanged(signal, (e) => e.server_id === server.id && e.type === 'server.crashed', refresh, { fallbackMs: 120_000, failed });
  refresh().catch(failed);
  return h('section', { 'aria-labelledby': 'crashes-title' }, h('h2', { id: 'crashes-title' }, 'Crashes'), body);
}
