// The file manager's SFTP panel: how to reach the same files with FileZilla, WinSCP or OpenSSH's `sftp` (the spec's
// SSH keys tag, README "SFTP"), as getServerSftp answers it (GET /v1/servers/{id}/sftp, once per navigation): the
// host (PUBLIC_URL's), the operator's SFTP_PORT, the username (the server's id, a dot, the account's email) and the
// command line; `404 sftp_disabled` where the operator runs none. The password is an API token with the `files`
// scope, or an SSH key (Settings → SSH keys) instead.
import { api } from './api.js';
import { h, announce, errorBox } from './dom.js';

/** Puts `text` on the clipboard; where the Clipboard API is missing (not a secure context), selects it instead. */
async function copy(text, what, input) {
  try {
    await navigator.clipboard.writeText(text);
    announce(`Copied the ${what}.`);
  } catch {
    input.focus();
    input.select();
    announce(`Selected the ${what}: press Ctrl+C (⌘C) to copy it.`);
  }
}

/** One read-only value with its own copy button: [label] [value] [Copy]. */
function copyRow(id, label, value) {
  const input = h('input', { id, readonly: true, value, class: 'copy-value', spellcheck: 'false', autocomplete: 'off' });
  const button = h('button', { type: 'button', class: 'quiet', 'aria-label': `Copy the ${label.toLowerCase()}` }, 'Copy');
  button.addEventListener('click', () => copy(value, label.toLowerCase(), input));
  return h('div', { class: 'copy-row' }, h('label', { for: id }, label), h('div', { class: 'copy-field' }, input, button));
}

export function sftpSection(server) {
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  api('GET', `/v1/servers/${server.id}/sftp`).then((access) => {
    body.replaceChildren(
      h('p', {}, 'Reach these files with FileZilla, WinSCP or any SFTP client, with the same checks as here.'),
      copyRow('sftp-host', 'Host', access.host),
      copyRow('sftp-port', 'Port', String(access.port)),
      copyRow('sftp-user', 'Username', access.username),
      copyRow('sftp-command', 'Command line', access.command),
      h('p', { class: 'help' }, 'Password: an API token holding the ',
        h('code', {}, 'files'), ' scope (make one under ', h('a', { href: '#/settings/tokens' }, 'API tokens'),
        '), or log in with an SSH key added under ', h('a', { href: '#/settings/ssh-keys' }, 'SSH keys'), ' instead.'));
  }, (e) => {
    body.replaceChildren(e.problem?.code === 'sftp_disabled'
      ? h('p', { id: 'sftp-off' }, 'This service runs no SFTP server: its operator turned it off. Use the file manager above.')
      : errorBox(`Could not read the SFTP details: ${e.message}`));
  });
  return h('section', { class: 'card sftp', 'aria-labelledby': 'sftp-title' }, h('h2', { id: 'sftp-title' }, 'SFTP'), body);
}
