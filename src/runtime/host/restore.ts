import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../paths';
import { forEachEntry, gunzipped, skip } from './tar-entries';

/**
 * The operations inside a server's files (folder-ops.cjs), shared with the helper containers of a node, whose image
 * holds the file at this same path (docker/image.ts). Plain JavaScript, loaded from src/ also when the service
 * runs from dist/, as the software launchers are.
 */
export const FOLDER_OPS = path.join(packageRoot(), 'src', 'runtime', 'host', 'folder-ops.cjs');
/** What folder-ops.cjs requires for a customer's files (storage.ts), beside it in the image too. */
export const FILE_OPS = path.join(packageRoot(), 'src', 'runtime', 'host', 'file-ops.cjs');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const folderOps = require(FOLDER_OPS) as {
  swap(dir: string, tag: string, paths: string[]): Promise<object>;
  recover(dir: string): Promise<void>;
};

const run = promisify(execFile);

/**
 * Throws unless every entry of the gzipped tar `archive` is a plain file or folder inside one of `paths` (no link,
 * no special file, no absolute name, no `..`), so an archive can never write outside a server's files
 * (SECURITY.md). Read as a stream (tar-entries.ts), never held whole.
 */
export async function checkArchive(archive: string, paths: string[]): Promise<void> {
  await forEachEntry(gunzipped(archive), async (header, content) => {
    const problem = entryProblem(header, paths);
    if (problem) throw new Error(problem);
    await skip(content);
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
 * Swaps a backup's folders into a server folder (docs/architecture.md "Backups"), or throws leaving it as it was:
 * the archive's entries are checked (checkArchive), it is unpacked into a staging folder beside the world, and only
 * then are the folders renamed in, the old ones kept until every rename worked. The caller checked its SHA-256.
 */
export async function swapIn(dir: string, paths: string[], archive: string, tag: string): Promise<void> {
  await checkArchive(archive, paths);
  const staging = path.join(dir, `.restore-${tag}`);
  await fs.promises.rm(staging, { recursive: true, force: true });
  await fs.promises.mkdir(staging);
  try {
    await run('tar', ['-xzf', archive, '-C', staging, '--no-same-owner', '--no-same-permissions']);
    await folderOps.swap(dir, tag, paths); // deletes the staging folder either way
  } finally {
    await fs.promises.rm(staging, { recursive: true, force: true });
  }
}

/** The SHA-256 of a file, in hex, read as a stream. */
export function fileSha256(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = crypto.createHash('sha256');
    fs.createReadStream(file).on('error', reject).on('data', (d) => hash.update(d)).on('end', () => resolve(hash.digest('hex')));
  });
}

/**
 * Boot: finishes or undoes what a restore a `kill -9` interrupted left in a server folder (folder-ops.cjs recover: a
 * kept `.old-<tag>-<p>` goes back in place if `<p>` is missing, else it is deleted; a staging folder is deleted).
 */
export function recoverSwaps(dir: string): Promise<void> {
  return folderOps.recover(dir);
}
