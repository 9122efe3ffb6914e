// The world import (issue 40 §1, "Done means"): a customer's own Minecraft world, made here as a single-player save
// would be (a folder with level.dat and region files, written by the same reader flying-squid uses), zipped with its
// top folder, uploaded through the Files API into `world` (replace=folder, strip_components=1). The server then
// starts on it and a real Minecraft client (mineflayer) joins and sees a block that only the upload holds: a gold
// block on a flat floor, which flying-squid's own generator never makes. Game ports 29490-29499.
import fs from 'node:fs';
import path from 'node:path';
import mineflayer from 'mineflayer';
import { Vec3 } from 'vec3';
import yazl from 'yazl';
import { createTestApp, tempDir, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

jest.setTimeout(240_000);

let t: TestApp;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });
const get = (p: string) => t.http.get(p).set(auth());
const post = (p: string, body: object) => t.http.post(p).set(auth()).send(body);
/** The block only the upload has. */
const GOLD = new Vec3(16, 5, 17);

beforeAll(async () => {
  t = await createTestApp({ boot: true, env: { GAME_PORT_RANGE: '29490-29499' }, runtime: { stopTimeoutMs: 10_000, reconcileMs: 500 } });
  token = t.token('import@example.com');
});
afterAll(async () => {
  await t.runtime.idle();
  await t.finish();
});

/**
 * A Minecraft 1.20 world in `dir`: level.dat and the region files of chunks -2..3 (every spawn flying-squid picks,
 * x and z in 0..30, and the view distance of 2 around it), each a flat floor (bedrock, stone, grass at y 4), with
 * the gold block at GOLD.
 */
async function buildWorld(dir: string): Promise<void> {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const registry = require('prismarine-registry')('1.20');
  const Chunk = require('prismarine-chunk')(registry);
  const { Anvil, level } = require('prismarine-provider-anvil');
  /* eslint-enable @typescript-eslint/no-require-imports */
  fs.mkdirSync(path.join(dir, 'region'), { recursive: true });
  await level.writeLevel(path.join(dir, 'level.dat'), { RandomSeed: [42, 0], Version: { Name: '1.20' }, generatorName: 'flat' });
  const anvil = new (Anvil(registry))(path.join(dir, 'region'));
  const id = (name: string) => registry.blocksByName[name].id as number;
  for (let cx = -2; cx <= 3; cx++) {
    for (let cz = -2; cz <= 3; cz++) {
      const chunk = new Chunk();
      for (let x = 0; x < 16; x++) {
        for (let z = 0; z < 16; z++) {
          chunk.setBlockType(new Vec3(x, 0, z), id('bedrock'));
          for (let y = 1; y < 4; y++) chunk.setBlockType(new Vec3(x, y, z), id('stone'));
          chunk.setBlockType(new Vec3(x, 4, z), id('grass_block'));
        }
      }
      if (cx === GOLD.x >> 4 && cz === GOLD.z >> 4) chunk.setBlockType(new Vec3(GOLD.x & 15, GOLD.y, GOLD.z & 15), id('gold_block'));
      await anvil.save(cx, cz, chunk);
    }
  }
  await anvil.close?.();
}

/** The folder `dir` as a zip whose entries are under `top/`, as a customer zips their save. */
function zipFolder(dir: string, top: string): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  const add = (rel: string) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const name = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) add(name);
      else zip.addFile(path.join(dir, name), `${top}/${name}`);
    }
  };
  add('');
  zip.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks))).on('error', reject);
  });
}

test('a zipped world imported through the API is the world a real client joins: it sees the block only the upload had', async () => {
  const save = path.join(tempDir('save'), 'My World');
  await buildWorld(save);
  const zip = await zipFolder(save, 'My World');

  const created = await post('/v1/servers', { name: 'Imported', plan: 'micro', version: 'flying-squid-1.20' });
  expect(created.status).toBe(201);
  const { id, address } = created.body as { id: string; address: { port: number } };
  await until('installed', async () => (await get(`/v1/servers/${id}`)).body.state === 'stopped');

  const imported = await t.http.post(`/v1/servers/${id}/files/extract`).query({ path: 'world', replace: 'folder', strip_components: 1 })
    .set(auth()).set('Content-Type', 'application/zip').send(zip);
  expect(imported.status).toBe(200);
  expect(imported.body).toMatchObject({ path: 'world', names: ['world'], files: 5 }); // level.dat, regions -1..0 by -1..0
  const region = (await get(`/v1/servers/${id}/files`).query({ path: 'world/region' })).body.data.map((e: { name: string }) => e.name);
  expect(region.sort()).toEqual(['r.-1.-1.mca', 'r.-1.0.mca', 'r.0.-1.mca', 'r.0.0.mca']);
  expect((await get(`/v1/servers/${id}/files/activity`)).body.data[0]).toMatchObject({ operation: 'extract', path: 'world' });

  expect((await post(`/v1/servers/${id}/actions`, { type: 'start' })).status).toBe(202);
  await until('running', async () => (await get(`/v1/servers/${id}`)).body.state === 'running', 150_000);
  const bot = mineflayer.createBot({ host: '127.0.0.1', port: address.port, username: 'Importer', auth: 'offline', version: '1.20', hideErrors: true });
  bot.on('error', () => undefined);
  try {
    await new Promise<void>((resolve, reject) => {
      bot.once('spawn', () => resolve());
      bot.once('kicked', (reason) => reject(new Error(`kicked: ${reason}`)));
      bot.once('end', (reason) => reject(new Error(`ended: ${reason}`)));
    });
    const seen = await until('the chunk with the gold block', async () => bot.blockAt(GOLD)?.name);
    expect(seen).toBe('gold_block');
    // The floor it stands on is the upload's, not the generator's: flat grass at y 4 everywhere it loaded.
    expect([bot.blockAt(new Vec3(3, 4, 29))?.name, bot.blockAt(new Vec3(3, 5, 29))?.name]).toEqual(['grass_block', 'air']);
  } finally {
    bot.end();
  }
  expect((await post(`/v1/servers/${id}/actions`, { type: 'stop' })).status).toBe(202);
  await until('stopped', async () => (await get(`/v1/servers/${id}`)).body.state === 'stopped');
});
