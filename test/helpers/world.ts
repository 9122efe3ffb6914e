// Reading a Minecraft world's region files, as flying-squid itself reads them (prismarine-provider-anvil).
import path from 'node:path';

/** The name of the block at x, y, z of a world folder (a stopped server's, or one unpacked from an archive). */
export async function blockIn(worldDir: string, x: number, y: number, z: number): Promise<string> {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const registry = require('prismarine-registry')('1.20');
  const { Anvil } = require('prismarine-provider-anvil');
  const { Vec3 } = require('vec3');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const anvil = new (Anvil(registry))(path.join(worldDir, 'region'));
  const chunk = await anvil.load(x >> 4, z >> 4);
  await anvil.close?.();
  return chunk.getBlock(new Vec3(x & 15, y, z & 15)).name;
}
