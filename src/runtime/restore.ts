import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Swaps a backup's folders into a server folder (docs/architecture.md "Backups"), or throws leaving it as it was:
 * the archive's SHA-256 must match; every entry must be a plain file or folder inside one of `paths` (no link, no
 * absolute name, no `..`: an archive cannot write outside the folder, SECURITY.md); it is unpacked into a staging
 * folder beside the world, and only then are the folders renamed in, the old ones kept until every rename worked.
 */
export async function swapIn(dir: string, paths: string[], archive: string, sha256: string, tag: string): Promise<void> {
  if ((await fileSha256(archive)) !== sha256) throw new Error('the archive does not match its SHA-256');
  const names = (await run('tar', ['-tzf', archive], { maxBuffer: 64 * 1024 * 1024 })).stdout.split('\n').filter(Boolean);
  const kinds = (await run('tar', ['-tvzf', archive], { maxBuffer: 64 * 1024 * 1024 })).stdout.split('\n').filter(Boolean);
  for (const name of names) {
    const parts = name.split('/').filter(Boolean);
    if (name.startsWith('/') || parts.includes('..') || !paths.includes(parts[0])) throw new Error(`the archive holds ${JSON.stringify(name.slice(0, 100))}, outside ${paths.join(', ')}`);
  }
  if (kinds.some((line) => line[0] !== '-' && line[0] !== 'd')) throw new Error('the archive holds links or special files');
  const staging = path.join(dir, `.restore-${tag}`);
  await fs.promises.rm(staging, { recursive: true, force: true });
  await fs.promises.mkdir(staging);
  try {
    await run('tar', ['-xzf', archive, '-C', staging, '--no-same-owner', '--no-same-permissions']);
    for (const p of paths) await fs.promises.access(path.join(staging, p));
    await swap(dir, staging, paths, tag);
  } finally {
    await fs.promises.rm(staging, { recursive: true, force: true });
  }
}

async function swap(dir: string, staging: string, paths: string[], tag: string): Promise<void> {
  const done: Array<{ live: string; old: string | null }> = [];
  try {
    for (const p of paths) {
      const live = path.join(dir, p);
      const old = path.join(dir, `.old-${tag}-${p}`);
      const had = await fs.promises.access(live).then(() => true, () => false);
      if (had) await fs.promises.rename(live, old);
      done.push({ live, old: had ? old : null });
      await fs.promises.rename(path.join(staging, p), live);
    }
  } catch (err) {
    for (const { live, old } of done.reverse()) {
      // Undo: the restored folder goes back to staging (removed with it), the kept one back in place.
      await fs.promises.rename(live, path.join(staging, `undo-${path.basename(live)}`)).catch(() => undefined);
      if (old) await fs.promises.rename(old, live);
    }
    throw err;
  }
  for (const { old } of done) if (old) await fs.promises.rm(old, { recursive: true, force: true });
}

function fileSha256(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = crypto.createHash('sha256');
    fs.createReadStream(file).on('error', reject).on('data', (d) => hash.update(d)).on('end', () => resolve(hash.digest('hex')));
  });
}

/**
 * Boot: finishes or undoes what a restore a `kill -9` interrupted left in a server folder. A kept `.old-<tag>-<p>`
 * goes back in place if `<p>` is missing (the swap had not put the backup in), else it is deleted (it had); a
 * staging `.restore-<tag>` folder is deleted.
 */
export async function recoverSwaps(dir: string): Promise<void> {
  const entries = await fs.promises.readdir(dir).catch(() => [] as string[]);
  for (const name of entries) {
    const kept = /^\.old-bkp_[0-9A-Za-z]+-(.+)$/.exec(name);
    if (kept) {
      const live = path.join(dir, kept[1]);
      const missing = await fs.promises.access(live).then(() => false, () => true);
      if (missing) await fs.promises.rename(path.join(dir, name), live);
      else await fs.promises.rm(path.join(dir, name), { recursive: true, force: true });
    } else if (name.startsWith('.restore-bkp_')) await fs.promises.rm(path.join(dir, name), { recursive: true, force: true });
  }
}
