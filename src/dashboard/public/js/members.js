// A server's members (…/members), on its owner's page only: invite an account by email with checkboxes for the
// permissions, change them, remove a member. A member is `invited` until they first use the server: the service
// never says whether an account with that email exists (the spec's Members tag).
import { api, listAll, newKey } from './api.js';
import { h, fill, announce, errorBox, busyWhile, field, showFieldErrors, table } from './dom.js';

/** The permissions, in the spec's order (MemberPermission), with what each lets a member do. */
export const PERMISSIONS = [
  ['console', 'Console', 'read it and send commands'],
  ['power', 'Power', 'start, stop, restart, kill'],
  ['settings', 'Settings', 'the game settings'],
  ['players', 'Players', 'who is online, the player lists'],
  ['backups', 'Backups', 'make, download, restore'],
  ['alerts', 'Alerts', 'the alert rules'],
  ['files', 'Files', 'the server\'s own files: upload, download, edit, delete'],
];

/** A group of permission checkboxes (`prefix` keeps ids unique on the page); `read()` gives the checked ones. */
function permissionBoxes(prefix, checked, label) {
  const boxes = PERMISSIONS.map(([name, title, help]) => {
    const box = h('input', { type: 'checkbox', id: `${prefix}-${name}`, name, value: name, checked: checked.includes(name) });
    return { name, el: h('label', { class: 'check', for: box.id, title: help }, box, ` ${title}`), box };
  });
  return {
    el: h('fieldset', { class: 'permissions' }, h('legend', {}, label), boxes.map((b) => b.el)),
    read: () => boxes.filter((b) => b.box.checked).map((b) => b.name),
  };
}

export function membersSection(server) {
  const list = h('div');
  const outcome = h('div', { class: 'outcome' });
  const say = (text, failed = false) => {
    outcome.replaceChildren(failed ? errorBox(text) : h('span', {}, text));
    announce(text, failed);
  };
  const email = h('input', { id: 'member-email', name: 'email', type: 'email', required: true, maxlength: 254, autocomplete: 'off' });
  const chosen = permissionBoxes('invite', ['console'], 'They may, besides reading the server');
  const form = h('form', { class: 'card', 'aria-labelledby': 'member-new', novalidate: true },
    h('h3', { id: 'member-new' }, 'Invite someone'),
    field('Email', email, { help: 'Their account (now or once they make one) gets access; nobody is told whether it exists yet.' }),
    chosen.el,
    h('button', { type: 'submit' }, 'Invite'));
  const controls = new Map([['/body/email', email]]);

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    showFieldErrors(form, controls, []);
    try {
      const made = await api('POST', `/v1/servers/${server.id}/members`, { email: email.value.trim(), permissions: chosen.read() }, { 'Idempotency-Key': newKey() });
      email.value = '';
      say(`Invited ${made.email}.`);
      await refresh();
    } catch (e) {
      const left = showFieldErrors(form, controls, e.problem?.errors ?? []);
      if (left.length || !e.problem?.errors?.length) say(`Could not invite: ${e.message}`, true);
    }
  });

  const act = (fn) => busyWhile(fn, (message) => say(message, true), () => refresh());
  const row = (m) => {
    const boxes = permissionBoxes(`member-${m.id}`, m.permissions, `What ${m.email} may do`);
    const save = act(async () => {
      await api('PATCH', `/v1/servers/${server.id}/members/${m.id}`, { permissions: boxes.read() });
      say(`Changed what ${m.email} may do.`);
    });
    const remove = act(async () => {
      if (!confirm(`Remove ${m.email}? They lose access to ${server.name} at once.`)) return;
      await api('DELETE', `/v1/servers/${server.id}/members/${m.id}`);
      say(`Removed ${m.email}.`);
    });
    return [
      m.email,
      h('span', { class: `badge member-${m.status} member-status` }, m.status),
      boxes.el,
      h('div', { class: 'buttons' },
        h('button', { type: 'button', 'aria-label': `Save what ${m.email} may do`, onclick: save }, 'Save'),
        h('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${m.email}`, onclick: remove }, 'Remove')),
    ];
  };

  let shown = '';
  async function refresh() {
    const members = await listAll(`/v1/servers/${server.id}/members`);
    const key = JSON.stringify(members.map((m) => [m.id, m.status, m.permissions]));
    if (key === shown) return; // unchanged: keep the checkboxes as the owner is setting them
    shown = key;
    fill(list, members.length
      ? table(`Members of ${server.name}`, ['Email', 'Status', 'Permissions', ''], members.map(row), (i) => ({ 'data-member-id': members[i].id }))
      : h('p', { class: 'muted' }, 'Not shared with anyone.'));
  }
  // Read once, and after the owner's own changes: no event says a member changed (docs/dashboard-budget.md).
  refresh().catch((e) => say(`Could not list the members: ${e.message}`, true));

  return h('section', { 'aria-labelledby': 'members-title' },
    h('h2', { id: 'members-title' }, 'Members'),
    h('p', { class: 'muted' }, 'People you share this server with. Every member may see it, its metrics and its schedules.'),
    form, outcome, list);
}
