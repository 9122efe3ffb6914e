'use strict';
/**
 * Makes every change to a prismarine-world World reach its region files when the game stops, so the stop before a
 * backup (docs/architecture.md "Backups") and a plain stop never lose a block a console command already set.
 *
 * World.saveNow (prismarine-world 3.x, src/world.js) writes the columns in its saving queue and then clears the
 * queue. Two changes fall through that:
 *   - a change still in flight: setBlockStateId first awaits its column, read from disk when not in memory, and
 *     queues the column only after that, so a stop that arrives meanwhile finds nothing to save;
 *   - a change made while a periodic save is writing its column: the column was serialized before the change
 *     (Anvil.save turns it into NBT when called), and the queue entry the change added is cleared when that save
 *     ends.
 * So each mutation's promise is kept until it settles, and a column stays in our own dirty set from the moment it
 * is queued until the storage provider serializes it.
 *
 * Plain JavaScript, required by flying-squid-launcher.cjs (and its unit test) as it is.
 */

// The World methods that change a column; each queues the column for saving when it is done.
const MUTATIONS = ['setBlock', 'setBlockStateId', 'setBlockType', 'setBlockData', 'setBlockLight', 'setSkyLight',
  'setBiome', 'setColumn'];

/**
 * Starts tracking `world` (it must have a storage provider) and returns flush(): stops the periodic saver, waits for
 * the changes in flight and the save in progress, then writes every column changed since it was last serialized.
 * @param {object} world a prismarine-world World
 * @returns {() => Promise<void>}
 */
function trackWorld(world) {
  const pending = new Set();
  for (const name of MUTATIONS) {
    const original = world[name];
    if (typeof original !== 'function') continue;
    world[name] = function tracked(...args) {
      const p = Promise.resolve(original.apply(this, args));
      pending.add(p);
      const settle = () => pending.delete(p);
      p.then(settle, settle);
      return p;
    };
  }

  const dirty = new Map();
  const queueSaving = world.queueSaving.bind(world);
  world.queueSaving = (chunkX, chunkZ) => {
    dirty.set(`${chunkX},${chunkZ}`, [chunkX, chunkZ]);
    queueSaving(chunkX, chunkZ);
  };
  const provider = world.storageProvider;
  const save = provider.save.bind(provider);
  provider.save = (chunkX, chunkZ, column) => {
    dirty.delete(`${chunkX},${chunkZ}`);
    return save(chunkX, chunkZ, column);
  };

  return async function flush() {
    world.stopSaving();
    while (pending.size > 0) await Promise.allSettled([...pending]);
    // A failed write leaves its columns in the queue (saveNow throws before it clears it), but finishedSaving stays
    // rejected and would end the save below before its writes do.
    await world.finishedSaving.catch(() => undefined);
    world.finishedSaving = Promise.resolve();
    // A column unloaded meanwhile is no longer in memory to write (prismarine-world unloads only saved columns).
    for (const [key, [chunkX, chunkZ]] of dirty) if (world.columns[key]) queueSaving(chunkX, chunkZ);
    await world.saveNow();
  };
}

module.exports = { trackWorld };
