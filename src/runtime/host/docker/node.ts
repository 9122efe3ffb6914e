// One node's parts over its engine: the environment that runs its containers and the storage of its volumes, sharing
// one game image (docs/architecture.md "The Docker environment").
import type { Logger } from '../../../log';
import { createDockerEnvironment, LABEL_INSTANCE, LABEL_SERVER, volumeName } from './docker-environment';
import type { Engine } from './engine';
import { createHelpers } from './helper-containers';
import { imageKeeper, type ImageContent } from './image';
import { keptHelpers } from './kept-helpers';
import type { NodeParts } from './nodes-environment';
import { createVolumeStorage } from './volume-storage';

export interface DockerNodeOptions {
  engine: Engine;
  /** This service's name among the containers and volumes on the engine (cgroups.ts `instanceName` of DATA_DIR). */
  instance: string;
  /** The only variables of the service's that reach a game (config.ts gameEnv, with the image's PATH). */
  gameEnv: Record<string, string>;
  /** The non-root user games and helpers run as (DOCKER_GAME_USER). */
  user: { uid: number; gid: number };
  /** The service's DATA_DIR: each server's console log, and the folders a previous release kept. */
  dataDir: string;
  /** What the game image holds (image.ts), built on this engine on first need. */
  image: Omit<ImageContent, 'user'>;
  log: Logger;
}

export function createDockerNode(o: DockerNodeOptions): NodeParts {
  const { engine, instance, user, log } = o;
  const image = imageKeeper(engine, { ...o.image, user });
  const helpers = createHelpers({ engine, image, instance, instanceLabel: LABEL_INSTANCE, user });
  const kept = keptHelpers(engine, helpers);
  const environment = createDockerEnvironment({ engine, instance, gameEnv: o.gameEnv, user, log, image });
  return {
    engine,
    environment: {
      ...environment,
      async close() {
        await Promise.all([environment.close(), kept.releaseAll()]);
      },
    },
    storage: createVolumeStorage({
      engine,
      helpers,
      kept,
      labels: (serverId) => ({ [LABEL_INSTANCE]: instance, [LABEL_SERVER]: serverId }),
      volumeName: (serverId) => volumeName(instance, serverId),
      dataDir: o.dataDir,
      user,
      log,
    }),
  };
}
