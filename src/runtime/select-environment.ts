// Which environment runs this service's games (RUNTIME, README "Configuration"): built here from the config.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../config';
import type { Logger } from '../log';
import { packageRoot } from '../paths';
import { instanceName } from './cgroups';
import { createDockerEnvironment } from './docker/docker-environment';
import { createEngine } from './docker/engine';
import { createNodesEnvironment } from './docker/nodes-environment';
import { DEFAULT_NODE, type NodesRepo } from '../store/nodes-repo';
import type { Environment } from './environment';
import { createLocalEnvironment } from './local-environment';

type EnvironmentConfig = Pick<
  Config,
  'runtime' | 'dataDir' | 'gameEnv' | 'cgroupRoot' | 'dockerHost' | 'dockerGameUser' | 'gameHost' | 'gamePortRange' | 'nodeCheckIntervalMs'
>;

/**
 * `local` (the default): child processes of this host, needing no Docker at all. `docker`: containers on the
 * nodes (`gsh node add`; with none added, the engine at DOCKER_HOST is node `local`), which see only their own
 * folder, the software folders and node_modules.
 */
export function selectEnvironment(
  config: EnvironmentConfig,
  log: Logger,
  softwareDirs: string[],
  nodes: NodesRepo,
  imageExtras: readonly string[] = [],
): Environment {
  const instance = instanceName(config.dataDir);
  if (config.runtime === 'local') {
    return createLocalEnvironment({ gameEnv: config.gameEnv, cgroupRoot: config.cgroupRoot, instance, log });
  }
  nodes.ensureDefault({
    name: DEFAULT_NODE,
    dockerHost: config.dockerHost,
    publicHost: config.gameHost,
    memoryMb: Math.floor(os.totalmem() / 1024 / 1024), // this host's, as `gsh node add` reads a node's from its engine
    ports: [...config.gamePortRange],
  });
  const readOnlyPaths = [...softwareDirs, path.join(packageRoot(), 'node_modules')].filter((p) => fs.existsSync(p));
  return createNodesEnvironment({
    nodes,
    defaultDockerHost: config.dockerHost,
    checkMs: config.nodeCheckIntervalMs,
    log,
    nodeEnvironment(node) {
      const engine = createEngine(node.dockerHost);
      const environment = createDockerEnvironment({
        engine,
        instance,
        gameEnv: { ...config.gameEnv, PATH: '/usr/local/bin:/usr/bin:/bin' }, // the image's, not this host's
        readOnlyPaths,
        user: config.dockerGameUser,
        imageExtras,
        log: withNode(log, node.name),
      });
      return { environment, engine };
    },
  });
}

/** The environment's log lines name the node they are about (operators' logs only; tenants never see names). */
function withNode(log: Logger, node: string): Logger {
  const add = (f: Record<string, unknown> = {}) => (node ? { node, ...f } : f);
  return { info: (m, f) => log.info(m, add(f)), warn: (m, f) => log.warn(m, add(f)), error: (m, f) => log.error(m, add(f)) };
}

/** The built-in software definitions' folder (software-catalog.ts's default). */
export function builtinSoftwareDir(): string {
  return path.join(packageRoot(), 'src', 'runtime', 'software');
}
