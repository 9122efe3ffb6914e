// Short-lived helper containers with a server's volume: how the service reads and writes a volume on a node, through
// the engine alone (docs/architecture.md "The Docker environment").
import { FOLDER_OPS } from '../restore';
import { removeContainer } from './container-process';
import { demux, type Engine } from './engine';
import { GAME_DIR, IMAGE_NODE } from './image';

/** A helper's labels: this instance's (a next service life removes any it left), and the server it works for. */
export const LABEL_HELPER = 'io.gsh.helper';
const MIB = 1024 * 1024;
/** How long one helper's program may run: a walk or digest of a large world takes a while. */
const RUN_MS = 10 * 60_000;

export interface HelperOptions {
  engine: Engine;
  /** The game image (image.ts imageKeeper of the node): Node and folder-ops.cjs. */
  image: () => Promise<string>;
  /** The instance label's value (docker-environment.ts LABEL_INSTANCE). */
  instance: string;
  instanceLabel: string;
  /** The games' user: what a helper runs as, and who owns what it writes. */
  user: { uid: number; gid: number };
}

/**
 * Helper containers (API "Create a container"): the game image, the server's volume at GAME_DIR, the games' user, no
 * network, a read-only root, no capability, small limits. `withVolume` gives one that is never started, for the
 * engine's archive endpoints (they work on a stopped container's volumes); `run` runs folder-ops.cjs in one and
 * reads its answer. Each is removed when its work ends.
 */
export function createHelpers(o: HelperOptions) {
  const { engine } = o;

  async function create(volume: string, serverId: string, cmd: string[]): Promise<string> {
    const memory = 256 * MIB;
    const body = {
      Image: await o.image(),
      Cmd: cmd,
      User: `${o.user.uid}:${o.user.gid}`,
      WorkingDir: GAME_DIR,
      Labels: { [o.instanceLabel]: o.instance, [LABEL_HELPER]: serverId },
      HostConfig: {
        Mounts: [{ Type: 'volume', Source: volume, Target: GAME_DIR, ReadOnly: false }],
        NetworkMode: 'none',
        ReadonlyRootfs: true,
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        Memory: memory,
        MemorySwap: memory,
        PidsLimit: 64,
        LogConfig: { Type: 'json-file', Config: { 'max-size': '1m', 'max-file': '1' } },
      },
    };
    return (await engine.json<{ Id: string }>('POST', '/containers/create', body)).Id;
  }

  async function logs(id: string): Promise<{ stdout: string; stderr: string }> {
    const stream = await engine.download(`/containers/${id}/logs?stdout=1&stderr=1`);
    const out = { stdout: '', stderr: '' };
    await new Promise<void>((resolve, reject) => {
      demux(stream, (which, chunk) => (out[which] += chunk.toString('utf8')));
      stream.once('end', resolve);
      stream.once('error', reject);
    });
    return out;
  }

  return {
    /** A helper made, not started, that runs `cmd` once started; its caller removes it (move-helpers.ts: one per node for a whole move). */
    create,

    /** Runs `fn` with a container (never started) that mounts the server's volume at GAME_DIR; removed after. */
    async withVolume<T>(volume: string, serverId: string, fn: (containerId: string) => Promise<T>): Promise<T> {
      const id = await create(volume, serverId, [IMAGE_NODE, '-e', '']);
      try {
        return await fn(id);
      } finally {
        await removeContainer(engine, id).catch(() => undefined);
      }
    },

    /**
     * Runs `folder-ops.cjs <args>` on the server's volume and resolves with its JSON answer; rejects with its reason
     * when it fails. `before` may put files into the container (the archive endpoint) before it starts; `alongside`
     * runs once it started, its exit awaited only after (a failure of `alongside` removes it, running or not).
     */
    async run<T>(volume: string, serverId: string, args: string[], before?: (containerId: string) => Promise<void>, alongside?: () => Promise<void>): Promise<T> {
      const id = await create(volume, serverId, [IMAGE_NODE, FOLDER_OPS, ...args]);
      try {
        await before?.(id);
        await engine.json('POST', `/containers/${id}/start`);
        await alongside?.();
        const { StatusCode } = await engine.json<{ StatusCode: number }>('POST', `/containers/${id}/wait`, undefined, RUN_MS);
        const { stdout, stderr } = await logs(id);
        if (StatusCode !== 0) throw new Error(`${args[0]} in the server's volume failed (exit ${StatusCode}): ${stderr.trim().slice(0, 300)}`);
        return JSON.parse(stdout.trim().split('\n').pop() ?? '') as T;
      } finally {
        await removeContainer(engine, id).catch(() => undefined);
      }
    },
  };
}

export type Helpers = ReturnType<typeof createHelpers>;
