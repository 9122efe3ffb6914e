'use strict';
// A live move's passes inside a server's files (docs/architecture.md "Moving a server"): folder-ops.cjs runs them
// (`node folder-ops.cjs snapshot|delta|apply|listing|flush DIR`), in a helper container on a node, and requires this
// file beside it (the image holds both, docker/image.ts), `walk` too.
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const fsp = fs.promises;

/** Every entry under `dir` (not `dir` itself), depth first in name order, as [relative path, lstat]. */
async function* walk(dir, prefix = '') {
  for (const name of (await fsp.readdir(path.join(dir, prefix))).sort()) {
    const rel = prefix ? `${prefix}/${name}` : name;
    const st = await fsp.lstat(path.join(dir, rel)).catch(() => null); // null: removed meanwhile
    if (!st) continue;
    yield [rel, st];
    if (st.isDirectory()) yield* walk(dir, rel);
  }
}

/**
 * A live move's passes (docs/architecture.md "Moving a server"), in the service's own folder of the files (`.gsh-`
 * names are never listed, file-ops.cjs RESERVED), which no pass walks:
 *   snapshot DIR   records every entry's kind, size, mode, mtime, ctime and inode (MOVE/listing.json) before the
 *                  first pass copies the volume while the game runs;
 *   delta DIR      with the game stopped: MOVE/delta holds what differs from that record (files hard-linked, so
 *                  nothing is copied here), and MOVE/delta/MOVE/removed.json the paths gone since; with DIR's listing
 *   apply DIR      on the new node, once that folder was unpacked into DIR: removes the paths gone, then MOVE; with
 *                  DIR's listing then (one helper each side, not three: the players are off meanwhile)
 *   listing DIR    a digest of every entry's path, kind, size, mode and mtime (seconds, as the engines' archives keep
 *                  it) and link target, to compare the two copies without reading every file again;
 *   flush DIR TAG  on the new node, while the first pass lands there: each file written to the disk as it lands.
 * A write after the record changes the file's ctime (and the kernel never lets it be set back), a rename its inode.
 */
const MOVE = '.gsh-move';
const kindOf = (st) => (st.isDirectory() ? 'd' : st.isSymbolicLink() ? 'l' : st.isFile() ? 'f' : 'o');
const stamp = (st) => (st.isDirectory() ? `d ${st.mode}` : `${kindOf(st)} ${st.size} ${st.mode} ${st.mtimeMs} ${st.ctimeMs} ${st.ino}`);

/** walk() but for the move's own folder. */
async function* walkFiles(dir) {
  for (const name of (await fsp.readdir(dir)).sort()) {
    if (name === MOVE) continue;
    const st = await fsp.lstat(path.join(dir, name)).catch(() => null);
    if (!st) continue;
    yield [name, st];
    if (st.isDirectory()) yield* walk(dir, name);
  }
}

/**
 * Runs while the first pass reads the volume (docker/nodes-environment.ts firstPass): it removes nothing, and the
 * record replaces the last one by a rename, so what the pass reads is never a file that vanishes midway.
 */
async function snapshot(dir) {
  await fsp.mkdir(path.join(dir, MOVE), { recursive: true });
  const seen = {};
  let files = 0;
  let bytes = 0;
  for await (const [rel, st] of walkFiles(dir)) {
    seen[rel] = stamp(st);
    if (st.isFile()) (files++, (bytes += st.size));
  }
  await fsp.writeFile(path.join(dir, MOVE, 'listing.json.new'), JSON.stringify(seen));
  await fsp.rename(path.join(dir, MOVE, 'listing.json.new'), path.join(dir, MOVE, 'listing.json'));
  return { files, bytes };
}

async function delta(dir) {
  const before = JSON.parse(await fsp.readFile(path.join(dir, MOVE, 'listing.json'), 'utf8'));
  const out = path.join(dir, MOVE, 'delta');
  await fsp.rm(out, { recursive: true, force: true });
  const made = new Set();
  // A folder of the delta has its original's mode: the new node's extraction gives it to the folder there.
  const folder = async (rel) => {
    if (made.has(rel)) return;
    await fsp.mkdir(path.join(out, rel));
    await fsp.chmod(path.join(out, rel), (await fsp.lstat(path.join(dir, rel))).mode & 0o7777);
    made.add(rel);
  };
  await folder('');
  const now = new Set();
  let files = 0;
  let bytes = 0;
  for await (const [rel, st] of walkFiles(dir)) {
    now.add(rel);
    if (before[rel] === stamp(st)) continue;
    const parts = rel.split('/');
    for (let i = 1; i < parts.length; i++) await folder(parts.slice(0, i).join('/'));
    const from = path.join(dir, rel);
    const to = path.join(out, rel);
    if (st.isDirectory()) await folder(rel);
    else if (st.isSymbolicLink()) await fsp.symlink(await fsp.readlink(from), to);
    else if (st.isFile()) {
      await fsp.link(from, to).catch(async () => {
        // Not ours to link (fs.protected_hardlinks): a copy, with the original's times (listing compares mtime).
        await fsp.copyFile(from, to);
        await fsp.utimes(to, st.atime, st.mtime);
      });
      files++;
      bytes += st.size;
    }
  }
  // A removed folder's entries go with it.
  const gone = new Set(Object.keys(before).filter((rel) => !now.has(rel)));
  const removed = [...gone].filter((rel) => !rel.split('/').some((_, i, parts) => i > 0 && gone.has(parts.slice(0, i).join('/'))));
  await fsp.mkdir(path.join(out, MOVE));
  await fsp.writeFile(path.join(out, MOVE, 'removed.json'), JSON.stringify(removed));
  return { files, bytes, removed: removed.length, listing: await listing(dir) };
}

async function apply(dir) {
  const removed = JSON.parse(await fsp.readFile(path.join(dir, MOVE, 'removed.json'), 'utf8'));
  for (const rel of removed) {
    if (typeof rel !== 'string' || rel.split('/').some((p) => p === '' || p === '.' || p === '..')) throw new Error(`not a path of the files: ${rel}`);
    // ENOTDIR: a folder that became a file meanwhile took its entries with it.
    await fsp.rm(path.join(dir, rel), { recursive: true, force: true }).catch((err) => {
      if (err.code !== 'ENOTDIR') throw err;
    });
  }
  await fsp.rm(path.join(dir, MOVE), { recursive: true, force: true });
  return { removed: removed.length, listing: await listing(dir) };
}

/** How often `flush DIR TAG` looks for what landed since, and how long it waits for anything at all. */
const FOLLOW_MS = 100;
const FOLLOW_IDLE_MS = 10 * 60_000;

/**
 * Writes every file's data to the disk (fsync). The new node during a first pass: the kernel would otherwise write
 * that copy back later, from 30 s on (vm.dirty_expire_centisecs), as the game stops and starts, and the players wait.
 * With TAG, it follows a copy that lands meanwhile (the engine unpacking an archive into DIR): every FOLLOW_MS, each
 * file whose stamp changed since its last fsync is written again (the unpacking only appends, so a file it still
 * writes has grown), a file not yet readable skipped; once MOVE/landed-TAG is there (the whole copy is in), a last
 * pass in which any failure counts, and the sign removed. So the disk writes the copy as it arrives, not after it.
 */
async function flush(dir, tag) {
  const synced = new Map(); // path → its stamp before its last fsync
  const one = async (rel, st, strict) => {
    try {
      const handle = await fsp.open(path.join(dir, rel), 'r');
      await handle.sync().finally(() => handle.close());
    } catch (err) {
      if (strict) throw err;
      return 0; // e.g. still the unpacker's (its owner is set once it is written): again next pass
    }
    synced.set(rel, stamp(st));
    return 1;
  };
  const pass = async (strict) => {
    let files = 0;
    try {
      for await (const [rel, st] of walkFiles(dir)) {
        if (st.isFile() && synced.get(rel) !== stamp(st)) files += await one(rel, st, strict);
      }
    } catch (err) {
      if (strict) throw err; // else the walk met a folder gone meanwhile: again next pass
    }
    return files;
  };
  if (tag === undefined) return { files: await pass(true) };
  if (!/^[0-9a-z]+$/.test(tag)) throw new Error(`not a tag: ${tag}`);
  const landed = path.join(dir, MOVE, `landed-${tag}`);
  let idleSince = Date.now();
  while (!(await fsp.access(landed).then(() => true, () => false))) {
    const cpu = process.cpuUsage();
    if ((await pass(false)) > 0) idleSince = Date.now();
    else if (Date.now() - idleSince > FOLLOW_IDLE_MS) throw new Error(`nothing landed for ${FOLLOW_IDLE_MS / 60_000} minutes`);
    // A world of many files takes a while to walk: resting twice the CPU time a pass took keeps this to a third of a
    // core at most (the fsyncs' own wait is the disk's, not a core's).
    const used = process.cpuUsage(cpu);
    await new Promise((resolve) => setTimeout(resolve, Math.max(FOLLOW_MS, (2 * (used.user + used.system)) / 1000)));
  }
  const last = await pass(true);
  await fsp.rm(landed, { force: true });
  return { files: synced.size, last };
}

async function listing(dir) {
  const digest = crypto.createHash('sha256');
  let files = 0;
  let bytes = 0;
  for await (const [rel, st] of walkFiles(dir)) {
    const kind = kindOf(st);
    const link = kind === 'l' ? await fsp.readlink(path.join(dir, rel)) : '';
    if (kind === 'f') (files++, (bytes += st.size));
    const mtime = kind === 'f' ? Math.floor(st.mtimeMs / 1000) : 0;
    digest.update(`${JSON.stringify(rel)} ${kind} ${kind === 'd' ? 0 : st.size} ${(st.mode & 0o7777).toString(8)} ${mtime} ${link}\n`);
  }
  return { digest: digest.digest('hex'), files, bytes };
}

module.exports = { walk, snapshot, delta, apply, listing, flush };
