// Sending bytes to the Files API (openapi/v1.yaml tag Files) with progress, and gathering what the customer gave:
// files and folders dropped (DataTransfer items, each walked as a FileSystemEntry: the File and Directory Entries
// API), or chosen with a file input (a folder's through `webkitdirectory`, each File naming its
// `webkitRelativePath`). fetch() reports no upload progress, so the bytes go by XMLHttpRequest (XHR §4.6 "upload").
import { api, ApiError, withToken } from './api.js';

/**
 * Sends `body` (a File or Blob, never read into memory by the page) to `path` with the page's token; `progress
 * (loaded, total)` hears how far it is. A 401 and a 429 are handled as for every request of the page (api.js
 * withToken: a new token; Retry-After waited out, then the body sent again from its start). Resolves with the
 * answer's JSON; throws ApiError with the problem.
 */
export async function sendBytes(method, path, body, { headers = {}, progress = () => {}, signal } = {}) {
  const answer = await withToken((token) => new Promise((resolve, reject) => {
    const req = new XMLHttpRequest();
    req.open(method, path);
    req.setRequestHeader('Authorization', `Bearer ${token}`);
    for (const [name, value] of Object.entries(headers)) req.setRequestHeader(name, value);
    req.upload.addEventListener('progress', (e) => e.lengthComputable && progress(e.loaded, e.total));
    // headers: what api.js reads of a Response (Retry-After, RateLimit, RateLimit-Policy on a 429).
    const answered = { get: (name) => req.getResponseHeader(name), has: (name) => req.getResponseHeader(name) !== null };
    req.addEventListener('load', () => resolve({ status: req.status, text: req.responseText, headers: answered }));
    req.addEventListener('error', () => reject(new Error('the connection was cut off; try again')));
    req.addEventListener('abort', () => reject(new Error('stopped')));
    signal?.addEventListener('abort', () => req.abort(), { once: true });
    req.send(body);
  }));
  let data = null;
  try {
    data = answer.text ? JSON.parse(answer.text) : null;
  } catch {
    data = null;
  }
  if (answer.status < 200 || answer.status >= 300) throw new ApiError(answer.status, data, answer);
  return data;
}

/** `a/b` joined to `c` as the API names paths: `/`-separated, no leading `/`, '' the top folder. */
export function joinPath(folder, name) {
  return folder ? `${folder}/${name}` : name;
}

/** Every file under a dropped directory entry, as {path, file}, and the folders met, as paths. */
async function walk(entry, prefix, out) {
  const path = joinPath(prefix, entry.name);
  if (entry.isFile) {
    out.files.push({ path, file: await new Promise((resolve, reject) => entry.file(resolve, reject)) });
    return;
  }
  out.folders.push(path);
  const reader = entry.createReader();
  // readEntries answers in batches (Chromium: 100 at a time) until an empty one.
  for (;;) {
    const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
    if (!batch.length) return;
    for (const child of batch) await walk(child, path, out);
  }
}

/** What a drop holds: {files: [{path, file}], folders: [path]}, paths relative to where it was dropped. */
export async function fromDrop(dataTransfer) {
  const out = { files: [], folders: [] };
  // Entries must be taken while the drop event runs: the list is emptied once it returns.
  const items = [...(dataTransfer.items ?? [])].filter((i) => i.kind === 'file');
  const entries = items.map((i) => (i.webkitGetAsEntry ? i.webkitGetAsEntry() : null));
  const loose = items.map((i) => i.getAsFile());
  for (let i = 0; i < items.length; i++) {
    if (entries[i]) await walk(entries[i], '', out);
    else if (loose[i]) out.files.push({ path: loose[i].name, file: loose[i] });
  }
  if (!items.length) for (const file of dataTransfer.files ?? []) out.files.push({ path: file.name, file });
  return out;
}

/** What a file input chose: with `webkitdirectory`, each File's relative path names its folders. */
export function fromInput(fileList) {
  const out = { files: [], folders: [] };
  const folders = new Set();
  for (const file of fileList) {
    const path = file.webkitRelativePath || file.name;
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) folders.add(parts.slice(0, i).join('/'));
    out.files.push({ path, file });
  }
  out.folders = [...folders].sort((a, b) => a.split('/').length - b.split('/').length);
  return out;
}

/** The first name of each path: what would be added to (or replaced in) the folder dropped into. */
export function topNames(batch) {
  return [...new Set([...batch.folders, ...batch.files.map((f) => f.path)].map((p) => p.split('/')[0]))];
}

/**
 * Puts `batch` into the server's folder `base`: its folders first (one that exists already is used), then each file,
 * one at a time (the service applies one server's writes one at a time anyway). A file whose top name is not in
 * `replace` is sent with `If-None-Match: *`, so nothing is replaced that the customer did not agree to.
 * `report({done, total, name, loaded})` hears the progress in bytes. Resolves with {sent, failed: [{path, why}]}.
 */
export async function uploadBatch(serverId, base, batch, { replace = new Set(), report = () => {}, signal } = {}) {
  const files = (sub) => `/v1/servers/${serverId}/files${sub}`;
  const failed = [];
  const total = batch.files.reduce((n, f) => n + f.file.size, 0);
  let done = 0;
  for (const folder of batch.folders) {
    try {
      await api('POST', files('/folders'), { path: joinPath(base, folder) });
    } catch (e) {
      if (e.problem?.code !== 'file_conflict') failed.push({ path: folder, why: e.message });
    }
  }
  let sent = 0;
  for (const { path, file } of batch.files) {
    if (signal?.aborted) break;
    const target = joinPath(base, path);
    const headers = { 'Content-Type': 'application/octet-stream' };
    if (!replace.has(path.split('/')[0])) headers['If-None-Match'] = '*';
    try {
      await sendBytes('PUT', files(`/content?path=${encodeURIComponent(target)}`), file, {
        headers, signal, progress: (loaded) => report({ done, total, name: path, loaded }),
      });
      sent++;
    } catch (e) {
      const why = e.status === 412 ? 'a file of that name is already there' : e.message;
      failed.push({ path, why });
    }
    done += file.size;
    report({ done, total, name: path, loaded: 0 });
  }
  return { sent, failed };
}
