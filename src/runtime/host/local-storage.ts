import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { folderBytes } from './disk-usage';
import { localFiles, sweepStaging } from './local-files';
import { recoverSwaps, swapIn } from './restore';
import type { ServerStorage } from './storage';

/** The console log's folder in a server's folder (console-buffer.ts serverConsole writes `logs/console.log`). */
export const LOGS = 'logs';

/** Where a server's folder is on this host: `<DATA_DIR>/servers/<id>`, also the home of its console log. */
export function serverFolder(dataDir: string, serverId: string): string {
  return path.join(dataDir, 'servers', serverId);
}

/**
 * A server's files as a folder under DATA_DIR (RUNTIME=local; storage.ts states the contract): `<DATA_DIR>/servers/
 * <id>`, the game's working directory, its console log in `logs/` (counted in its disk use). Archives go through
 * the host's `tar`.
 */
export function createLocalStorage(dataDir: string): ServerStorage {
  const dir = (serverId: string) => serverFolder(dataDir, serverId);
  return {
    async start() {
      const ids = await fs.promises.readdir(path.join(dataDir, 'servers')).catch(() => [] as string[]);
      for (const id of ids) {
        await recoverSwaps(dir(id));
        await sweepStaging(dir(id)); // what uploads and extractions under way at a kill left
      }
    },
    gameDir: dir,
    ownNames: [LOGS],
    write: (serverId, subdirs, files) => writeFolder(dir(serverId), [...subdirs, LOGS], files),
    async remove(serverId) {
      await fs.promises.rm(dir(serverId), { recursive: true, force: true });
    },
    usage: (serverId, stop) => folderBytes(dir(serverId), stop),
    exportTar: (serverId, paths) => tarOf(dir(serverId), paths),
    importArchive: (serverId, paths, archive, beforeSwap) => swapIn(dir(serverId), paths, archive, beforeSwap),
    ...localFiles(dir, tarOf),
  };
}

/**
 * Makes `folder` with `subdirs` and writes `files` into it. The folder is the game's to write: a name it turned
 * into a symlink is removed and the file made anew (O_EXCL), never written through.
 */
export async function writeFolder(folder: string, subdirs: string[], files: Record<string, string>): Promise<void> {
  for (const sub of ['', ...subdirs]) await fs.promises.mkdir(path.join(folder, sub), { recursive: true });
  for (const [file, content] of Object.entries(files)) {
    await fs.promises.rm(path.join(folder, file), { force: true });
    await fs.promises.writeFile(path.join(folder, file), content, { flag: 'wx' });
  }
}

/**
 * `tar -cf -` of `paths` in `dir`, as a stream that errors when tar fails (a file unreadable midway). Rejects at
 * once when a path is missing. The child's output is piped before this returns, so none of it is lost to an early
 * exit.
 */
export async function tarOf(dir: string, paths: string[]): Promise<Readable> {
  for (const p of paths) await fs.promises.access(path.join(dir, p));
  const out = new PassThrough();
  const tar = spawn('tar', ['-cf', '-', '-C', dir, '--', ...paths], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  tar.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-500)));
  tar.stdout.pipe(out, { end: false });
  tar.once('error', (err) => out.destroy(err));
  tar.once('close', (code) => (code === 0 ? out.end() : out.destroy(new Error(`tar exited with ${code}: ${stderr.trim()}`))));
  out.once('close', () => tar.exitCode === null && tar.kill('SIGKILL')); // the reader gave up
  return out;
}
