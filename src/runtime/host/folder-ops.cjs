#!/usr/bin/env node
'use strict';
/**
 * What is done inside a server's files that needs more than the engine's archive endpoints, as one small program
 * with no dependency: the local storage requires it (restore.ts), and on a node a short-lived helper container with
 * the server's volume runs it (docker/volume-storage.ts), the game image holding it at this same path.
 *
 *   node folder-ops.cjs usage DIR                   prints {"bytes": n}: what the files take (docs/architecture.md
 *                                                   "Disk": each entry the larger of its length and its blocks;
 *                                                   links counted as themselves, never followed)
 *   node folder-ops.cjs manifest DIR                prints {"digest", "files", "bytes"}: a digest of every entry's
 *                                                   path, kind, size, mode and content, to compare two copies
 *   node folder-ops.cjs prepare DIR [SUBDIR…]      recovers a restore a kill -9 interrupted, makes the subfolders
 *   node folder-ops.cjs swap DIR TAG PATH…          swaps DIR/.restore-TAG/PATH… in for DIR/PATH…, all or nothing
 *   node folder-ops.cjs stat|list|mkdir|move|remove|place|extract DIR …
 *                                                   a customer's files (file-ops.cjs, docs/architecture.md "Server files")
 *
 * Exit code 0 with one JSON line on stdout, or 1 with the reason on stderr.
 */
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

async function usage(dir) {
  const root = await fsp.lstat(dir);
  let bytes = Math.max(root.size, root.blocks * 512);
  for await (const [, st] of walk(dir)) bytes += Math.max(st.size, st.blocks * 512);
  return { bytes };
}

function fileSha256(file) {
  return new Promise((resolve, reject) => {
    const hash = crypto.createHash('sha256');
    fs.createReadStream(file).on('error', reject).on('data', (d) => hash.update(d)).on('end', () => resolve(hash.digest('hex')));
  });
}

async function manifest(dir) {
  const digest = crypto.createHash('sha256');
  let files = 0;
  let bytes = 0;
  for await (const [rel, st] of walk(dir)) {
    const kind = st.isDirectory() ? 'd' : st.isSymbolicLink() ? 'l' : st.isFile() ? 'f' : 'o';
    let content = '';
    if (kind === 'f') {
      content = await fileSha256(path.join(dir, rel));
      files++;
      bytes += st.size;
    } else if (kind === 'l') content = await fsp.readlink(path.join(dir, rel));
    digest.update(`${JSON.stringify(rel)} ${kind} ${kind === 'd' ? 0 : st.size} ${(st.mode & 0o7777).toString(8)} ${content}\n`);
  }
  return { digest: digest.digest('hex'), files, bytes };
}

/**
 * Finishes or undoes what an interrupted restore left (docs/architecture.md "Backups"): a kept `.old-<tag>-<p>` goes
 * back in place if `<p>` is missing (the swap had not put the backup in), else it is deleted (it had); a staging
 * `.restore-<tag>` folder is deleted, but for the one named `keep` (the restore under way).
 */
async function recover(dir, keep) {
  const exists = (p) => fsp.access(p).then(() => true, () => false);
  for (const name of await fsp.readdir(dir).catch(() => [])) {
    const kept = /^\.old-(?:bkp|ext)_[0-9A-Za-z]+-(.+)$/.exec(name);
    if (kept) {
      const live = path.join(dir, kept[1]);
      if (!(await exists(live))) await fsp.rename(path.join(dir, name), live);
      else await fsp.rm(path.join(dir, name), { recursive: true, force: true });
    } else if (name.startsWith('.restore-bkp_') && name !== keep) await fsp.rm(path.join(dir, name), { recursive: true, force: true });
    else if (/^\.(restore-ext_|gsh-upload-)/.test(name) && name !== keep && (await stale(path.join(dir, name)))) {
      // An extraction's staging or an upload's file left by a kill: only once old, as one may be under way now.
      await fsp.rm(path.join(dir, name), { recursive: true, force: true });
    }
  }
}

/** Whether a staging entry is older than an hour (an upload or extraction under way touches it all the time). */
async function stale(p) {
  const st = await fsp.lstat(p).catch(() => null);
  return st !== null && Date.now() - st.mtimeMs > 3600_000;
}

async function prepare(dir, subdirs) {
  await recover(dir);
  for (const sub of subdirs) await fsp.mkdir(path.join(dir, sub), { recursive: true });
  return {};
}

/**
 * Puts `paths` of the staging folder in place of the live ones: each live folder renamed aside, the restored one
 * renamed in, and the old ones deleted only once every rename worked; on a failure the renames are undone. A kill
 * midway leaves what recover() finishes or undoes. The staging folder is deleted either way.
 */
async function swap(dir, tag, paths) {
  const staging = path.join(dir, `.restore-${tag}`);
  await recover(dir, `.restore-${tag}`);
  const done = [];
  try {
    for (const p of paths) await fsp.access(path.join(staging, p));
    for (const p of paths) {
      const live = path.join(dir, p);
      const old = path.join(dir, `.old-${tag}-${p}`);
      const had = await fsp.access(live).then(() => true, () => false);
      if (had) await fsp.rename(live, old);
      done.push({ live, old: had ? old : null });
      await fsp.rename(path.join(staging, p), live);
    }
  } catch (err) {
    for (const { live, old } of done.reverse()) {
      // Undo: the restored folder goes back to staging (removed with it), the kept one back in place.
      await fsp.rename(live, path.join(staging, `undo-${path.basename(live)}`)).catch(() => undefined);
      if (old) await fsp.rename(old, live);
    }
    throw err;
  } finally {
    await fsp.rm(staging, { recursive: true, force: true });
  }
  for (const { old } of done) if (old) await fsp.rm(old, { recursive: true, force: true });
  return {};
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
 *                  it) and link target, to compare the two copies without reading every file again.
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

/**
 * Writes every file's data to the disk (fsync). The new node after a first pass: the kernel would otherwise write
 * that copy back later, from 30 s on (vm.dirty_expire_centisecs), as the game stops and starts, and the players wait.
 */
async function flush(dir) {
  let files = 0;
  for await (const [rel, st] of walkFiles(dir)) {
    if (!st.isFile()) continue;
    const handle = await fsp.open(path.join(dir, rel), 'r');
    await handle.sync().finally(() => handle.close());
    files++;
  }
  return { files };
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

const fileOps = require('./file-ops.cjs');

module.exports = { usage, manifest, recover, prepare, swap, snapshot, delta, apply, listing, flush, ...fileOps.exports(swap) };

if (require.main === module) {
  const [command, dir, ...rest] = process.argv.slice(2);
  try {
    const run = {
      usage: () => usage(dir),
      manifest: () => manifest(dir),
      prepare: () => prepare(dir, rest),
      swap: () => swap(dir, rest[0], rest.slice(1)),
      snapshot: () => snapshot(dir),
      delta: () => delta(dir),
      apply: () => apply(dir),
      listing: () => listing(dir),
      flush: () => flush(dir),
      ...fileOps.commands(dir, rest, swap),
    }[command];
    if (!run || !dir) throw new Error(`usage: folder-ops.cjs usage|manifest|prepare|swap DIR …; got ${command}`);
    run().then(
      (out) => process.stdout.write(JSON.stringify(out) + '\n'),
      (err) => {
        // A customer's mistake (a missing file, a name taken) travels as its code: file-ops.cjs OpError.
        if (err && err.op) process.stderr.write(`!${JSON.stringify({ code: err.op, message: err.message })}\n`);
        process.stderr.write(`${err && err.message}\n`);
        process.exitCode = 1;
      },
    );
  } catch (err) {
    process.stderr.write(`${err && err.message}\n`);
    process.exitCode = 1;
  }
}
