// Settings → SSH keys, through /v1/ssh-keys (the spec's SSH keys tag): the public keys that log in to SFTP as this
// account (each server's files page shows the host, port and username). The list is read once per navigation
// (docs/dashboard-budget.md); adding and deleting change it from the service's answer, without reading it again.
import { api, listAll } from './api.js';
import { h, fill, announce, errorBox, field, showFieldErrors, table } from './dom.js';
import { timeEl } from './format.js';

/** What a key line looks like (`type base64 [comment]`); which types the service takes, it says itself. */
const KEY_LINE = /^[a-z][a-z0-9@.-]* AAAA[A-Za-z0-9+/]+=*(\s|$)/;

export async function sshKeysView(main) {
  const listBox = h('div');
  const outcome = h('div', { role: 'status' });
  let keys = [];

  const render = () => fill(listBox, keys.length ? keyTable() : h('p', { class: 'muted', id: 'no-ssh-keys' }, 'No SSH keys yet.'));

  function keyTable() {
    return table('Your SSH keys', ['Name', 'Type', 'Fingerprint', 'Added', 'Last used', ''], keys.map((k) => [
      k.name,
      k.type,
      h('code', { class: 'fingerprint' }, k.fingerprint),
      timeEl(k.created_at),
      timeEl(k.last_used_at),
      h('button', { type: 'button', class: 'danger', 'aria-label': `Delete the key ${k.name}`, onclick: (ev) => remove(k, ev.currentTarget) }, 'Delete'),
    ]), (i) => ({ 'data-key-id': keys[i].id }));
  }

  async function remove(k, button) {
    if (!confirm(`Delete the SSH key “${k.name}” (${k.fingerprint})? SFTP sessions logged in with it end at once.`)) return;
    button.disabled = true;
    try {
      await api('DELETE', `/v1/ssh-keys/${k.id}`);
    } catch (e) {
      button.disabled = false;
      // Gone already (deleted in another tab): the list is as the service has it.
      if (e.problem?.code !== 'ssh_key_not_found') return void outcome.replaceChildren(errorBox(`Could not delete ${k.name}: ${e.message}`));
    }
    keys = keys.filter((x) => x.id !== k.id);
    render();
    outcome.replaceChildren();
    announce(`Deleted the key ${k.name}: it no longer logs in.`);
    document.getElementById('ssh-key-list').focus();
  }

  const form = addForm((key) => {
    keys.push(key);
    render();
    announce(`Added the key ${key.name}.`);
  });
  fill(
    main,
    h('h1', {}, 'SSH keys'),
    h('p', { class: 'muted' }, 'A key added here logs in to SFTP as you, on every server whose files you may use, without a password. Each server\'s Files page shows the host, port and username.'),
    form,
    h('section', { 'aria-labelledby': 'ssh-key-list' }, h('h2', { id: 'ssh-key-list', tabindex: -1 }, 'Your keys'), outcome, listBox),
  );
  keys = await listAll('/v1/ssh-keys');
  render();
}

/** Words for why a key line was refused, at the field. */
function refusal(e) {
  if (e.problem?.code === 'ssh_key_exists') return 'This key is on your account already (see the list below).';
  const field = (e.problem?.errors ?? []).find((x) => x.pointer === '/body/public_key');
  return field?.detail ?? e.message;
}

function addForm(added) {
  const keyLine = h('textarea', { id: 'ssh-key-line', name: 'public_key', rows: 3, required: true, maxlength: 2000, spellcheck: 'false', autocomplete: 'off', class: 'key-line' });
  const name = h('input', { id: 'ssh-key-name', name: 'name', maxlength: 64, autocomplete: 'off' });
  const error = h('div');
  const controls = new Map([['/body/public_key', keyLine], ['/body/name', name]]);
  const form = h('form', { class: 'card', 'aria-labelledby': 'add-ssh-key', novalidate: true },
    h('h2', { id: 'add-ssh-key' }, 'Add a key'),
    field('Public key', keyLine, { help: 'Paste one line of your .pub file, such as ~/.ssh/id_ed25519.pub: “ssh-ed25519 AAAA… you@laptop”. Never the private key.' }),
    field('Name (optional)', name, { help: 'What the key is for; the key line\'s comment when left empty.' }),
    h('button', { type: 'submit' }, 'Add key'),
    error);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.replaceChildren();
    const line = keyLine.value.trim();
    // Said here, before anything is sent: a private key pasted by mistake never leaves the browser.
    const local = !line ? 'Paste a public key line.'
      : /PRIVATE KEY/.test(line) ? 'This is a private key: keep it secret. Paste the line of the matching .pub file instead.'
        : !KEY_LINE.test(line) ? 'This is not a public key line: it starts with its type, such as “ssh-ed25519 AAAA…”.' : null;
    if (local) return void showFieldErrors(form, controls, [{ pointer: '/body/public_key', detail: local }]);
    showFieldErrors(form, controls, []);
    try {
      const key = await api('POST', '/v1/ssh-keys', { public_key: line, ...(name.value.trim() ? { name: name.value.trim() } : {}) });
      form.reset();
      added(key);
    } catch (e) {
      const left = e.status === 400 || e.problem?.code === 'ssh_key_exists'
        ? showFieldErrors(form, controls, [{ pointer: '/body/public_key', detail: refusal(e) }]) : [null];
      if (left.length) error.replaceChildren(errorBox(`The key was not added: ${e.message}`));
    }
  });
  return form;
}
