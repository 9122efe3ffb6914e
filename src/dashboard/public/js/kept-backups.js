// The account's kept backups (#/backups; the spec's listKeptBackups, getKeptBackupArchive, deleteKeptBackup): the
// backups of servers deleted with "keep backups" (delete-server.js). Each can be downloaded, deleted, or restored
// into a server of the same version: a new one made for it (createServer, then a `restore` action once it is
// installed), or one of the customer's own (its world is replaced). Read once per navigation and after the
// customer's own changes (docs/dashboard-budget.md); no event says a kept backup changed.
import { api, download, listAll, newKey } from './api.js';
import { h, fill, announce, errorBox, busyWhile, field, showFieldErrors, table } from './dom.js';
import { fmtBytes, timeEl } from './format.js';
import { catalog, planFigures, versionName } from './catalog.js';
import { finished } from './actions.js';
import { isLive, recorder } from './live.js';
import { sayAs } from './problems.js';

const label = (b) => b.name ?? b.id;

export async function keptBackupsView(main, signal) {
  const cat = await catalog();
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const outcome = h('div', { class: 'outcome' });
  const restoreBox = h('div');
  const say = (text, failed = false, extra = null) => {
    outcome.replaceChildren(failed ? errorBox(text) : h('p', {}, text, extra ? [' ', extra] : null));
    announce(text, failed);
  };
  fill(main,
    h('h1', {}, 'Kept backups'),
    h('p', { class: 'muted' }, 'Backups of servers you deleted and chose to keep. Download one, restore it into a new server or one of yours of the same game version, or delete it.'),
    outcome, list, restoreBox);

  let servers = [];
  const act = (fn) => busyWhile(fn, (m) => say(m, true), () => refresh());
  const remove = (b) => act(async () => {
    if (!confirm(`Delete the kept backup “${label(b)}” of ${b.server_name}? Its archive is gone for good.`)) return;
    await api('DELETE', `/v1/backups/${b.id}`);
    say(`Deleted ${label(b)}.`);
  });
  const save = (b) => act(async () => {
    await download(`/v1/backups/${b.id}/archive`, `${b.id}.tar.gz`);
    say(`Downloading ${label(b)} (${fmtBytes(b.size_bytes)}).`);
  });
  const open = (b) => () => {
    fill(restoreBox, restoreForm(cat, b, servers.filter((s) => s.version === b.version && s.access.role === 'owner'), signal, say, () => fill(restoreBox)));
    restoreBox.querySelector('select, input')?.focus();
  };

  async function refresh() {
    const [kept, mine] = await Promise.all([listAll('/v1/backups'), listAll('/v1/servers')]);
    servers = mine;
    fill(list, kept.length
      ? table('Kept backups', ['Backup', 'From server', 'Game', 'Made', 'Size', ''], kept.reverse().map((b) => [
        label(b),
        b.server_name,
        versionName(cat, b.version),
        timeEl(b.created_at),
        fmtBytes(b.size_bytes),
        h('span', { class: 'buttons' },
          h('button', { type: 'button', 'aria-label': `Download ${label(b)}`, onclick: save(b) }, 'Download'),
          h('button', { type: 'button', 'aria-label': `Restore ${label(b)}…`, onclick: open(b) }, 'Restore…'),
          h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${label(b)}`, onclick: remove(b) }, 'Delete')),
      ]), (i) => ({ 'data-backup-id': kept[i].id }))
      : h('p', { class: 'muted' }, 'No kept backups. When you delete a server you can keep its backups here.'));
  }
  await refresh();
}

/** Resolves with the server once it left `installing` (it is then `stopped`, or `crashed` if its install failed). */
async function installed(id, events) {
  for (;;) {
    const s = await api('GET', `/v1/servers/${id}`);
    if (s.state !== 'installing') return s;
    await events.next((e) => e.server_id === id && e.type.startsWith('server.'), isLive() ? 30_000 : 5000);
  }
}

/** "Restore “x”": into a new server (name, plan) or one of `targets`; `done()` closes the form. */
function restoreForm(cat, b, targets, signal, say, done) {
  const error = h('div');
  const into = h('select', { id: 'restore-into', name: 'into' },
    h('option', { value: '' }, 'A new server'),
    targets.map((s) => h('option', { value: s.id }, `${s.name} (its world is replaced)`)));
  const name = h('input', { id: 'restore-name', name: 'name', required: true, maxlength: 64, autocomplete: 'off', value: `${b.server_name} (restored)`.slice(0, 64) });
  sayAs(name, { label: 'the name', empty: 'Give the new server a name.', maxLength: 'A server name can be at most 64 characters long.' });
  const plan = h('select', { id: 'restore-plan', name: 'plan' }, cat.plans.map((p) => h('option', { value: p.id }, `${p.name}: ${planFigures(p)}`)));
  const fresh = h('div', { class: 'row' }, field('Name of the new server', name), field('Plan', plan));
  const submit = h('button', { type: 'submit' }, 'Restore');
  const form = h('form', { class: 'card', 'aria-labelledby': 'restore-title', novalidate: true },
    h('h2', { id: 'restore-title' }, `Restore “${label(b)}”`),
    h('p', { class: 'muted' }, `A backup of ${b.server_name}, ${versionName(cat, b.version)}: it goes into a server of that version.`),
    field('Restore into', into), fresh,
    h('div', { class: 'buttons' }, submit, h('button', { type: 'button', onclick: done }, 'Cancel')), error);
  into.addEventListener('change', () => (fresh.hidden = into.value !== ''));
  const controls = new Map([['/body/name', name], ['/body/plan', plan]]);

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.replaceChildren();
    showFieldErrors(form, controls, []);
    const target = targets.find((s) => s.id === into.value);
    if (target && !confirm(`Restore “${label(b)}” into ${target.name}? Its world is replaced by the backup's; if it runs, it is stopped and started again.`)) return;
    submit.disabled = true;
    const events = recorder(signal);
    try {
      let server = target;
      if (!server) {
        const made = await api('POST', '/v1/servers', { name: name.value.trim(), plan: plan.value, version: b.version }, { 'Idempotency-Key': newKey() });
        say(`Created ${made.name}; restoring “${label(b)}” once its files are ready…`);
        server = await installed(made.id, events);
        if (server.state !== 'stopped') throw new Error(`${server.name} is ${server.state}, not ready for a restore.`);
      } else say(`Restoring “${label(b)}” into ${server.name}…`);
      const action = await finished(server.id, () => api('POST', `/v1/servers/${server.id}/actions`, { type: 'restore', backup_id: b.id }), signal);
      if (signal.aborted) return;
      const link = h('a', { href: `#/servers/${server.id}` }, `Open ${server.name}`);
      if (action.status === 'failed') say(`Restoring “${label(b)}” into ${server.name} failed: ${action.error?.detail ?? 'no reason given'}`, true);
      else say(`Restored “${label(b)}” into ${server.name}.`, false, link);
      done();
    } catch (e) {
      const left = showFieldErrors(form, controls, e.problem?.errors ?? []);
      if (left.length || !e.problem?.errors?.length) error.replaceChildren(errorBox(`Not restored: ${e.message}`));
    } finally {
      events.stop();
      submit.disabled = false;
    }
  });
  return form;
}
