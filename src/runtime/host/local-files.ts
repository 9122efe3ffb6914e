import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FOLDER_OPS } from './restore';
import { FileOpError, type Expect, type FileEntry, type ServerStorage } from './storage';
import { forEachEntry, skip } from './tar-entries';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- folder-ops.cjs is not compiled: loaded by its path in src/, from src/ and dist/ alike
const ops = require(FOLDER_OPS) as {
  fileStat(dir: string, rel: string): Promise<FileEntry>;
  fileFolder(dir: string, rel: string): Promise<unknown>;
  fileList(dir: string, rel: string, after: [number, string] | null, limit: number, hide: string[]): Promise<{ entries: FileEntry[]; more: boolean }>;
  fileMkdir(dir: string, rel: string): Promise<FileEntry>;
  fileMove(dir: string, from: string, to: string): Promise<FileEntry>;
  fileRemove(dir: string, rel: string, recursive: boolean): Promise<object>;
  filePlace(dir: string, staged: string, rel: string, expect: Expect): Promise<{ entry: FileEntry; created: boolean }>;
  fileExtract(dir: string, rel: string, tag: string, names: string[]): Promise<object>;
};

/** A refusal of file-ops.cjs (its `op`) as a FileOpError; a missing server folder is `not_found`. */
export async function refusals<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    const e = err as { op?: string; code?: string; message: string };
    if (e.op) throw new FileOpError(e.op as FileOpError['refusal'], e.message);
    if (e.code === 'ENOENT') throw new FileOpError('not_found', 'the server has no files');
    throw err;
  }
}

/** Counts the bytes through; errors past `size`, and at the end unless exactly `size` came (a body cut short). */
export function exactly(size: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      done(seen > size ? new Error(`the body is longer than its ${size} bytes`) : null, chunk);
    },
    flush(done) {
      done(seen === size ? null : new Error(`the body ended after ${seen} of its ${size} bytes`));
    },
  });
}

/**
 * The buffer of a file's stream in a transfer (an upload's writes, a download's reads): each is one request to
 * libuv's thread pool, and with Node's defaults (16 KiB writes, 64 KiB reads) a 200 MB transfer makes thousands of
 * them, each a pause of the socket while it waits (BENCHMARKS.md §13).
 */
const FILE_BUFFER = 1024 * 1024;

const stagingName = () => `.gsh-upload-${crypto.randomBytes(9).toString('base64url')}`;
/** The note an extraction under way keeps at the top of the server's folder: which folder its staging is in. */
const extractNote = (tag: string) => `.gsh-extract-${tag}`;

/**
 * Removes what writes under way at a `kill -9` left in a server's folder `top` (storage.ts start: at boot, when
 * none is under way, so whatever their age): uploads' staging files, and extractions' staging folders, found
 * through the notes their extractions keep at the top (a staging folder sits in the folder extracted into, maybe
 * deep). Returns how many it removed.
 */
export async function sweepStaging(top: string): Promise<number> {
  let removed = 0;
  for (const name of await fs.promises.readdir(top).catch(() => [] as string[])) {
    const note = /^\.gsh-extract-(ext_[0-9a-f]+)$/.exec(name);
    if (note) {
      const folder = await fs.promises.readFile(path.join(top, name), 'utf8').catch(() => null);
      // The note names a folder this service checked (file-paths.ts); `..` never, but refuse one all the same.
      if (folder !== null && !folder.split('/').includes('..')) await fs.promises.rm(path.join(top, folder, `.restore-${note[1]}`), { recursive: true, force: true });
    } else if (!/^\.(gsh-upload-|restore-ext_)/.test(name)) continue;
    await fs.promises.rm(path.join(top, name), { recursive: true, force: true });
    removed++;
  }
  return removed;
}

/**
 * A customer's files in a server's folder (RUNTIME=local; storage.ts states each method's contract), through
 * file-ops.cjs as a node's helpers run it, so both runtimes check paths, links and preconditions the same way.
 */
export function localFiles(dir: (serverId: string) => string, tarOf: (dir: string, paths: string[]) => Promise<Readable>): Pick<ServerStorage, 'fileStat' | 'fileList' | 'fileRead' | 'fileWrite' | 'fileAdopt' | 'fileMkdir' | 'fileMove' | 'fileRemove' | 'fileExportFolder' | 'fileExtract'> {
  const root = async (serverId: string) => {
    await refusals(fs.promises.access(dir(serverId)));
    return dir(serverId);
  };
  return {
    fileStat: async (id, rel) => refusals(ops.fileStat(await root(id), rel)),
    fileList: async (id, rel, after, limit, hide) => refusals(ops.fileList(await root(id), rel, after, limit, hide)),
    fileMkdir: async (id, rel) => refusals(ops.fileMkdir(await root(id), rel)),
    fileMove: async (id, from, to) => refusals(ops.fileMove(await root(id), from, to)),
    async fileRemove(id, rel, recursive) {
      await refusals(ops.fileRemove(await root(id), rel, recursive));
    },
    async fileRead(id, rel, asked) {
      const top = await root(id);
      const entry = await refusals(ops.fileStat(top, rel));
      const range = typeof asked === 'function' ? asked(entry) : asked;
      if (entry.type !== 'file') throw new FileOpError(entry.type === 'directory' ? 'is_a_folder' : 'symlink', `${rel} is not a file`);
      // O_NOFOLLOW: a link put in its place since the check is refused, not followed.
      const handle = await refusals(fs.promises.open(path.join(top, rel), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW));
      return { entry, content: handle.createReadStream({ ...range, highWaterMark: FILE_BUFFER }) };
    },
    async fileWrite(id, rel, content, size, expect) {
      const top = await root(id);
      const staged = stagingName();
      try {
        await pipeline(content, exactly(size), fs.createWriteStream(path.join(top, staged), { flags: 'wx', mode: 0o644, highWaterMark: FILE_BUFFER }));
      } catch (err) {
        await fs.promises.rm(path.join(top, staged), { force: true });
        throw err;
      }
      return refusals(ops.filePlace(top, staged, rel, expect));
    },
    async fileAdopt(id, rel, file, size, expect) {
      const top = await root(id);
      const staged = path.join(top, stagingName());
      // The mode an upload has (fileWrite), then the rename: the same file system or nothing (rename(2) EXDEV).
      await fs.promises.chmod(file, 0o644);
      try {
        await fs.promises.rename(file, staged);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EXDEV') return null;
        throw err;
      }
      const st = await fs.promises.lstat(staged);
      if (!st.isFile() || st.size !== size) {
        await fs.promises.rm(staged, { force: true });
        throw new Error(`the file to adopt has ${st.size} bytes, not ${size}`);
      }
      return refusals(ops.filePlace(top, path.basename(staged), rel, expect));
    },
    async fileExportFolder(id, rel) {
      const top = await root(id);
      await refusals(ops.fileFolder(top, rel));
      return rel === '' ? tarOf(top, ['.']) : tarOf(path.join(top, path.dirname(rel)), [path.basename(rel)]);
    },
    async fileExtract(id, folder, tag, names, content) {
      const top = await root(id);
      await refusals(ops.fileFolder(top, folder));
      const staging = path.join(top, folder, `.restore-${tag}`);
      await fs.promises.writeFile(path.join(top, extractNote(tag)), folder, { flag: 'wx', mode: 0o600 });
      try {
        await fs.promises.mkdir(staging);
        await unpack(staging, content);
        await refusals(ops.fileExtract(top, folder, tag, names)); // deletes the staging folder either way
      } finally {
        await fs.promises.rm(staging, { recursive: true, force: true });
        await fs.promises.rm(path.join(top, extractNote(tag)), { force: true });
      }
    },
  };
}

/** Writes a checked tar stream's plain files and folders under `staging` (names relative, never `..`). */
async function unpack(staging: string, content: Readable): Promise<void> {
  await forEachEntry(content, async (header, body) => {
    const rel = header.name.replace(/\/+$/, '');
    if (rel.split('/').some((p) => p === '..' || p === '') || path.isAbsolute(rel)) throw new Error(`unsafe entry ${rel}`);
    const target = path.join(staging, rel);
    if (header.type === 'directory') {
      await fs.promises.mkdir(target, { recursive: true });
      return skip(body);
    }
    if (header.type !== 'file') throw new Error(`not a plain file: ${rel}`);
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    await pipeline(body, fs.createWriteStream(target, { flags: 'wx', mode: 0o644 }));
  });
}
