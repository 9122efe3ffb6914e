// The VolumeTransfer of a move between two named nodes (its contract: nodes-environment.ts; docs/architecture.md
// "Moving a server"). A live move keeps one helper per node from its first pass to its end (move-helpers.ts).
import { GAME_DIR } from './image';
import type { MoveHelper } from './move-helpers';
import type { NodeParts, VolumeTransfer } from './nodes-environment';
import type { Listing } from './volume-storage';

type Hold = Parameters<VolumeTransfer['firstPass']>[3];

/** What the transfer needs of the nodes: a node's parts by name, and whether it answers. */
export interface TransferNodes {
  named: (name: string) => NodeParts;
  reachable: (name: string) => boolean;
}

/** A move's helpers on its old (`source`) and new (`target`, node `to`) node, from its first pass until released. */
interface Kept {
  source: Promise<MoveHelper>;
  target: Promise<MoveHelper>;
  to: string;
  /** The first pass's copy on the new node's disk (NodeVolumes.land): the last pass waits for it, not the players. */
  flushed?: Promise<void>;
  /** Each one's removal, once begun. */
  gone: { source?: Promise<void>; target?: Promise<void> };
}

/** What the pieces below share: the nodes, and each move's helpers by server. */
interface Moves {
  named: TransferNodes['named'];
  kept: Map<string, Kept>;
}

/** Removes one of the move's helpers (one that never started is nothing to remove); begun once. */
const letGo = (k: Kept, which: 'source' | 'target') => (k.gone[which] ??= k[which].then((h) => h.remove(), () => undefined));

async function release(m: Moves, serverId: string): Promise<void> {
  const k = m.kept.get(serverId);
  if (!k) return;
  await Promise.all([letGo(k, 'source'), letGo(k, 'target')]);
  if (m.kept.get(serverId) === k) m.kept.delete(serverId);
}

/**
 * The transfer, and `write`: ServerStorage.write through the target's helper of a move that copied (the start on the
 * new node, moves.ts), which then goes; false when there is none (the caller writes as usual).
 */
export function volumeTransfer(nodes: TransferNodes): VolumeTransfer & { write: (serverId: string, node: string, subdirs: string[], files: Record<string, string>) => Promise<boolean> } {
  const m: Moves = { named: nodes.named, kept: new Map() };
  return {
    copy: (serverId, from, to) => copy(m, serverId, from, to),
    firstPass: (serverId, from, to, hold) => firstPass(m, serverId, from, to, hold),
    catchUp: (serverId, from, to, underWay) => catchUp(m, serverId, from, to, underWay),
    release: (serverId) => release(m, serverId),
    async write(serverId, node, subdirs, files) {
      const k = m.kept.get(serverId);
      if (!k || k.to !== node || k.gone.target) return false;
      const storage = m.named(node).storage;
      try {
        await storage.ensure(serverId); // as ServerStorage.write begins (volume-storage.ts)
        await storage.writeWith(await k.target, serverId, subdirs, files);
        return true;
      } catch {
        return false; // the helper is gone (its engine restarted): the usual write, which writes it all again
      } finally {
        void letGo(k, 'target'); // release() awaits it
      }
    },
    async prestart(to, spec) {
      try {
        await m.named(to).environment.prestart?.(spec);
      } catch {
        // No such node any more: the switch refuses the move.
      }
    },
    async drop(serverId, node) {
      const parts = m.named(node);
      await parts.environment.uninstall(serverId);
      await parts.storage.drop(serverId);
    },
    reachable: (node) => nodes.reachable(node),
  };
}

const differs = (mine: Listing, theirs: Listing) =>
  new Error(`the copy differs from the original (${theirs.files} files, ${theirs.bytes} bytes of ${mine.files} files, ${mine.bytes} bytes)`);

/** VolumeTransfer.copy. */
async function copy(m: Moves, serverId: string, from: string, to: string) {
  const [source, target] = [m.named(from).storage, m.named(to).storage];
  await source.ensure(serverId);
  const content = await source.exportVolume(serverId);
  try {
    await target.importVolume(serverId, content);
  } finally {
    content.destroy(); // read to its end when the copy worked; given up otherwise
  }
  const [mine, theirs] = await Promise.all([source.manifest(serverId), target.manifest(serverId)]);
  if (mine.digest !== theirs.digest) throw differs(mine, theirs);
  return { files: mine.files, bytes: mine.bytes };
}

/** VolumeTransfer.firstPass. */
async function firstPass(m: Moves, serverId: string, from: string, to: string, hold: Hold): Promise<boolean> {
  const [source, target] = [m.named(from).storage, m.named(to).storage];
  if (!(await source.has(serverId))) return false;
  await release(m, serverId); // an earlier try's, if any
  // The record is made before the pass reads, never beside it: the game's saving is held, but not its logs,
  // nor a write through the Files API or SFTP, and a file written after the pass read its folder yet before
  // the record saw it would be recorded as copied and missed by the delta (seen in CI, a file of 8 MB). Any
  // write after the record is the delta's, so it is made while the game pauses its saving, not after; the new
  // volume and its helper are made meanwhile. The pass reads once the game paused and the record is made; the
  // copy is written to the disk on the new node as it lands (NodeVolumes.land), the last of it while the game stops.
  let paused: () => void = () => undefined;
  let refused: (err: unknown) => void = () => undefined;
  const pausing = new Promise<void>((resolve, reject) => ((paused = resolve), (refused = reject)));
  const k: Kept = { source: source.moveHelper(serverId), target: target.freshVolume(serverId), to, gone: {} };
  m.kept.set(serverId, k);
  const recorded = k.source.then((h) => source.snapshot(h));
  const content = Promise.all([k.source, recorded, pausing]).then(([h]) => h.get(`${GAME_DIR}/.`));
  const landed = k.target.then((h) => target.land(h, content));
  k.flushed = landed.then((l) => l.flushed);
  // Each awaited below (k.flushed by catchUp); one that fails before then is not left unhandled.
  for (const p of [recorded, content, landed, k.flushed]) p.catch(() => undefined);
  try {
    await hold(async () => {
      paused();
      await landed;
    });
  } catch (err) {
    refused(err); // the game did not pause, or the copy failed: nothing more is read, both helpers removed
    await Promise.allSettled([recorded, landed]);
    await release(m, serverId);
    throw err;
  } finally {
    (await content.catch(() => null))?.destroy();
  }
  return true;
}

/**
 * The last pass's helpers: the first pass's, kept (one exec each, no container made in the players' downtime), once
 * both engines take a new connection: an engine on its way down still serves the connections it has and the helper
 * it runs, and must fail the move here (test/docker/moves.test.ts), not finish it. A move carried on at boot has none
 * kept: new ones, made at once on both nodes.
 */
async function lastPassHelpers(m: Moves, serverId: string, from: string, to: string): Promise<Kept> {
  const was = m.kept.get(serverId);
  if (was && was.to === to && !was.gone.source && !was.gone.target) {
    await Promise.all([m.named(from).engine.acceptsNew(), m.named(to).engine.acceptsNew()]);
    return was;
  }
  if (was) await release(m, serverId);
  const k: Kept = { source: m.named(from).storage.moveHelper(serverId), target: m.named(to).storage.moveHelper(serverId), to, gone: {} };
  m.kept.set(serverId, k);
  return k;
}

/** VolumeTransfer.catchUp. */
async function catchUp(m: Moves, serverId: string, from: string, to: string, underWay: () => void = () => undefined) {
  const [source, target] = [m.named(from).storage, m.named(to).storage];
  let k: Kept;
  try {
    k = await lastPassHelpers(m, serverId, from, to);
  } catch (err) {
    await release(m, serverId);
    throw err;
  }
  underWay();
  const exported = k.source.then((h) => source.exportChanges(h));
  // The first pass's copy on the disk before anything more lands (a move carried on at boot: all of it again).
  const durable = k.flushed ?? k.target.then((h) => h.run<unknown>(['flush']));
  const imported = Promise.all([k.target, durable]).then(([h]) => target.importChanges(h, exported.then((c) => c.content)));
  let changes, theirs;
  try {
    [changes, theirs] = await Promise.all([exported, imported]);
  } catch (err) {
    await release(m, serverId);
    throw err;
  } finally {
    (await exported.catch(() => null))?.content.destroy();
    await imported.catch(() => undefined);
  }
  // The old node's helper goes, not awaited (the players wait for the start; release() awaits it); the new
  // node's writes the start's files (`write`).
  void letGo(k, 'source');
  const mine = changes.listing;
  if (mine.digest !== theirs.digest) throw differs(mine, theirs);
  return { files: mine.files, bytes: mine.bytes, changed: changes.files, changedBytes: changes.bytes, removed: changes.removed };
}
