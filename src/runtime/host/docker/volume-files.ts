import { messageOf } from '../../../errors';
import crypto from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import tar from 'tar-stream';
import { exactly } from '../local-files';
import { FileOpError, type FileEntry, type ServerStorage } from '../storage';
import { forEachEntry, repack, skip } from '../tar-entries';
import { EngineError, type Engine } from './engine';
import type { Helpers } from './helper-containers';
import type { KeptHelpers } from './kept-helpers';
import { GAME_DIR } from './image';

export interface VolumeFilesOptions {
  engine: Engine;
  helpers: Helpers;
  /** The server's kept helper (kept-helpers.ts), in which each operation runs when it can. */
  kept: KeptHelpers;
  volumeName: (serverId: string) => string;
  user: { uid: number; gid: number };
}

type Files = Pick<ServerStorage, 'fileStat' | 'fileList' | 'fileRead' | 'fileWrite' | 'fileMkdir' | 'fileMove' | 'fileRemove' | 'fileExportFolder' | 'fileExtract'>;

const archiveOf = (containerId: string, p: string) => `/containers/${containerId}/archive?path=${encodeURIComponent(p)}`;
const inVolume = (rel: string) => (rel === '' ? `${GAME_DIR}/.` : `${GAME_DIR}/${rel}`);

/**
 * The upload's body as a tar of one file, `name`, of exactly `size` bytes, owned by the game's user. The body can
 * fail before the engine reads the archive (the client went away, or sent less than it said), and an 'error' nobody
 * listens for ends the process: the pack is listened to from the start, and the upload, reading it, rejects with it.
 */
function oneFileTar(content: Readable, size: number, name: string, user: { uid: number; gid: number }) {
  const pack = tar.pack();
  pack.on('error', () => undefined);
  const body = content.pipe(exactly(size));
  content.once('error', (err) => body.destroy(err));
  body.pipe(pack.entry({ name, size, mode: 0o644, uid: user.uid, gid: user.gid }, (err) => (err ? pack.destroy(err) : pack.finalize())));
  body.once('error', (err) => pack.destroy(err));
  return { pack, body };
}

/**
 * A customer's files in a server's Docker volume on its node (storage.ts states each method's contract): every check
 * and change is file-ops.cjs run by a helper container (helper-containers.ts) that mounts only the volume, and the
 * bytes cross through the engine's archive endpoints, so nothing of this host is mounted and no link in the volume is
 * followed. A volume that does not exist answers `not_found` (a helper would otherwise make an empty one).
 */
export function volumeFiles(o: VolumeFilesOptions): Files {
  const { engine } = o;
  const op = <T>(serverId: string, args: string[], before?: (containerId: string) => Promise<void>) => runOp<T>(o, serverId, args, before);
  const download = (serverId: string, p: string) => archiveFrom(o, serverId, p);

  return {
    fileStat: (id, rel) => op(id, ['stat', rel]),
    fileList: (id, rel, after, limit, hide) => op(id, ['list', rel, JSON.stringify(after), String(limit), JSON.stringify(hide)]),
    fileMkdir: (id, rel) => op(id, ['mkdir', rel]),
    fileMove: (id, from, to) => op(id, ['move', from, to]),
    async fileRemove(id, rel, recursive) {
      await op(id, ['remove', rel, String(recursive)]);
    },
    async fileRead(id, rel, asked) {
      const entry = await op<FileEntry>(id, ['stat', rel]);
      const range = typeof asked === 'function' ? asked(entry) : asked;
      if (entry.type !== 'file') throw new FileOpError(entry.type === 'directory' ? 'is_a_folder' : 'symlink', `${rel} is not a file`);
      const archive = await download(id, inVolume(rel));
      return { entry, content: firstEntry(archive, range) };
    },
    async fileWrite(id, rel, content, size, expect) {
      const staged = `.gsh-upload-${crypto.randomBytes(9).toString('base64url')}`;
      const { pack, body } = oneFileTar(content, size, staged, o.user);
      try {
        return await op(id, ['place', staged, rel, JSON.stringify(expect)], (c) =>
          engine.upload(archiveOf(c, GAME_DIR), Readable.from(pack), 'application/x-tar', 'PUT').then(() => undefined),
        );
      } catch (err) {
        // Refused before the upload read it (no volume, no helper): the body and the pack end here, not never.
        body.destroy();
        pack.destroy();
        throw err;
      }
    },
    async fileExportFolder(id, rel) {
      await op(id, ['folder', rel]);
      return download(id, inVolume(rel));
    },
    async fileExtract(id, folder, tag, names, content) {
      await op(id, ['folder', folder]);
      const prefix = `${folder === '' ? '' : `${folder}/`}.restore-${tag}`;
      const staged = stagedTar(content, prefix, { uid: o.user.uid, gid: o.user.gid, uname: '', gname: '' });
      await op(id, ['extract', folder, tag, ...names], (c) => engine.upload(archiveOf(c, GAME_DIR), staged, 'application/x-tar', 'PUT').then(() => undefined));
    },
  };
}

/** One folder-ops.cjs operation on the server's volume, in its kept helper when it can (kept-helpers.ts); a refusal as FileOpError. */
async function runOp<T>(o: VolumeFilesOptions, serverId: string, args: string[], before?: (containerId: string) => Promise<void>): Promise<T> {
  const volume = o.volumeName(serverId);
  try {
    await o.engine.json('GET', `/volumes/${volume}`);
  } catch (err) {
    if (err instanceof EngineError && err.status === 404) throw new FileOpError('not_found', 'the server has no files');
    throw err;
  }
  try {
    return await o.kept.use(
      volume,
      serverId,
      async (h) => {
        await before?.(h.id);
        return h.run<T>(args);
      },
      () => o.helpers.run<T>(volume, serverId, [args[0], GAME_DIR, ...args.slice(1)], before),
    );
  } catch (err) {
    // folder-ops.cjs prints a refusal as `!{"code", "message"}` on stderr (file-ops.cjs OpError).
    const refusal = /!(\{.*?"code".*?\})/.exec(messageOf(err));
    if (refusal) {
      const { code, message } = JSON.parse(refusal[1]) as { code: FileOpError['refusal']; message: string };
      throw new FileOpError(code, message);
    }
    throw err;
  }
}

/** A stream of the engine's archive of `p` in the volume, from the kept helper (else one never started, which goes once it was read). */
function archiveFrom(o: VolumeFilesOptions, serverId: string, p: string): Promise<Readable> {
  return new Promise<Readable>((resolve, reject) => {
    const volume = o.volumeName(serverId);
    const serve = async (c: string) => {
      const out = await o.engine.download(archiveOf(c, p));
      resolve(out);
      await finished(out).catch(() => undefined); // the helper stays until it was read
    };
    o.kept.use(volume, serverId, (h) => serve(h.id), () => o.helpers.withVolume(volume, serverId, serve)).catch(reject);
  });
}

/**
 * A checked tar stream as the engine is to unpack it under `prefix`, owned by `owned`. Every folder gets an entry of
 * its own before what is in it: the engine makes a folder a name implies as root, and the games' user (the helpers'
 * too) could then neither write in it nor delete it.
 */
function stagedTar(content: Readable, prefix: string, owned: { uid: number; gid: number; uname: string; gname: string }): Readable {
  const made = new Set<string>();
  return repack(async (put) => {
    const folderEntry = (name: string) => put({ name: `${prefix}/${name}`, type: 'directory', mode: 0o755, ...owned }, Readable.from([]));
    await folderEntry('');
    await forEachEntry(content, async (header, body) => {
      const parts = header.name.replace(/\/+$/, '').split('/');
      for (let i = 1; i <= parts.length; i++) {
        const above = parts.slice(0, i).join('/');
        if (made.has(above) || (i === parts.length && header.type !== 'directory')) continue;
        made.add(above);
        await folderEntry(`${above}/`);
      }
      if (header.type === 'directory') return skip(body);
      await put({ ...header, ...owned, name: `${prefix}/${header.name}` }, body);
    });
  });
}

/** The content of the one file the engine's archive of a file holds, cut to `range` when given. */
function firstEntry(archive: Readable, range?: { start: number; end: number }): Readable {
  const out = new PassThrough();
  let pos = 0;
  let taken = false;
  forEachEntry(archive, async (_header, body) => {
    if (taken) return skip(body);
    taken = true;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      const from = range ? Math.max(0, range.start - pos) : 0;
      const to = range ? Math.min(chunk.length, range.end + 1 - pos) : chunk.length;
      pos += chunk.length;
      if (to > from && !out.write(chunk.subarray(from, to))) await new Promise((r) => out.once('drain', r));
    }
  }).then(() => out.end(), (err: unknown) => out.destroy(err as Error));
  out.once('close', () => archive.destroy());
  return out;
}
