// NodeVolumes' copies between nodes (volume-storage.ts makes them part of each node's volumes; a move uses them
// through docker/nodes-environment.ts VolumeTransfer).
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { GAME_DIR } from './image';
import { startMoveHelper, type MoveHelper } from './move-helpers';
import type { Listing, NodeVolumes, Volumes } from './volume-storage';

type Copies = Pick<NodeVolumes, 'exportVolume' | 'importVolume' | 'manifest' | 'moveHelper' | 'freshVolume' | 'snapshot' | 'land' | 'exportChanges' | 'importChanges' | 'writeWith'>;

/** volume-storage.ts's own functions these use (passed in, so this file imports nothing of it but types). */
export interface VolumeParts {
  streamOut: (o: Volumes, serverId: string, paths: string[], ready?: Promise<unknown>) => Promise<Readable>;
  drop: (o: Volumes, serverId: string) => Promise<void>;
  create: (o: Volumes, serverId: string) => Promise<void>;
  filesToWrite: (o: Volumes, serverId: string, files: Record<string, string>) => Promise<Readable>;
}

const archiveOf = (containerId: string, p: string) => `/containers/${containerId}/archive?path=${encodeURIComponent(p)}`;

/**
 * NodeVolumes' copies: the whole volume, and a live move's passes (docs/architecture.md "Moving a server") in the
 * move's helper of each node (move-helpers.ts), with the volume's own parts of volume-storage.ts: the stream out of
 * a volume, and its removal and making.
 */
export function volumeCopies(o: Volumes, parts: VolumeParts): Copies {
  const { streamOut, drop, create, filesToWrite } = parts;
  const upload = async (c: string, content: Readable | Promise<Readable>): Promise<void> => {
    await o.engine.upload(archiveOf(c, GAME_DIR), await content, 'application/x-tar', 'PUT');
  };
  // A content still to come may fail before it is awaited (the source gone): its failure is the awaiter's, not unhandled.
  const later = (content: Readable | Promise<Readable>) => {
    if (content instanceof Promise) content.catch(() => undefined);
  };
  const moveHelper = (serverId: string) => startMoveHelper(o.engine, o.helpers, o.volumeName(serverId), serverId);
  return {
    moveHelper,
    async freshVolume(serverId) {
      await drop(o, serverId);
      await create(o, serverId);
      return moveHelper(serverId);
    },
    snapshot: (helper) => helper.run(['snapshot']),
    async land(helper, content) {
      later(content);
      // The flusher follows the copy as it lands (folder-ops.cjs flush), told it is whole by the sign put in after it.
      const tag = crypto.randomBytes(6).toString('hex');
      const sign = tar.pack();
      sign.entry({ name: '.gsh-move/', type: 'directory', mode: 0o755, ...o.user });
      sign.entry({ name: `.gsh-move/landed-${tag}`, mode: 0o644, ...o.user }, '');
      sign.finalize();
      let uploaded: () => void = () => undefined;
      let failed: (err: unknown) => void = () => undefined;
      const up = new Promise<void>((resolve, reject) => ((uploaded = resolve), (failed = reject)));
      const flushed = helper.run<unknown>(['flush', tag], async () => {
        try {
          await helper.put(await content);
          await helper.put(Readable.from(sign));
          uploaded();
        } catch (err) {
          failed(err);
          throw err;
        }
      });
      flushed.catch(() => undefined); // the caller's to await
      await up;
      return { flushed: flushed.then(() => undefined) };
    },
    async exportChanges(helper) {
      const done = await helper.run<{ files: number; bytes: number; removed: number; listing: Listing }>(['delta']);
      return { ...done, content: await helper.get(`${GAME_DIR}/.gsh-move/delta/.`) };
    },
    async importChanges(helper, content) {
      later(content);
      await helper.put(await content);
      return (await helper.run<{ listing: Listing }>(['apply'])).listing;
    },
    async writeWith(helper, serverId, subdirs, files) {
      // As ServerStorage.write (volume-storage.ts), in the move's helper: the files put in, then `prepare`.
      await helper.put(await filesToWrite(o, serverId, files));
      await helper.run(['prepare', ...subdirs]);
    },
    exportVolume: (serverId, ready) => streamOut(o, serverId, [`${GAME_DIR}/.`], ready),
    async importVolume(serverId, content) {
      later(content);
      await drop(o, serverId);
      await create(o, serverId);
      await o.helpers.withVolume(o.volumeName(serverId), serverId, (c) => upload(c, content));
    },
    manifest: (serverId) => o.helpers.run(o.volumeName(serverId), serverId, ['manifest', GAME_DIR]),
  };
}

export type { MoveHelper };
