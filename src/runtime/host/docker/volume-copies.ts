// NodeVolumes' copies between nodes (volume-storage.ts makes them part of each node's volumes; a move uses them
// through docker/nodes-environment.ts VolumeTransfer).
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { GAME_DIR } from './image';
import type { Listing, NodeVolumes, Volumes } from './volume-storage';

type Copies = Pick<NodeVolumes, 'exportVolume' | 'importVolume' | 'manifest' | 'snapshot' | 'exportChanges' | 'importChanges'>;

/** volume-storage.ts's own functions these use (passed in, so this file imports nothing of it but types). */
export interface VolumeParts {
  streamOut: (o: Volumes, serverId: string, paths: string[], ready?: Promise<unknown>) => Promise<Readable>;
  drop: (o: Volumes, serverId: string) => Promise<void>;
  create: (o: Volumes, serverId: string) => Promise<void>;
}

const archiveOf = (containerId: string, p: string) => `/containers/${containerId}/archive?path=${encodeURIComponent(p)}`;

/**
 * NodeVolumes' copies: the whole volume, and a live move's passes (docs/architecture.md "Moving a server"), with the
 * volume's own parts of volume-storage.ts: the stream out of a volume, and its removal and making.
 */
export function volumeCopies(o: Volumes, parts: VolumeParts): Copies {
  const { streamOut, drop, create } = parts;
  const run = <T>(serverId: string, args: string[], before?: (c: string) => Promise<void>, alongside?: () => Promise<void>) =>
    o.helpers.run<T>(o.volumeName(serverId), serverId, [args[0], GAME_DIR, ...args.slice(1)], before, alongside);
  const upload = async (c: string, content: Readable | Promise<Readable>): Promise<void> => {
    await o.engine.upload(archiveOf(c, GAME_DIR), await content, 'application/x-tar', 'PUT');
  };
  // A content still to come may fail before it is awaited (the source gone): its failure is the awaiter's, not unhandled.
  const later = (content: Readable | Promise<Readable>) => {
    if (content instanceof Promise) content.catch(() => undefined);
  };
  return {
    snapshot: (serverId) => run(serverId, ['snapshot']),
    async exportChanges(serverId) {
      // The helper that streams the changes out is made while the one that gathers them runs: the players are off.
      const counts = run<{ files: number; bytes: number; removed: number; listing: Listing }>(serverId, ['delta']);
      const [done, content] = await Promise.all([counts, streamOut(o, serverId, [`${GAME_DIR}/.gsh-move/delta/.`], counts)]);
      return { ...done, content };
    },
    async importChanges(serverId, content) {
      later(content);
      const applied = await run<{ listing: Listing }>(serverId, ['apply'], (c) => upload(c, content));
      return applied.listing;
    },
    exportVolume: (serverId, ready) => streamOut(o, serverId, [`${GAME_DIR}/.`], ready),
    async importVolume(serverId, content, durable = false) {
      later(content);
      await drop(o, serverId);
      await create(o, serverId);
      const volume = o.volumeName(serverId);
      if (!durable) return o.helpers.withVolume(volume, serverId, (c) => upload(c, content));
      // The flusher follows the copy as it lands (folder-ops.cjs flush), told it is whole by the sign put in after it.
      const tag = crypto.randomBytes(6).toString('hex');
      const sign = tar.pack();
      sign.entry({ name: '.gsh-move/', type: 'directory', mode: 0o755, ...o.user });
      sign.entry({ name: `.gsh-move/landed-${tag}`, mode: 0o644, ...o.user }, '');
      sign.finalize();
      await run(serverId, ['flush', tag], undefined, () => o.helpers.withVolume(volume, serverId, async (c) => {
        await upload(c, content);
        await upload(c, Readable.from(sign));
      }));
    },
    manifest: (serverId) => o.helpers.run(o.volumeName(serverId), serverId, ['manifest', GAME_DIR]),
  };
}
