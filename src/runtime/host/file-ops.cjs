'use strict';
/**
 * A customer's own files (docs/architecture.md "Server files"; openapi/v1.yaml tag Files): each operation on one
 * path inside a server's files, with no dependency, so the local storage requires it (through folder-ops.cjs) and a
 * node's helper container runs it (`node folder-ops.cjs <command> DIR …`), the game image holding both files.
 *
 * Paths are relative, `/`-separated and already checked by the caller (services/file-paths.ts: no `..`, no absolute
 * name, no control character). What is checked here is what only the files can tell: every folder on the way is a
 * real folder, never a symbolic link (a link the game made is listed and may be moved or deleted, never followed),
 * and the last name is what the operation needs. A refusal throws an OpError whose `op` is its code.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const fsp = fs.promises;
/** The service's own names (a restore's or an extraction's staging, an upload under way): never listed. */
const RESERVED = /^\.(gsh-|restore-|old-)/;

class OpError extends Error {
  constructor(op, message) {
    super(message);
    this.op = op;
  }
}

/** A strong validator of a file's content as stored (RFC 9110 §8.8.3): a new file or a rewrite changes it. */
function etagOf(st) {
  const id = `${st.size}:${Math.floor(st.mtimeMs * 1000)}:${st.ino}:${st.ctimeMs}`;
  return `"${crypto.createHash('sha256').update(id).digest('base64url').slice(0, 22)}"`;
}

function kindOf(st) {
  return st.isDirectory() ? 'directory' : st.isFile() ? 'file' : st.isSymbolicLink() ? 'symlink' : 'other';
}

function entryOf(rel, st) {
  const type = kindOf(st);
  return {
    path: rel,
    name: rel === '' ? '' : rel.split('/').pop(),
    type,
    size: type === 'file' ? st.size : 0,
    modified_at: new Date(Math.floor(st.mtimeMs)).toISOString(),
    etag: type === 'file' ? etagOf(st) : null,
  };
}

const lstatOrNull = (p) => fsp.lstat(p).catch((err) => (err.code === 'ENOENT' ? null : Promise.reject(err)));

/**
 * The lstat of `rel` under `dir` (null when the last name is missing), having checked that every folder on the way
 * is a real folder: a symbolic link there is refused (`symlink`), never followed.
 */
async function resolve(dir, rel) {
  const parts = rel === '' ? [] : rel.split('/');
  let here = dir;
  for (let i = 0; i < parts.length; i++) {
    here = path.join(here, parts[i]);
    const st = await lstatOrNull(here);
    if (i === parts.length - 1) return st;
    const shown = parts.slice(0, i + 1).join('/');
    if (!st) throw new OpError('not_found', `${shown} does not exist`);
    if (st.isSymbolicLink()) throw new OpError('symlink', `${shown} is a symbolic link; links are never followed`);
    if (!st.isDirectory()) throw new OpError('not_a_folder', `${shown} is not a folder`);
  }
  return fsp.lstat(dir);
}

async function existing(dir, rel) {
  const st = await resolve(dir, rel);
  if (!st) throw new OpError('not_found', `${rel} does not exist`);
  return st;
}

async function folder(dir, rel) {
  const st = await existing(dir, rel);
  if (!st.isDirectory()) throw new OpError(st.isSymbolicLink() ? 'symlink' : 'not_a_folder', `${rel || '/'} is not a folder`);
  return st;
}

const parentOf = (rel) => (rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '');

async function stat(dir, rel) {
  return entryOf(rel, await existing(dir, rel));
}

/**
 * One page of a folder: folders first, then the rest, each by name (code units); `after` is the last entry of the
 * previous page ([isFolder, name]), `hide` names at the top that are not the customer's (the console log's folder).
 */
async function list(dir, rel, after, limit, hide) {
  await folder(dir, rel);
  const shown = (await fsp.readdir(path.join(dir, rel), { withFileTypes: true }))
    .filter((d) => !RESERVED.test(d.name) && !(rel === '' && hide.includes(d.name)))
    .map((d) => [d.isDirectory() ? 0 : 1, d.name]);
  const order = (a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
  shown.sort(order);
  const from = after ? shown.findIndex((e) => order(e, after) > 0) : 0;
  const page = from < 0 ? [] : shown.slice(from, from + limit);
  const entries = [];
  for (const [, name] of page) {
    const child = rel === '' ? name : `${rel}/${name}`;
    const st = await lstatOrNull(path.join(dir, child));
    if (st) entries.push(entryOf(child, st));
  }
  return { entries, more: from >= 0 && from + limit < shown.length };
}

async function mkdir(dir, rel) {
  await folder(dir, parentOf(rel));
  await fsp.mkdir(path.join(dir, rel)).catch((err) => {
    throw err.code === 'EEXIST' ? new OpError('exists', `${rel} already exists`) : err;
  });
  return entryOf(rel, await fsp.lstat(path.join(dir, rel)));
}

/** Renames `from` to `to` (a link as itself); `to` must not exist, and a folder never goes inside itself. */
async function move(dir, from, to) {
  await existing(dir, from);
  if (to === from || to.startsWith(`${from}/`)) throw new OpError('invalid', `${from} cannot be moved into itself`);
  await folder(dir, parentOf(to));
  if (await lstatOrNull(path.join(dir, to))) throw new OpError('exists', `${to} already exists`);
  await fsp.rename(path.join(dir, from), path.join(dir, to));
  return entryOf(to, await fsp.lstat(path.join(dir, to)));
}

/** Deletes a file, a link (not what it points to) or a folder; a folder with entries only when `recursive`. */
async function remove(dir, rel, recursive) {
  const st = await existing(dir, rel);
  const full = path.join(dir, rel);
  if (st.isDirectory() && !recursive && (await fsp.readdir(full)).length > 0) throw new OpError('not_empty', `${rel} is a folder with entries`);
  await fsp.rm(full, { recursive: true, force: true }); // unlinks links inside, never follows them
  return {};
}

/**
 * Renames the uploaded file `staged` (at the top of DIR) to `rel`, after the precondition held (`expect`: null,
 * `{absent: true}` for If-None-Match: *, `{any: true}` for If-Match: *, `{etags}` for If-Match; RFC 9110 §13.1).
 * The rename replaces a link instead of writing through it. The staged file is gone afterwards either way.
 */
async function place(dir, staged, rel, expect) {
  try {
    await folder(dir, parentOf(rel));
    const st = await lstatOrNull(path.join(dir, rel));
    if (st && st.isDirectory()) throw new OpError('is_a_folder', `${rel} is a folder`);
    const tag = st && st.isFile() ? etagOf(st) : null;
    if (expect && expect.absent && st) throw new OpError('precondition', `${rel} exists (If-None-Match: *)`);
    if (expect && expect.any && !tag) throw new OpError('precondition', `${rel} does not exist (If-Match: *)`);
    if (expect && expect.etags && !expect.etags.includes(tag)) throw new OpError('precondition', `${rel} changed since it was read (If-Match)`);
    await fsp.rename(path.join(dir, staged), path.join(dir, rel));
    return { entry: entryOf(rel, await fsp.lstat(path.join(dir, rel))), created: !st };
  } finally {
    await fsp.rm(path.join(dir, staged), { force: true });
  }
}

/**
 * Puts the top-level `names` of an extraction staged in `<rel>/.restore-<tag>/` in place in folder `rel`, all or
 * nothing (folder-ops.cjs swap: each name there before is renamed aside, and deleted once every rename worked).
 */
async function extract(dir, rel, tag, names, swap) {
  await folder(dir, rel);
  await swap(path.join(dir, rel), tag, names);
  return {};
}

/** The functions, for the local storage (the swap is folder-ops.cjs's). */
function exports(swap) {
  return {
    fileStat: stat,
    fileList: list,
    fileMkdir: mkdir,
    fileMove: move,
    fileRemove: remove,
    filePlace: place,
    fileExtract: (dir, rel, tag, names) => extract(dir, rel, tag, names, swap),
    fileFolder: folder,
    RESERVED,
  };
}

/** The command line in a helper container: `node folder-ops.cjs <command> DIR …` (JSON arguments as text). */
function commands(dir, a, swap) {
  return {
    stat: () => stat(dir, a[0]),
    folder: () => folder(dir, a[0]).then(() => ({})),
    list: () => list(dir, a[0], JSON.parse(a[1]), Number(a[2]), JSON.parse(a[3])),
    mkdir: () => mkdir(dir, a[0]),
    move: () => move(dir, a[0], a[1]),
    remove: () => remove(dir, a[0], a[1] === 'true'),
    place: () => place(dir, a[0], a[1], JSON.parse(a[2])),
    extract: () => extract(dir, a[0], a[1], a.slice(2), swap),
  };
}

module.exports = { exports, commands, OpError };
