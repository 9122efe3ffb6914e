// "Import a world": upload a .zip (or .tar.gz) to the extract endpoint (openapi/v1.yaml extractServerArchive), pick
// the folder it goes to and what happens to what is there, then start or restart the game to play it. The service
// checks the whole archive before writing a byte and puts it in place all or nothing; the page only chooses the
// parameters. A single-player world's zip holds one folder named after the world (`MyWorld/level.dat`): the page
// reads the zip's central directory (APPNOTE.TXT §4.3.12, §4.3.16) to see that and proposes `strip_components=1`.
import { api } from './api.js';
import { h, fill, announce, errorBox, field } from './dom.js';
import { fmtBytes, plural } from './format.js';
import { runAction } from './actions.js';
import { sendBytes } from './file-upload.js';

/** The names of a zip's entries, from its central directory; null when it cannot be read here (ZIP64, damaged). */
async function zipNames(file) {
  const tailSize = Math.min(file.size, 65_557); // the end record (22 bytes) and a comment of at most 65,535
  const tail = new DataView(await file.slice(file.size - tailSize).arrayBuffer());
  let end = -1;
  for (let i = tailSize - 22; i >= 0; i--) if (tail.getUint32(i, true) === 0x06054b50) { end = i; break; }
  if (end < 0) return null;
  const count = tail.getUint16(end + 10, true);
  const size = tail.getUint32(end + 12, true);
  const offset = tail.getUint32(end + 16, true);
  if (offset === 0xffffffff || offset + size > file.size || size > 16 * 1024 * 1024) return null;
  const dir = new DataView(await file.slice(offset, offset + size).arrayBuffer());
  const names = [];
  const utf8 = new TextDecoder();
  for (let p = 0, n = 0; n < count && p + 46 <= size; n++) {
    if (dir.getUint32(p, true) !== 0x02014b50) return null;
    const nameLength = dir.getUint16(p + 28, true);
    const skip = dir.getUint16(p + 30, true) + dir.getUint16(p + 32, true);
    names.push(utf8.decode(new Uint8Array(dir.buffer, p + 46, nameLength)));
    p += 46 + nameLength + skip;
  }
  return names;
}

/** The one folder every entry is inside (macOS's `__MACOSX` aside), or null. */
export function singleTop(names) {
  const real = names.filter((n) => !n.startsWith('__MACOSX/'));
  const tops = new Set(real.map((n) => n.split('/')[0]));
  return tops.size === 1 && real.every((n) => n.includes('/')) ? [...tops][0] : null;
}

const MODES = [
  ['folder', 'Replace the folder: everything in it now is deleted, then the archive is put there'],
  ['entries', 'Replace only what the archive holds, keep the rest'],
  ['none', 'Add to the folder: none of the archive\'s names may be there yet'],
];

/**
 * The section. `latest()` gives the server as last read (its state decides Start or Restart); `extracted(folder)`
 * is called after an import so the file list can be read again.
 */
export function importSection(server, { latest = () => server, extracted = () => {}, signal } = {}) {
  const file = h('input', { id: 'import-file', type: 'file', accept: '.zip,.tar.gz,.tgz,application/zip,application/gzip', required: true });
  const folder = h('input', { id: 'import-folder', name: 'folder', value: 'world', required: true, maxlength: 4096, autocomplete: 'off', spellcheck: 'false' });
  const strip = h('input', { id: 'import-strip', type: 'checkbox' });
  const stripText = h('span', {}, 'Put what is inside the archive\'s one top folder, not the folder itself');
  const modes = MODES.map(([value, text], i) => h('label', { class: 'check' },
    h('input', { type: 'radio', name: 'import-mode', value, checked: i === 0 }), ` ${text}`));
  const bar = h('progress', { max: 1, value: 0, hidden: true, 'aria-label': 'Import upload progress' });
  const progress = h('p', { class: 'muted', hidden: true });
  const outcome = h('div', { class: 'outcome', role: 'status' });
  const button = h('button', { type: 'submit' }, 'Import');
  const form = h('form', { class: 'import' },
    field('World archive (.zip or .tar.gz)', file, { help: 'A single-player save zipped as it is (MyWorld/level.dat…) works as it is.' }),
    field('Put it in the folder', folder, { help: 'Relative to the server\'s files. Minecraft servers load the folder world.' }),
    h('fieldset', {}, h('legend', {}, 'What is there now'), modes),
    h('label', { class: 'check', for: 'import-strip' }, strip, ' ', stripText),
    h('div', { class: 'row' }, button), bar, progress);

  file.addEventListener('change', async () => {
    const chosen = file.files[0];
    stripText.textContent = 'Put what is inside the archive\'s one top folder, not the folder itself';
    if (!chosen || !/\.zip$/i.test(chosen.name)) return;
    const top = singleTop((await zipNames(chosen).catch(() => null)) ?? []);
    strip.checked = Boolean(top);
    if (top) stripText.textContent = `The archive holds one folder, ${top}: put what is inside it, not ${top} itself`;
  });

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const chosen = file.files[0];
    if (!chosen) return;
    const target = folder.value.trim().replace(/^\/+|\/+$/g, '');
    const mode = form.querySelector('input[name="import-mode"]:checked').value;
    const s = latest();
    if (s.state === 'running' && !confirm(`${s.name} is running: the game may save its old world over the imported one. Import anyway? (Stopping it first is safer.)`)) return;
    const query = new URLSearchParams({ path: target, replace: mode, strip_components: strip.checked ? '1' : '0' });
    const type = /\.zip$/i.test(chosen.name) ? 'application/zip' : 'application/gzip';
    button.disabled = true;
    bar.hidden = progress.hidden = false;
    bar.max = chosen.size || 1;
    bar.value = 0;
    outcome.replaceChildren();
    try {
      const done = await sendBytes('POST', `/v1/servers/${server.id}/files/extract?${query}`, chosen, {
        headers: { 'Content-Type': type },
        progress: (loaded, total) => {
          bar.value = loaded;
          progress.textContent = loaded < total ? `Uploading ${chosen.name}: ${fmtBytes(loaded)} of ${fmtBytes(total)}` : 'Checking and unpacking…';
        },
      });
      bar.value = bar.max;
      const text = `Imported ${chosen.name} into ${done.path || 'the top folder'}: ${plural(done.files, 'file')}, ${fmtBytes(done.bytes)}.`;
      progress.hidden = true; // the outcome says it
      announce(text);
      extracted(done.path);
      fill(outcome, h('p', {}, text), await playButton(server, signal));
    } catch (e) {
      progress.hidden = true;
      fill(outcome, errorBox(`Not imported: ${e.message}`));
    } finally {
      button.disabled = false;
    }
  });

  return h('section', { class: 'card', 'aria-labelledby': 'import-title' },
    h('h2', { id: 'import-title' }, 'Import a world'), form, outcome);
}

/** After an import: start (or restart) the game so it loads the world; only with the power permission. */
async function playButton(server, signal) {
  if (!server.access.permissions.includes('power')) return h('p', { class: 'muted' }, 'Ask someone who may start the server to restart it.');
  const now = await api('GET', `/v1/servers/${server.id}`).catch(() => server);
  const type = now.state === 'running' ? 'restart' : now.state === 'stopped' || now.state === 'crashed' ? 'start' : null;
  if (!type) return h('p', { class: 'muted' }, `${now.name} is ${now.state}; start it once it can be, to play the imported world.`);
  const said = h('span');
  const button = h('button', { type: 'button' }, type === 'restart' ? 'Restart now' : 'Start now');
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      await runAction(now, type, (text, failed) => said.replaceChildren(failed ? errorBox(text) : text), signal);
    } catch (e) {
      said.replaceChildren(errorBox(e.message));
    }
  });
  return h('p', { class: 'row play' }, h('span', {}, type === 'restart' ? 'Restart it to play the imported world:' : 'Start it to play the imported world:'), button, said);
}
