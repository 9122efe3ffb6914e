// Which environment runs this service's games (RUNTIME, README "Configuration"): built here from the config.
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../../config';
import type { Logger } from '../../log';
import { packageRoot } from '../../paths';
import { instanceName } from './cgroups';
import { createEngine, parseDockerHost } from './docker/engine';
import { isInsecureLink, nodeCertDir } from './docker/engine-tls';
import { createDockerNode } from './docker/node';
import { createNodesEnvironment, type VolumeTransfer } from './docker/nodes-environment';
import { DEFAULT_NODE, type Node, type NodesRepo } from '../../store/nodes-repo';
import type { Environment } from './environment';
import { createLocalEnvironment } from './local-environment';
import { createLocalStorage } from './local-storage';
import type { SoftwareCatalog } from '../software/software-catalog';
import type { ServerStorage } from './storage';

type EnvironmentConfig = Pick<
  Config,
  'runtime' | 'dataDir' | 'gameEnv' | 'cgroupRoot' | 'dockerHost' | 'dockerGameUser' | 'gameHost' | 'gamePortRange' | 'nodeCheckIntervalMs'
>;

/** Where games run and where their files are, as the runtime holds them (service.ts composeRuntime). */
export interface RuntimeHost {
  environment: Environment;
  storage: ServerStorage;
  /** The copy of a server's files between nodes that a move makes; only with nodes (RUNTIME=docker). */
  transfer?: VolumeTransfer;
}

/**
 * `local` (the default): child processes of this host and folders under DATA_DIR, needing no Docker at all.
 * `docker`: containers on the nodes (`gsh node add`; with none added, the engine at DOCKER_HOST is node `local`),
 * each server's files in a volume on its node, the game image holding everything a game needs.
 */
export function selectEnvironment(
  config: EnvironmentConfig,
  log: Logger,
  softwareDirs: string[],
  nodes: NodesRepo,
  catalog: Pick<SoftwareCatalog, 'imageFiles' | 'imageModules'>,
): RuntimeHost {
  const instance = instanceName(config.dataDir);
  if (config.runtime === 'local') {
    return {
      environment: createLocalEnvironment({ gameEnv: config.gameEnv, cgroupRoot: config.cgroupRoot, instance, log }),
      storage: createLocalStorage(config.dataDir),
    };
  }
  nodes.ensureDefault({
    name: DEFAULT_NODE,
    dockerHost: config.dockerHost,
    publicHost: config.gameHost,
    memoryMb: Math.floor(os.totalmem() / 1024 / 1024), // this host's, as `gsh node add` reads a node's from its engine
    ports: [...config.gamePortRange],
  });
  warnInsecureLinks(nodes.list(), log);
  const image = { imageFiles: catalog.imageFiles(), ...catalog.imageModules(), softwareDirs };
  return createNodesEnvironment({
    nodes,
    defaultDockerHost: config.dockerHost,
    checkMs: config.nodeCheckIntervalMs,
    log,
    nodeParts: (node) =>
      createDockerNode({
        engine: createEngine(node.dockerHost, node.tls ? { certDir: nodeCertDir(config.dataDir, node.name) } : undefined),
        instance,
        gameEnv: { ...config.gameEnv, PATH: '/usr/local/bin:/usr/bin:/bin' }, // the image's, not this host's
        user: config.dockerGameUser,
        dataDir: config.dataDir,
        image,
        log: withNode(log, node.name),
      }),
  });
}

/** Every start names each node reached over plain TCP off loopback (`node add --insecure`; README "Nodes"). */
function warnInsecureLinks(all: Pick<Node, 'name' | 'dockerHost' | 'tls'>[], log: Logger): void {
  for (const node of all) {
    let endpoint;
    try {
      endpoint = parseDockerHost(node.dockerHost);
    } catch {
      continue; // the node's calls fail and say why
    }
    if (isInsecureLink(endpoint, node.tls)) {
      log.warn('node link is plain TCP without TLS: anyone who reaches its engine port is root on it', { node: node.name, docker_host: node.dockerHost });
    }
  }
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
