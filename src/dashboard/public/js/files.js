// A server's own files (openapi/v1.yaml tag Files; issue 40 §4), at #/servers/srv_…/files/<folder>: browse with
// breadcrumbs (each folder is a navigation, so Back works and each is read once: docs/dashboard-budget.md), upload
// files and folders by drag and drop or a file input with progress (file-upload.js), download, rename, delete after
// a confirmation, make a folder, edit text files (file-editor.js), import a world (file-import.js), and how to reach
// the same files over SFTP (sftp.js). Nothing is read on a timer: the folder is read on arrival and after the
// customer's own changes. A member without the `files` permission is told why there is nothing to see.
import { api, download } from './api.js';
import { h, fill, announce, errorBox, field, table } from './dom.js';
import { fmtBytes, plural, timeEl } from './format.js';
import { editable, openEditor } from './file-editor.js';
import { fromDrop, fromInput, joinPath, topNames, uploadBatch } from './file-upload.js';
import { importSection } from './file-import.js';
import { sftpSection } from './sftp.js';

/** Entries per read; a larger folder offers "Show more" (the 10,000-file world folder is 10 reads, not 100). */
const PAGE = 500;

/** The page of `folder` ('' the top), each name percent-encoded in the fragment. */
export function filesHref(id, folder = '') {
  return `#/servers/${id}/files${folder ? `/${folder.split('/').map(encodeURIComponent).join('/')}` : ''}`;
}

function folderOf(rest) {
  try {
    return (rest ?? '').split('/').filter(Boolean).map(decodeURIComponent).join('/');
  } catch {
    return ''; // a fragment typed by hand that is not percent-encoding: the top folder
  }
}

const enc = encodeURIComponent;

export async function filesView(main, signal, id, rest) {
  const folder = folderOf(rest);
  const server = await api('GET', `/v1/servers/${id}`);
  const title = h('h1', {}, `Files of ${server.name}`);
  const back = h('p', {}, h('a', { href: `#/servers/${id}` }, `← ${server.name}`));
  document.title = `Files of ${server.name} · Dashboard`;
  if (!server.access.permissions.includes('files')) {
    fill(main, back, title, h('p', { class: 'card notice', id: 'files-denied' },
      `${server.name} is shared with you without the Files permission, so its files (uploading, downloading and editing them, importing a world, SFTP) are not available to you. Its owner can add that permission under Members on the server's page.`));
    return;
  }
  const files = (sub = '', query = '') => `/v1/servers/${id}/files${sub}${query}`;
  const outcome = h('div', { class: 'outcome', role: 'status' });
  const panel = h('div'); // the rename form, when one is open
  const list = h('div', { class: 'file-list' }, h('p', { class: 'muted' }, 'Loading…'));
  const editor = h('section', { class: 'card editor', 'aria-labelledby': 'editor-title', hidden: true });
  const browse = h('div');
  let entries = [];
  let cursor = null;

  const say = (text, failed = false) => {
    outcome.replaceChildren(failed ? errorBox(text) : h('span', {}, text));
    announce(text, failed);
  };

  async function load(more = false) {
    const query = `?path=${enc(folder)}&limit=${PAGE}${more && cursor ? `&starting_after=${enc(cursor)}` : ''}`;
    try {
      const page = await api('GET', files('', query));
      entries = more ? entries.concat(page.data) : page.data;
      cursor = page.has_more ? page.next_cursor : null;
      render();
    } catch (e) {
      fill(list, errorBox(e.status === 404 ? `There is no folder ${folder} (any more).` : `Could not read this folder: ${e.message}`),
        h('p', {}, h('a', { href: filesHref(id) }, 'Go to the top folder')));
    }
  }

  function render() {
    if (!entries.length) return void fill(list, h('p', { class: 'muted', id: 'folder-empty' }, 'This folder is empty. Drop files here or choose some above.'));
    const rows = entries.map((e) => [nameCell(e), e.type === 'directory' ? 'folder' : e.type === 'file' ? fmtBytes(e.size) : '–',
      timeEl(e.modified_at), actions(e)]);
    fill(list, table(`Files in ${folder || 'the top folder'}`, ['Name', 'Size', 'Modified', ''], rows, (i) => ({ 'data-path': entries[i].path })),
      entries.some((e) => e.read_only) ? h('p', { class: 'help managed-help', id: 'managed-help' },
        'Files managed by the service are written anew before every start from the server\'s settings and player lists: change those on ',
        h('a', { href: `#/servers/${id}` }, 'the server\'s page'), '. They can be downloaded here, not edited, renamed or deleted.') : null,
      cursor ? h('button', { type: 'button', class: 'quiet', onclick: () => load(true) }, 'Show more') : null,
      h('p', { class: 'muted' }, cursor ? `The first ${entries.length} entries.` : plural(entries.length, 'entry', 'entries')));
  }

  function nameCell(e) {
    if (e.type === 'directory') return h('a', { href: filesHref(id, e.path), class: 'entry-folder' }, e.name, h('span', { class: 'sr-only' }, ' (folder)'));
    const note = e.type === 'symlink' ? ' (link, not followed)' : e.type === 'other' ? ' (special file)' : '';
    return h('span', { class: 'entry-file' }, e.name, note ? h('span', { class: 'muted' }, note) : null,
      // FileEntry.read_only: the API refuses its writes (403 file_read_only), so none is offered; said in words.
      e.read_only ? [' ', h('span', { class: 'managed' }, 'managed by the service')] : null);
  }

  function button(text, label, onclick, cls = 'quiet') {
    return h('button', { type: 'button', class: cls, 'aria-label': `${label}`, onclick }, text);
  }

  function actions(e) {
    const ours = !e.read_only;
    return h('div', { class: 'buttons' },
      ours && editable(e) ? button('Edit', `Edit ${e.name}`, () => edit(e)) : null,
      e.type === 'file' ? button('Download', `Download ${e.name}`, () => download(files('/content', `?path=${enc(e.path)}`), e.name).catch((x) => say(`Could not download ${e.name}: ${x.message}`, true))) : null,
      e.type === 'directory' ? button('Download .zip', `Download .zip of ${e.name}`, () => downloadFolder(e.path, e.name)) : null,
      ours ? button('Rename', `Rename ${e.name}`, () => rename(e)) : null,
      ours ? button('Delete', `Delete ${e.name}`, (ev) => remove(e, ev.currentTarget), 'danger') : null);
  }

  function downloadFolder(path, name) {
    say(`Preparing ${name}.zip…`);
    download(files('/archive', `?path=${enc(path)}&format=zip`), `${name}.zip`)
      .then(() => say(`Downloaded ${name}.zip.`), (x) => say(`Could not download ${name}: ${x.message}`, true));
  }

  async function remove(e, from) {
    const what = e.type === 'directory' ? `the folder ${e.name} and everything in it` : e.name;
    if (!confirm(`Delete ${what}? This cannot be undone.`)) return;
    from.disabled = true;
    try {
      await api('DELETE', files('', `?path=${enc(e.path)}${e.type === 'directory' ? '&recursive=true' : ''}`));
      say(`Deleted ${e.name}.`);
      await load();
      title.focus();
    } catch (x) {
      from.disabled = false;
      say(`Could not delete ${e.name}: ${x.message}`, true);
    }
  }

  function rename(e) {
    const input = h('input', { id: 'rename-to', value: e.name, required: true, maxlength: 255, autocomplete: 'off', spellcheck: 'false' });
    const error = h('div');
    const close = () => {
      panel.replaceChildren();
      list.querySelector(`tr[data-path="${CSS.escape(e.path)}"] button[aria-label^="Rename"]`)?.focus();
    };
    const form = h('form', { class: 'card rename', 'aria-labelledby': 'rename-title' },
      h('h2', { id: 'rename-title' }, `Rename ${e.name}`),
      h('div', { class: 'row' }, field('New name', input), h('div', { class: 'buttons field' },
        h('button', { type: 'submit' }, 'Rename'), h('button', { type: 'button', class: 'quiet', onclick: close }, 'Cancel'))),
      error);
    form.addEventListener('keydown', (ev) => ev.key === 'Escape' && close());
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const name = input.value.trim();
      if (name.includes('/') || name.includes('\\')) return void error.replaceChildren(errorBox('A name cannot hold / or \\.'));
      if (name === e.name) return close();
      try {
        await api('POST', files('/moves'), { from: e.path, to: joinPath(folder, name) });
        panel.replaceChildren();
        say(`Renamed ${e.name} to ${name}.`);
        await load();
        list.querySelector(`tr[data-path="${CSS.escape(joinPath(folder, name))}"] button[aria-label^="Rename"]`)?.focus();
      } catch (x) {
        error.replaceChildren(errorBox(`Not renamed: ${x.message}`));
      }
    });
    panel.replaceChildren(form);
    input.focus();
    input.select();
  }

  async function edit(e) {
    browse.hidden = true;
    editor.hidden = false;
    const closeEditor = () => {
      editor.hidden = true;
      editor.replaceChildren();
      browse.hidden = false;
      load().then(() => list.querySelector(`tr[data-path="${CSS.escape(e.path)}"] button[aria-label^="Edit"]`)?.focus());
    };
    try {
      await openEditor(editor, id, e, { close: closeEditor });
    } catch (x) {
      fill(editor, h('h2', { id: 'editor-title' }, `Editing ${e.name}`), errorBox(`Could not open ${e.name}: ${x.message}`),
        h('button', { type: 'button', class: 'quiet', onclick: closeEditor }, 'Back to the folder'));
    }
  }

  // Uploads: the two file inputs stay hidden; their buttons open them, and a drop anywhere on the list works alike.
  const pickFiles = h('input', { type: 'file', id: 'upload-files', multiple: true, hidden: true });
  const pickFolder = h('input', { type: 'file', id: 'upload-folder', webkitdirectory: true, hidden: true });
  const bar = h('progress', { max: 1, value: 0, hidden: true, 'aria-label': 'Upload progress' });
  const progress = h('p', { class: 'muted upload-progress', hidden: true });
  async function upload(batch) {
    if (!batch.files.length && !batch.folders.length) return;
    const here = new Set(entries.map((e) => e.name));
    const clashing = topNames(batch).filter((n) => here.has(n));
    let replace = new Set();
    if (clashing.length) {
      const names = clashing.length <= 5 ? clashing.join(', ') : `${clashing.slice(0, 5).join(', ')} and ${clashing.length - 5} more`;
      if (confirm(`Replace what is already here under the same names (${names})?`)) replace = new Set(clashing);
      else {
        batch = { files: batch.files.filter((f) => !here.has(f.path.split('/')[0])), folders: batch.folders.filter((f) => !here.has(f.split('/')[0])) };
        say(`Kept ${names} as ${clashing.length === 1 ? 'it was' : 'they were'}.`);
      }
    }
    const total = batch.files.reduce((n, f) => n + f.file.size, 0);
    bar.hidden = progress.hidden = false;
    bar.max = total || 1;
    bar.value = 0;
    const result = await uploadBatch(id, folder, batch, {
      replace, signal,
      report: ({ done, name, loaded }) => {
        bar.value = done + loaded;
        progress.textContent = `Uploading ${name}: ${fmtBytes(done + loaded)} of ${fmtBytes(total)}`;
      },
    });
    bar.value = bar.max;
    progress.textContent = `Uploaded ${plural(result.sent, 'file')} (${fmtBytes(total)}).`;
    if (result.failed.length) say(`Not uploaded: ${result.failed.map((f) => `${f.path} (${f.why})`).join('; ')}`, true);
    else say(`Uploaded ${plural(result.sent, 'file')} to ${folder || 'the top folder'}.`);
    await load();
  }
  for (const input of [pickFiles, pickFolder]) {
    input.addEventListener('change', () => {
      const batch = fromInput(input.files);
      input.value = '';
      upload(batch).catch((x) => say(`Not uploaded: ${x.message}`, true));
    });
  }
  const drop = h('div', { class: 'drop-zone' }, list);
  drop.addEventListener('dragover', (ev) => {
    ev.preventDefault();
    drop.classList.add('dragging');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('dragging'));
  drop.addEventListener('drop', (ev) => {
    ev.preventDefault();
    drop.classList.remove('dragging');
    fromDrop(ev.dataTransfer).then(upload).catch((x) => say(`Not uploaded: ${x.message}`, true));
  });

  const newName = h('input', { id: 'new-folder', name: 'folder', required: true, maxlength: 255, autocomplete: 'off', spellcheck: 'false' });
  const newFolder = h('form', { class: 'row new-folder' }, field('New folder', newName), h('button', { type: 'submit', class: 'field' }, 'Create folder'));
  newFolder.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const name = newName.value.trim();
    try {
      if (name.includes('/') || name.includes('\\')) throw new Error('a name cannot hold / or \\');
      await api('POST', files('/folders'), { path: joinPath(folder, name) });
      newName.value = '';
      say(`Made the folder ${name}.`);
      await load();
    } catch (x) {
      say(`Folder not made: ${x.message}`, true);
    }
  });

  const crumbs = folder ? folder.split('/') : [];
  const breadcrumbs = h('nav', { 'aria-label': 'Folder', class: 'breadcrumbs' }, h('ol', {},
    h('li', {}, crumbs.length ? h('a', { href: filesHref(id) }, 'Files') : h('span', { 'aria-current': 'page' }, 'Files')),
    crumbs.map((name, i) => h('li', {}, i === crumbs.length - 1
      ? h('span', { 'aria-current': 'page' }, name)
      : h('a', { href: filesHref(id, crumbs.slice(0, i + 1).join('/')) }, name)))));

  fill(browse,
    h('div', { class: 'file-tools' },
      h('div', { class: 'buttons upload-buttons' },
        h('button', { type: 'button', onclick: () => pickFiles.click() }, 'Upload files'),
        h('button', { type: 'button', onclick: () => pickFolder.click() }, 'Upload a folder'),
        h('button', { type: 'button', class: 'quiet', onclick: () => downloadFolder(folder, folder ? crumbs[crumbs.length - 1] : server.name) }, 'Download this folder (.zip)')),
      pickFiles, pickFolder, newFolder),
    h('p', { class: 'muted drop-hint' }, 'Drop files or folders on the list to upload them here.'),
    bar, progress, outcome, panel, drop);
  fill(main, back, title, breadcrumbs, browse, editor,
    importSection(server, { latest: () => server, extracted: () => load(), signal }),
    sftpSection(server));
  await load();
}
