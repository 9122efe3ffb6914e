// One helper kept running per server for its Files API and SFTP work (docs/architecture.md "The Docker environment"):
// each operation is a `docker exec` in it (≈0.1–0.2 s) instead of a helper container made, started, waited for and
// removed (≈0.25–0.3 s), which a file manager's or an SFTP client's many small calls each paid (BENCHMARKS.md §13).
import type { Engine } from './engine';
import type { Helpers } from './helper-containers';
import { startMoveHelper, type MoveHelper } from './move-helpers';

/**
 * Most operations at once in one kept helper: its pids and memory limits are one helper's (helper-containers.ts), and
 * each operation is a Node process in it. More at once run in a helper container of their own, as without it.
 */
const AT_ONCE = 3;
/** A kept helper unused this long goes; the next operation starts another. */
const IDLE_MS = 30_000;

interface Kept {
  helper: Promise<MoveHelper | null>;
  busy: number;
  idle?: NodeJS.Timeout;
}

export interface KeptHelpers {
  /**
   * Runs `fn` with the server's kept helper (started on first use, `volume` at GAME_DIR), or `alone` when none can
   * serve: AT_ONCE operations already in it, or it could not start, or it no longer runs. The helper stays while
   * `fn` runs (a stream it serves included, if `fn` awaits its end), and goes IDLE_MS after its last use.
   */
  use<T>(volume: string, serverId: string, fn: (helper: MoveHelper) => Promise<T>, alone: () => Promise<T>): Promise<T>;
  /** Removes the server's kept helper, if any: before its volume goes (the engine refuses while one mounts it). */
  release(serverId: string): Promise<void>;
  /** Removes every kept helper (the service's shutdown); a next life's start would remove them anyway. */
  releaseAll(): Promise<void>;
}

export function keptHelpers(engine: Engine, helpers: Pick<Helpers, 'create'>): KeptHelpers {
  const kept = new Map<string, Kept>();
  const retire = (serverId: string, k: Kept): Promise<void> => {
    if (kept.get(serverId) === k) kept.delete(serverId);
    clearTimeout(k.idle);
    return k.helper.then((h) => h?.remove());
  };
  return {
    async use(volume, serverId, fn, alone) {
      let k = kept.get(serverId);
      if (k && k.busy >= AT_ONCE) return alone();
      if (!k) {
        const made: Kept = { helper: startMoveHelper(engine, helpers, volume, serverId).catch(() => null), busy: 0 };
        kept.set(serverId, made);
        k = made;
      }
      const mine = k;
      mine.busy++;
      clearTimeout(mine.idle);
      try {
        const helper = await mine.helper;
        if (!helper || !(await helper.running())) {
          void retire(serverId, mine);
          return await alone();
        }
        return await fn(helper);
      } finally {
        mine.busy--;
        if (mine.busy === 0 && kept.get(serverId) === mine) mine.idle = setTimeout(() => void retire(serverId, mine), IDLE_MS).unref();
      }
    },
    async release(serverId) {
      const k = kept.get(serverId);
      if (k) await retire(serverId, k);
    },
    async releaseAll() {
      await Promise.all([...kept].map(([serverId, k]) => retire(serverId, k)));
    },
  };
}
