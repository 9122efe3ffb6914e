// Which environment runs this service's games (RUNTIME, README "Configuration"): built here from the config.
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import type { Logger } from '../log';
import { packageRoot } from '../paths';
import { instanceName } from './cgroups';
import { createDockerEnvironment } from './docker/docker-environment';
import { createEngine } from './docker/engine';
import type { Environment } from './environment';
import { createLocalEnvironment } from './local-environment';

type EnvironmentConfig = Pick<Config, 'runtime' | 'dataDir' | 'gameEnv' | 'cgroupRoot' | 'dockerHost' | 'dockerGameUser'>;

/**
 * `local` (the default): child processes of this host, needing no Docker at all. `docker`: containers on the
 * engine at DOCKER_HOST (one node), which see only their own folder, the software folders and node_modules.
 */
export function selectEnvironment(config: EnvironmentConfig, log: Logger, softwareDirs: string[]): Environment {
  const instance = instanceName(config.dataDir);
  if (config.runtime === 'local') {
    return createLocalEnvironment({ gameEnv: config.gameEnv, cgroupRoot: config.cgroupRoot, instance, log });
  }
  const readOnlyPaths = [...softwareDirs, path.join(packageRoot(), 'node_modules')].filter((p) => fs.existsSync(p));
  return createDockerEnvironment({
    engine: createEngine(config.dockerHost),
    instance,
    gameEnv: { ...config.gameEnv, PATH: '/usr/local/bin:/usr/bin:/bin' }, // the image's, not this host's
    readOnlyPaths,
    user: config.dockerGameUser,
    log,
  });
}

/** The built-in software definitions' folder (software-catalog.ts's default). */
export function builtinSoftwareDir(): string {
  return path.join(packageRoot(), 'src', 'runtime', 'software');
}
