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
 *   node folder-ops.cjs snapshot|delta|apply|listing|flush DIR …
 *                                                   a live move's passes (move-ops.cjs)
 *
 * Exit code 0 with one JSON line on stdout, or 1 with the reason on stderr.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const fsp = fs.promises;
// walk(dir): every entry under `dir`, depth first in name order, as [relative path, lstat]; and a live move's passes.
const { walk, snapshot, delta, apply, listing, flush } = require('./move-ops.cjs');

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
      flush: () => flush(dir, rest[0]),
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
