// world-flush.cjs on a real prismarine-world World writing real region files (prismarine-provider-anvil), as
// flying-squid runs it: a block set just before the stop reaches the disk in the two cases where World.saveNow alone
// loses it (each also runs on an untracked World, to show the case really loses the block there), and after a
// periodic write that failed.
/* eslint-disable @typescript-eslint/no-require-imports */
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/app';

const registry = require('prismarine-registry')('1.20');
const World = require('prismarine-world')(registry);
const { Anvil } = require('prismarine-provider-anvil');
const Chunk = require('prismarine-chunk')(registry);
const { Vec3 } = require('vec3');
const { trackWorld } = require('../../src/runtime/software/world-flush.cjs');
/* eslint-enable @typescript-eslint/no-require-imports */

type WorldT = {
  setBlockStateId(pos: unknown, id: number): Promise<void>;
  getColumn(x: number, z: number): Promise<unknown>;
  saveNow(): Promise<void>;
  stopSaving(): void;
  finishedSaving: Promise<unknown>;
};

const AnvilT = Anvil(registry);
const gold = registry.blocksByName.gold_block.defaultState as number;
const diamond = registry.blocksByName.diamond_block.defaultState as number;
const at = new Vec3(1, 60, 1);
let dir: string;

beforeEach(() => {
  dir = tempDir('world-flush');
  fs.mkdirSync(path.join(dir, 'region')); // flying-squid makes it before it opens the world
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A world over region files in `dir`, its periodic saver off (each case drives the saves itself). */
function open(): { world: WorldT; anvil: { close(): Promise<void> } } {
  const anvil = new AnvilT(path.join(dir, 'region'));
  const world: WorldT = new World(() => new Chunk(), anvil, 60_000);
  world.stopSaving();
  return { world, anvil };
}

async function readBack(): Promise<string> {
  const anvil = new AnvilT(path.join(dir, 'region'));
  const chunk = await anvil.load(0, 0);
  await anvil.close();
  return chunk.getBlock(new Vec3(at.x, at.y, at.z)).name;
}

/** Saves column 0,0 holding gold at `at`, so each case starts from a world on disk. */
async function seed(): Promise<void> {
  const { world, anvil } = open();
  await world.setBlockStateId(at, gold);
  await world.saveNow();
  await anvil.close();
}

/** What the stop does without world-flush.cjs: flying-squid's quit after a plain saveNow. */
const plainFlush = (world: WorldT) => () => world.saveNow();

/** Each case: what happens before and during the stop; it returns what is still in flight once the stop is done. */
type Scenario = (world: WorldT, flush: () => Promise<void>) => Promise<Array<Promise<unknown>>>;
const cases: Array<[string, Scenario]> = [
  [
    'a change still in flight (its column read from disk) when the stop comes',
    async (world, flush) => {
      const command = world.setBlockStateId(at, diamond); // the console command, not awaited: the stop comes at once
      await flush();
      return [command];
    },
  ],
  [
    'a change made while a periodic save writes its column',
    async (world, flush) => {
      await world.getColumn(0, 0);
      await world.setBlockStateId(new Vec3(2, 60, 2), gold); // the column is queued for the next save
      const periodic = world.saveNow(); // serializes the column now, writes it, then clears the queue
      await world.setBlockStateId(at, diamond);
      await periodic;
      await flush();
      return [];
    },
  ],
];

describe.each(cases)('%s', (_name, scenario) => {
  test('reaches the region file with world-flush', async () => {
    await seed();
    const { world, anvil } = open();
    await Promise.allSettled(await scenario(world, trackWorld(world)));
    await anvil.close();
    expect(await readBack()).toBe('diamond_block');
  });

  test('is lost by a plain saveNow (the gap world-flush closes)', async () => {
    await seed();
    const { world, anvil } = open();
    await Promise.allSettled(await scenario(world, plainFlush(world)));
    await world.finishedSaving;
    await anvil.close();
    expect(await readBack()).toBe('gold_block');
  });
});

test('a periodic write that failed (disk full, say) is written again by the flush, which waits for it', async () => {
  await seed();
  const { world, anvil } = open();
  const a = anvil as unknown as { saveRaw: (...args: unknown[]) => Promise<void> };
  const saveRaw = a.saveRaw.bind(anvil);
  let failures = 1;
  a.saveRaw = async (...args) => {
    if (failures-- > 0) throw new Error('ENOSPC: no space left on device');
    return saveRaw(...args);
  };
  const flush = trackWorld(world);
  await world.setBlockStateId(at, diamond);
  await expect(world.saveNow()).rejects.toThrow('ENOSPC');
  await flush();
  await anvil.close();
  expect(await readBack()).toBe('diamond_block');
});
