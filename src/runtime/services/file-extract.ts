// The world import (openapi/v1.yaml extractServerArchive; docs/architecture.md "Server files"): an uploaded .zip or
// .tar.gz received whole into DATA_DIR/tmp, checked entry by entry (file-archives.ts), then put in place all or
// nothing by the storage's fileExtract.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../../errors';
import { FileOpError } from '../host/storage';
import { asTar, checkArchive } from './file-archives';
import { bodySize, readOnly, writable, type WriteGate } from './file-guards';
import { checkedPath } from './file-paths';
import type { FilesDeps } from './files';

export type Replace = 'none' | 'entries' | 'folder';

/** The service's extract: the archive received whole here, checked, then put in place all or nothing. */
export function createExtract(deps: FilesDeps, gate: WriteGate) {
  const { storage } = deps;
  const exists = (serverId: string, p: string) =>
    storage.fileStat(serverId, p).then(
      () => true,
      (err: unknown) => {
        if (err instanceof FileOpError && err.refusal === 'not_found') return false;
        throw err;
      },
    );

  return async function extract(serverId: string, p: string | undefined, body: Readable, headers: Record<string, string | string[] | undefined>, strip: number, replace: Replace) {
    const dir = checkedPath(p, '/query/path', { top: replace !== 'folder', hidden: deps.hidden });
    const bytes = bodySize(deps, headers);
    writable(deps, serverId);
    const give = deps.transfers.take(deps.current());
    // The unpacked bytes are held in the plan's disk once known, before any is written (file-guards.ts Reservation).
    const held = gate.reserve(serverId);
    const file = path.join(deps.tmpDir, `extract-${crypto.randomBytes(9).toString('base64url')}`);
    try {
      await fs.promises.mkdir(deps.tmpDir, { recursive: true });
      await pipeline(body, limited(bytes), fs.createWriteStream(file, { flags: 'wx', mode: 0o600 }));
      const r = gate.room(serverId);
      const checked = await checkArchive(file, strip, r.limit - r.used, (need) =>
        new AppError('insufficient_storage', `The archive unpacks to more than ${need} bytes and the plan's disk has ${Math.max(0, r.limit - r.used)} left.`, undefined, undefined, r));
      const top = [...new Set(checked.entries.map((e) => e.name.split('/')[0]))];
      const [folder, names, prefix] = replace === 'folder' ? [path.posix.dirname(dir) === '.' ? '' : path.posix.dirname(dir), [path.posix.basename(dir)], `${path.posix.basename(dir)}/`] : [dir, top, ''];
      const inFolder = (name: string) => (folder === '' ? name : `${folder}/${name}`);
      for (const name of names) {
        readOnly(deps, serverId, inFolder(name));
        // The service's own folders (the console log's, RUNTIME=local) are not the customer's to replace.
        if (folder === '' && deps.hidden.includes(name)) throw new AppError('unsafe_archive', `The archive holds ${name}/ at its top, a name the service keeps for itself.`);
      }
      if (replace === 'none') {
        for (const name of names) {
          if (await exists(serverId, inFolder(name))) throw new AppError('file_conflict', `${name} already exists in the folder; extract with replace=entries to replace it.`);
        }
      }
      held.grow(checked.bytes);
      const tag = `ext_${crypto.randomBytes(9).toString('hex')}`;
      await gate.write(serverId, () => ({ operation: 'extract', path: dir, to: null, bytes: checked.bytes }), async () => {
        await storage.fileExtract(serverId, folder, tag, names, asTar(file, checked, strip, prefix));
        gate.wrote(serverId, checked.bytes);
      });
      const files = checked.entries.filter((e) => e.type === 'file').length;
      return { path: dir, names: names.slice(0, 100), files, folders: checked.entries.length - files, bytes: checked.bytes };
    } finally {
      held.release();
      give();
      await fs.promises.rm(file, { force: true });
    }
  };
}

/** Errors once more than `max` bytes came (a body longer than its Content-Length never lands whole). */
function limited(max: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _e, done) {
      seen += chunk.length;
      done(seen > max ? new AppError('payload_too_large', `The body is longer than its Content-Length, ${max}.`) : null, chunk);
    },
  });
}
