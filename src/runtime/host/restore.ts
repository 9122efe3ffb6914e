import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { packageRoot } from '../../paths';
import type { RestoreArchive } from './storage';
import { forEachEntry, repack } from './tar-entries';

/**
 * The operations inside a server's files (folder-ops.cjs), shared with the helper containers of a node, whose image
 * holds the file at this same path (docker/image.ts). Plain JavaScript, loaded from src/ also when the service
 * runs from dist/, as the software launchers are.
 */
export const FOLDER_OPS = path.join(packageRoot(), 'src', 'runtime', 'host', 'folder-ops.cjs');
/** What folder-ops.cjs requires for a customer's files (storage.ts), beside it in the image too. */
export const FILE_OPS = path.join(packageRoot(), 'src', 'runtime', 'host', 'file-ops.cjs');
/** What folder-ops.cjs requires for a live move's passes (docs/architecture.md "Moving a server"), beside it too. */
export const MOVE_OPS = path.join(packageRoot(), 'src', 'runtime', 'host', 'move-ops.cjs');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- folder-ops.cjs is not compiled: loaded by its path in src/, from src/ and dist/ alike
const folderOps = require(FOLDER_OPS) as {
  swap(dir: string, tag: string, paths: string[]): Promise<object>;
  recover(dir: string): Promise<void>;
};

/**
 * A restore's archive (storage.ts RestoreArchive) read once, as the plain tar stream of its entries: each entry is
 * checked before it is passed on (a plain file or folder inside one of `paths`: no link, no special file, no
 * absolute name, no `..`), so no entry that could write outside a server's files ever reaches the consumer
 * (SECURITY.md); and the file's SHA-256 is compared with the recorded one once it is read. The stream errors at the
 * first bad entry, or, when the digest differs, before the tar's end: a consumer that keeps only what a stream gave
 * whole never keeps a damaged archive. Never held whole (tar-entries.ts).
 */
export function checkedArchive(archive: RestoreArchive, paths: string[]): Readable {
  return repack(async (put) => {
    const hash = crypto.createHash('sha256');
    const tap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
    const gunzip = zlib.createGunzip();
    const read = pipeline(fs.createReadStream(archive.file), tap, gunzip);
    try {
      await Promise.all([
        read,
        forEachEntry(gunzip, async (header, content) => {
          const problem = entryProblem(header, paths);
          if (problem) throw new Error(problem);
          await put(header, content);
        }),
      ]);
    } catch (err) {
      gunzip.destroy(); // the file is closed however far it was read (the pipeline ends with it)
      await read.catch(() => undefined);
      throw err;
    }
    if (hash.digest('hex') !== archive.sha256) throw new Error('the archive does not match its SHA-256');
  });
}

/** Why one entry may not be restored, or null. */
export function entryProblem(header: { name: string; type?: string | null }, paths: string[]): string | null {
  const name = header.name;
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (name.startsWith('/') || parts.includes('..') || !paths.includes(parts[0] ?? '')) {
    return `the archive holds ${JSON.stringify(name.slice(0, 100))}, outside ${paths.join(', ')}`;
  }
  if (header.type !== 'file' && header.type !== 'directory') return 'the archive holds links or special files';
  return null;
}

/**
 * Swaps a backup's folders into a server folder (docs/architecture.md "Backups"; storage.ts importArchive), or
 * throws leaving it as it was: the archive is read once, checked as it is unpacked into a staging folder beside the
 * world (checkedArchive), and only once it was whole and its SHA-256 right does `beforeSwap` run and are the folders
 * renamed in, the old ones kept until every rename worked.
 */
export async function swapIn(dir: string, paths: string[], archive: RestoreArchive, beforeSwap: () => Promise<void>): Promise<void> {
  const staging = path.join(dir, `.restore-${archive.tag}`);
  await fs.promises.rm(staging, { recursive: true, force: true });
  await fs.promises.mkdir(staging);
  try {
    await untar(checkedArchive(archive, paths), staging);
    await beforeSwap();
    await folderOps.swap(dir, archive.tag, paths); // deletes the staging folder either way
  } finally {
    await fs.promises.rm(staging, { recursive: true, force: true });
  }
}

/**
 * Unpacks the tar stream `source` into `dir` with tar(1), as the service's user (no owner or mode bits taken from
 * the entries). Rejects with the source's error when it fails (tar is stopped: what it unpacked is the caller's to
 * delete), or with tar's when tar fails.
 */
function untar(source: Readable, dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('tar', ['-x', '-f', '-', '-C', dir, '--no-same-owner', '--no-same-permissions'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let failed: Error | null = null;
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-500)));
    source.once('error', (err) => {
      failed ??= err;
      child.kill();
    });
    child.stdin.on('error', () => undefined); // EPIPE once tar exited: its exit code says why
    child.once('error', (err) => {
      failed ??= err;
    });
    child.once('close', (code) => {
      source.destroy();
      if (failed) reject(failed);
      else if (code !== 0) reject(new Error(`tar exited with ${code}: ${stderr.trim()}`));
      else resolve();
    });
    source.pipe(child.stdin);
  });
}

/**
 * Boot: finishes or undoes what a restore a `kill -9` interrupted left in a server folder (folder-ops.cjs recover: a
 * kept `.old-<tag>-<p>` goes back in place if `<p>` is missing, else it is deleted; a staging folder is deleted).
 */
export function recoverSwaps(dir: string): Promise<void> {
  return folderOps.recover(dir);
}
