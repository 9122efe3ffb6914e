// A server's backups, through /v1/servers/{id}/backups: make one, download its archive, restore it (an action,
// after a confirmation) or delete it. The list is read again when the account's events say a backup of this
// server changed (live.js: backup.created, ready, failed, deleted), and a backup's end is said with its outcome.
// Whether a backup of a running game disconnects its players is the version's (VersionDetail.backup.consistency,
// the spec's createServerBackup): `stop` stops the game while the archive is made, so the page asks first when
// players are online; `live` keeps them connected, so there is nothing to ask (issue 38 §2).
import { api, download, listAll } from './api.js';
import { h, fill, announce, errorBox, busyWhile, field, table } from './dom.js';
import { fmtBytes, timeEl } from './format.js';
import { finished, onlinePlayers, whoIsOnline } from './actions.js';
import { whenChanged } from './live.js';

export function backupsSection(server, signal, latest = () => server) {
  const list = h('div');
  const outcome = h('div', { class: 'outcome' });
  const name = h('input', { id: 'backup-name', name: 'name', maxlength: 100, autocomplete: 'off' });
  const form = h('form', { class: 'row' }, field('Backup name (optional)', name), h('button', { type: 'submit' }, 'Back up now'));
  // Said before the click: whether a backup of a running server disconnects its players (VersionDetail.backup).
  const players = h('p', { class: 'muted backup-players' });
  let consistency = null; // the version's, once read; until then (or if unknown) the page asks as for `stop`
  api('GET', `/v1/versions/${server.version}`).then((v) => {
    consistency = v.backup?.consistency ?? null;
    if (v.backup) players.textContent = v.backup.consistency === 'live'
      ? 'Players stay connected while a backup is made.'
      : 'A running server is stopped while a backup is made: its players are disconnected.';
  }, () => undefined);
  const say = (text, failed = false) => {
    outcome.replaceChildren(failed ? errorBox(text) : h('span', {}, text));
    announce(text, failed);
  };
  let waiting = new Set(); // ids of backups this page started and has not told the end of yet

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const s = latest();
    const online = consistency === 'live' ? '' : whoIsOnline(await onlinePlayers(s));
    if (online && !confirm(`Back up ${s.name} now? The game stops while the archive is made: ${online}; they are disconnected until it is back.`)) return;
    try {
      const made = await api('POST', `/v1/servers/${server.id}/backups`, name.value ? { name: name.value } : {});
      waiting.add(made.id);
      name.value = '';
      say(`Backing up ${s.name}…`);
      await refresh();
    } catch (e) {
      say(`Could not back up: ${e.message}`, true);
    }
  });

  const act = (fn) => busyWhile(fn, (message) => say(message, true), () => refresh());

  const restore = (b) => act(async () => {
    if (!confirm(`Restore “${label(b)}”? The server's world is replaced by the backup's; a running server is stopped and started again.`)) return;
    say(`Restoring ${label(b)}…`);
    const action = await finished(server.id, () => api('POST', `/v1/servers/${server.id}/actions`, { type: 'restore', backup_id: b.id }), signal);
    if (signal.aborted) return;
    if (action.status === 'failed') say(`Restoring ${label(b)} failed: ${action.error?.detail ?? 'no reason given'}`, true);
    else say(`Restored ${label(b)}.`);
  });

  const remove = (b) => act(async () => {
    if (!confirm(`Delete the backup “${label(b)}”? Its archive is gone for good.`)) return;
    await api('DELETE', `/v1/servers/${server.id}/backups/${b.id}`);
    say(`Deleted ${label(b)}.`);
  });

  const save = (b) => act(async () => {
    await download(`/v1/servers/${server.id}/backups/${b.id}/archive`, `${b.id}.tar.gz`);
    say(`Downloading ${label(b)} (${fmtBytes(b.size_bytes)}).`);
  });

  function render(backups) {
    if (!backups.length) return h('p', { class: 'muted' }, 'No backups yet.');
    return table(`Backups of ${server.name}`, ['Backup', 'Made', 'Status', 'Size', ''], backups.map((b) => [
      label(b),
      timeEl(b.created_at),
      h('span', { class: 'backup-status' }, b.status === 'failed' ? `failed: ${b.error ?? ''}` : b.status),
      h('span', { class: 'backup-size' }, b.size_bytes === null ? '—' : fmtBytes(b.size_bytes)),
      h('span', { class: 'buttons' },
        b.status === 'ready' ? h('button', { type: 'button', 'aria-label': `Download ${label(b)}`, onclick: save(b) }, 'Download') : null,
        b.status === 'ready' ? h('button', { type: 'button', 'aria-label': `Restore ${label(b)}`, onclick: restore(b) }, 'Restore') : null,
        b.status !== 'pending' ? h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${label(b)}`, onclick: remove(b) }, 'Delete') : null),
    ]), (i) => ({ 'data-backup-id': backups[i].id }));
  }

  async function refresh() {
    const backups = await listAll(`/v1/servers/${server.id}/backups`);
    for (const b of backups) {
      if (!waiting.has(b.id) || b.status === 'pending') continue;
      waiting.delete(b.id);
      if (b.status === 'ready') say(`The backup ${quoted(b)} of ${server.name} is ready (${fmtBytes(b.size_bytes)}).`);
      else say(`The backup ${quoted(b)} of ${server.name} failed: ${b.error ?? 'no reason given'}`, true);
    }
    waiting = new Set([...waiting].filter((id) => backups.some((b) => b.id === id)));
    fill(list, render(backups.reverse())); // newest first
  }
  whenChanged(signal, (e) => e.server_id === server.id && e.type.startsWith('backup.'), refresh, {
    fallbackMs: 120_000, failed: (e) => say(`Could not list backups: ${e.message}`, true),
  });
  refresh().catch((e) => say(`Could not list backups: ${e.message}`, true));

  return h('section', { 'aria-labelledby': 'backups-title' }, h('h2', { id: 'backups-title' }, 'Backups'), form, players, outcome, list);
}

const label = (b) => b.name ?? b.id;
const quoted = (b) => (b.name ? `“${b.name}”` : b.id);
