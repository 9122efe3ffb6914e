// The file manager's text editor: CodeMirror 6, from the bundle scripts/bundle-codemirror.js makes (loaded when a
// file is first opened, so the folder list never pays for it). It lives in a shadow root: CodeMirror adds its own
// styles as constructed style sheets there (style-mod's adoptedStyleSheets), where in the document it would add a
// <style> element, which the dashboard's CSP (style-src 'self', src/dashboard/index.ts) refuses. Colours come from
// app.css's custom properties, which reach into the shadow root, so the editor follows the light and dark schemes.
// Saving sends `If-Match` with the ETag the file was read with (RFC 9110 §13.1.1): a change made meanwhile by anyone
// else answers 412, and the page says so instead of overwriting it.
import { getResponse, api, ApiError } from './api.js';
import { h, fill, announce, errorBox } from './dom.js';
import { fmtClock } from './format.js';
import { sendBytes } from './file-upload.js';

/** The files worth opening here: not larger than this, and decoding as UTF-8 without NUL bytes. */
export const EDIT_MAX_BYTES = 2 * 1024 * 1024;

/** Names never offered for editing: what game servers keep in binary formats. */
const BINARY = /\.(jar|zip|gz|tgz|tar|7z|rar|dat|dat_old|mca|mcr|nbt|png|jpe?g|gif|webp|ico|db|sqlite|so|dll|exe|bin|class|ogg|mp3|wav)$/i;

export function editable(entry) {
  return entry.type === 'file' && entry.size <= EDIT_MAX_BYTES && !BINARY.test(entry.name);
}

/** Which syntax a file is highlighted with, by its name; null: plain text. */
function languageOf(name, cm) {
  const ext = /\.([^.]+)$/.exec(name.toLowerCase())?.[1] ?? '';
  if (['json', 'mcmeta', 'json5'].includes(ext)) return { name: 'JSON', ext: cm.json() };
  if (['yml', 'yaml'].includes(ext)) return { name: 'YAML', ext: cm.yaml() };
  if (['toml'].includes(ext)) return { name: 'TOML', ext: cm.StreamLanguage.define(cm.toml) };
  if (['lua'].includes(ext)) return { name: 'Lua', ext: cm.StreamLanguage.define(cm.lua) };
  if (['properties', 'conf', 'cfg', 'ini', 'env'].includes(ext)) return { name: 'properties', ext: cm.StreamLanguage.define(cm.properties) };
  return null;
}

/** Token colours as custom properties (app.css --tok-*), so each scheme picks its own with AA contrast. */
function highlighting(cm) {
  const t = cm.tags;
  return cm.syntaxHighlighting(cm.HighlightStyle.define([
    { tag: [t.keyword, t.operatorKeyword, t.modifier], color: 'var(--tok-keyword)' },
    { tag: [t.string, t.special(t.string), t.regexp], color: 'var(--tok-string)' },
    { tag: [t.number, t.bool, t.null, t.atom], color: 'var(--tok-number)' },
    { tag: [t.comment, t.lineComment, t.blockComment], color: 'var(--tok-comment)', fontStyle: 'italic' },
    { tag: [t.propertyName, t.definition(t.propertyName), t.attributeName, t.variableName, t.labelName], color: 'var(--tok-property)' },
    { tag: [t.heading, t.meta, t.typeName, t.className, t.tagName], color: 'var(--tok-meta)', fontWeight: '600' },
    { tag: t.invalid, color: 'var(--danger)' },
  ]));
}

function theme(cm) {
  return cm.EditorView.theme({
    '&': { color: 'var(--fg)', backgroundColor: 'var(--field)', border: '1px solid var(--field-line)', borderRadius: '6px', height: 'min(65vh, 640px)', fontSize: '14px' },
    '&.cm-focused': { outline: '3px solid var(--focus)', outlineOffset: '2px' },
    '.cm-scroller': { fontFamily: 'ui-monospace, Menlo, Consolas, monospace', lineHeight: '1.45' },
    '.cm-content': { caretColor: 'var(--fg)' },
    '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--fg)' },
    '.cm-gutters': { backgroundColor: 'var(--surface)', color: 'var(--muted)', borderRight: '1px solid var(--line)' },
    '.cm-activeLine, .cm-activeLineGutter': { backgroundColor: 'var(--editor-active)' },
    '&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground, .cm-content ::selection': { backgroundColor: 'var(--editor-selection)' },
    '.cm-panels': { backgroundColor: 'var(--surface)', color: 'var(--fg)' },
    '.cm-textfield, .cm-button': { font: 'inherit', color: 'var(--fg)', backgroundColor: 'var(--field)' },
    '.cm-tooltip': { backgroundColor: 'var(--surface)', color: 'var(--fg)', border: '1px solid var(--line)' },
  }, { dark: matchMedia('(prefers-color-scheme: dark)').matches });
}

/** The file's text and its ETag; throws when it is not UTF-8 text (a NUL byte, or bytes no UTF-8 decodes). */
async function readText(contentPath) {
  const res = await getResponse(contentPath);
  if (!res.ok) {
    const problem = await res.json().catch(() => null);
    throw new ApiError(res.status, problem, res);
  }
  const bytes = new Uint8Array(await res.arrayBuffer());
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    text = null;
  }
  if (text === null || text.includes('\0')) throw new Error('it is not text; download it instead');
  return { text, etag: res.headers.get('ETag') };
}

/**
 * Opens `entry` (a FileEntry) of server `serverId` in `container`. `close()` is called when the customer closes it
 * (after a confirmation if there are unsaved changes), `saved(entry)` after each save.
 */
export async function openEditor(container, serverId, entry, { close, saved = () => {} }) {
  const contentPath = `/v1/servers/${serverId}/files/content?path=${encodeURIComponent(entry.path)}`;
  const status = h('p', { class: 'muted editor-status', role: 'status' });
  const problem = h('div', { class: 'editor-problem' });
  const host = h('div', { class: 'editor-host' });
  const saveButton = h('button', { type: 'button' }, 'Save');
  const closeButton = h('button', { type: 'button', class: 'quiet' }, 'Close');
  const lang = h('span', { class: 'muted' });
  fill(container,
    h('h2', { id: 'editor-title', tabindex: -1 }, `Editing ${entry.name}`),
    h('p', { class: 'editor-path' }, h('code', {}, entry.path || entry.name), ' ', lang),
    problem, host,
    h('div', { class: 'buttons editor-buttons' }, saveButton, closeButton),
    status);
  const [cm, first] = await Promise.all([import('./vendor/codemirror.js'), readText(contentPath)]);
  let etag = first.etag;
  let savedText = first.text;
  const language = languageOf(entry.name, cm);
  lang.textContent = language ? `(${language.name})` : '(plain text)';

  const root = host.attachShadow({ mode: 'open' });
  const view = new cm.EditorView({
    doc: first.text,
    parent: root,
    root,
    extensions: [
      cm.basicSetup,
      theme(cm),
      highlighting(cm),
      language ? language.ext : [],
      // Tab is left to move focus (WCAG 2.1.2, no keyboard trap): CodeMirror binds it only with indentWithTab.
      cm.keymap.of([{ key: 'Mod-s', preventDefault: true, run: () => (save(), true) }]),
      cm.EditorView.contentAttributes.of({ 'aria-label': `Contents of ${entry.name}` }),
      cm.EditorView.updateListener.of((u) => u.docChanged && showDirty()),
    ],
  });
  const dirty = () => view.state.doc.toString() !== savedText;
  const showDirty = () => {
    if (dirty()) status.textContent = 'Unsaved changes.';
  };

  async function put(ifMatch) {
    const text = view.state.doc.toString();
    const written = await sendBytes('PUT', contentPath, new Blob([text]), { headers: { 'Content-Type': 'application/octet-stream', 'If-Match': ifMatch } });
    etag = written.etag;
    savedText = text;
    problem.replaceChildren();
    status.textContent = `Saved at ${fmtClock(Date.now())}.`;
    announce(`Saved ${entry.name}.`);
    saved(written);
  }

  async function save() {
    if (saveButton.disabled) return;
    saveButton.disabled = true;
    try {
      await put(etag);
    } catch (e) {
      if (e.status === 412) conflict();
      else problem.replaceChildren(errorBox(`Not saved: ${e.message}`));
    } finally {
      saveButton.disabled = false;
    }
  }

  /** Someone else changed the file since it was read: say so, keep the customer's text, let them choose. */
  function conflict() {
    const reload = h('button', { type: 'button', class: 'quiet' }, 'Load their version');
    const overwrite = h('button', { type: 'button', class: 'danger' }, 'Save mine over theirs');
    reload.addEventListener('click', async () => {
      try {
        const now = await readText(contentPath);
        etag = now.etag;
        savedText = now.text;
        view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: now.text } });
        problem.replaceChildren();
        status.textContent = 'Loaded the version saved by someone else; your changes were dropped.';
        view.focus();
      } catch (e) {
        problem.replaceChildren(errorBox(`Could not load it: ${e.message}`));
      }
    });
    overwrite.addEventListener('click', async () => {
      try {
        // The ETag of what is there now: this replaces exactly the version the customer was told about.
        const current = await api('GET', `/v1/servers/${serverId}/files/metadata?path=${encodeURIComponent(entry.path)}`);
        await put(current.etag);
        view.focus();
      } catch (e) {
        if (e.status === 412) conflict();
        else problem.replaceChildren(errorBox(`Not saved: ${e.message}`));
      }
    });
    problem.replaceChildren(h('div', { class: 'conflict', role: 'alert' },
      h('p', { class: 'error' }, `Not saved: someone else changed ${entry.name} after you opened it. Your text is still in the editor.`),
      h('p', {}, 'Load their version (your changes are dropped), or save yours over theirs (their changes are lost).'),
      h('div', { class: 'buttons' }, reload, overwrite)));
  }

  saveButton.addEventListener('click', save);
  closeButton.addEventListener('click', () => {
    if (dirty() && !confirm(`Close ${entry.name} without saving? Your changes are lost.`)) return;
    view.destroy();
    close();
  });
  view.focus();
  return view;
}
