// A server's backups, through /v1/servers/{id}/backups: make one, download its archive, restore it (an action,
// after a confirmation) or delete it. The list is read again every few seconds while a backup is being made.
import { api, download, listAll } from './api.js';
import { h, fill, announce, errorBox, every, busyWhile, fmtBytes, fmtTime } from './dom.js';
import { field } from './servers.js';

const REFRESH_MS = 3000;
const POLL_MS = 1000;

export function backupsSection(server, signal) {
  const list = h('div');
  const outcome = h('div');
  const name = h('input', { id: 'backup-name', name: 'name', maxlength: 100, autocomplete: 'off' });
  const form = h('form', { class: 'row' }, field('Backup name (optional)', name), h('button', { type: 'submit' }, 'Back up now'));
  // Said before the click: whether a backup of a running server disconnects its players (VersionDetail.backup).
  const players = h('p', { class: 'muted backup-players' });
  api('GET', `/v1/versions/${server.version}`).then((v) => {
    if (v.backup) players.textContent = v.backup.consistency === 'live'
      ? 'Players stay connected while a backup is made.'
      : 'A running server is stopped while a backup is made: its players are disconnected.';
  }, () => undefined);
  const say = (text, failed = false) => {
    outcome.replaceChildren(failed ? errorBox(text) : h('span', {}, text));
    if (!failed) announce(text);
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await api('POST', `/v1/servers/${server.id}/backups`, name.value ? { name: name.value } : {});
      name.value = '';
      say(`Backing up ${server.name}…`);
      await refresh();
    } catch (e) {
      say(`Could not back up: ${e.message}`, true);
    }
  });

  const act = (fn) => busyWhile(fn, (message) => say(message, true), () => refresh());

  const restore = (b) => act(async () => {
    if (!confirm(`Restore “${label(b)}”? The server's world is replaced by the backup's; a running server is stopped and started again.`)) return;
    let action = await api('POST', `/v1/servers/${server.id}/actions`, { type: 'restore', backup_id: b.id });
    say(`Restoring ${label(b)}…`);
    while (action.status === 'pending' || action.status === 'running') {
      if (signal.aborted) return;
      await new Promise((r) => setTimeout(r, POLL_MS));
      action = await api('GET', `/v1/servers/${server.id}/actions/${action.id}`);
    }
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
    say(`Downloading ${label(b)}.`);
  });

  function table(backups) {
    if (!backups.length) return h('p', { class: 'muted' }, 'No backups yet.');
    return h('table', {},
      h('caption', { class: 'sr-only' }, `Backups of ${server.name}`),
      h('thead', {}, h('tr', {}, ['Backup', 'Made', 'Status', 'Size', ''].map((c) =>
        h('th', { scope: 'col' }, c || h('span', { class: 'sr-only' }, 'Actions'))))),
      h('tbody', {}, backups.map((b) => h('tr', { 'data-backup-id': b.id },
        h('th', { scope: 'row' }, label(b)),
        h('td', {}, fmtTime(b.created_at)),
        h('td', { class: 'backup-status' }, b.status === 'failed' ? `failed: ${b.error ?? ''}` : b.status),
        h('td', {}, b.size_bytes === null ? '—' : fmtBytes(b.size_bytes)),
        h('td', { class: 'row' },
          b.status === 'ready' ? h('button', { type: 'button', 'aria-label': `Download ${label(b)}`, onclick: save(b) }, 'Download') : null,
          b.status === 'ready' ? h('button', { type: 'button', 'aria-label': `Restore ${label(b)}`, onclick: restore(b) }, 'Restore') : null,
          b.status !== 'pending' ? h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${label(b)}`, onclick: remove(b) }, 'Delete') : null)))));
  }

  let pending = true;
  async function refresh() {
    const backups = await listAll(`/v1/servers/${server.id}/backups`);
    const was = outcome.textContent.startsWith('Backing up') && pending;
    pending = backups.some((b) => b.status === 'pending');
    if (was && !pending) say(`The backup of ${server.name} ended: see its status below.`);
    fill(list, table(backups.reverse())); // newest first
  }
  every(REFRESH_MS, signal, () => (pending ? refresh() : Promise.resolve()));
  refresh().catch((e) => say(`Could not list backups: ${e.message}`, true));

  return h('section', { 'aria-labelledby': 'backups-title' }, h('h2', { id: 'backups-title' }, 'Backups'), form, players, outcome, list);
}

const label = (b) => b.name ?? b.id;
