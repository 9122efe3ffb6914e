// Deleting a server (deleteServer), asked in a dialog rather than confirm(): confirm() cannot offer the choice the
// API has, to keep the server's `ready` backups with the account (`keep_backups=true`, listKeptBackups) to download
// or restore into another server later (kept-backups.js, #/backups). The account keeps at most
// KEPT_BACKUPS_PER_USER of them: past it the delete is refused (`403 quota_exceeded`) and nothing is deleted.
import { h } from './dom.js';

/**
 * Asks whether to delete `server`, and whether to keep its backups. Resolves with { keepBackups } to go ahead,
 * or null when the customer cancels (the button, Escape, or the dialog closed otherwise).
 */
export function askDelete(server) {
  const keep = h('input', { type: 'checkbox', id: 'delete-keep-backups', name: 'keep_backups' });
  const remove = h('button', { type: 'submit', class: 'danger', value: 'delete' }, 'Delete for good');
  const cancel = h('button', { type: 'submit', value: 'cancel', formnovalidate: true }, 'Cancel');
  const dialog = h('dialog', { class: 'ask', 'aria-labelledby': 'delete-title', 'aria-describedby': 'delete-what' },
    h('form', { method: 'dialog' },
      h('h2', { id: 'delete-title' }, `Delete ${server.name}?`),
      h('p', { id: 'delete-what' }, 'Its world and files are removed for good, and its address is freed.'),
      h('div', { class: 'field' },
        h('label', { class: 'check', for: keep.id }, keep, ' Keep its backups in my account'),
        h('p', { class: 'help', id: 'delete-keep-help' }, 'Kept backups are listed under Backups: download them, or restore one into another server of the same game version.')),
      h('div', { class: 'buttons' }, remove, cancel)));
  keep.setAttribute('aria-describedby', 'delete-keep-help');
  document.body.append(dialog);
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      const yes = dialog.returnValue === 'delete';
      dialog.remove();
      resolve(yes ? { keepBackups: keep.checked } : null);
    }, { once: true });
    dialog.showModal();
    cancel.focus(); // the safe choice first, as confirm() has it
  });
}
