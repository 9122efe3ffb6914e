import net from 'node:net';
import type { Logger } from '../../../log';
import { PIDS_MAX } from '../cgroups';
import type { Environment, GameAddress, GameProcess, LaunchSpec, LeftoverProcess } from '../environment';
import { isPortFree, SERVER_ID_ENV } from '../local-environment';
import { removeContainer, wrapContainer } from './container-process';
import { EngineError, type Engine } from './engine';
import { IMAGE_NODE } from './image';
import { createNextContainers } from './next-containers';

/** The labels that make a container ours: which server, and which service instance (its DATA_DIR). */
export const LABEL_SERVER = 'io.gsh.server';
export const LABEL_INSTANCE = 'io.gsh.instance';
/** On a container started ahead (prestart), its game held: the server's id. */
const LABEL_HELD = 'io.gsh.held';
/** What a held game waits for on stdin (launch-hold.cjs HOLD_GO). */
const HOLD_GO = 'gsh go';
const MIB = 1024 * 1024;
const CPU_PERIOD_US = 100_000;
/**
 * The game's writable scratch space (a tmpfs; the root file system is read-only), named to the game by TMPDIR. Not
 * /tmp: the image holds this service's files at their paths on the host (image.ts), and a checkout under /tmp (a CI
 * clone, say) would be hidden under a tmpfs mounted there, so no launcher would be found.
 */
export const GAME_TMP = '/run/gsh-tmp';

export interface DockerEnvironmentOptions {
  /** The one engine (one node) this environment runs containers on; placement picks among environments. */
  engine: Engine;
  /** This service's name among the containers on the engine (cgroups.ts `instanceName` of DATA_DIR). */
  instance: string;
  /** As LocalEnvironmentOptions.gameEnv: the only variables of the service's that reach a game. */
  gameEnv: Record<string, string>;
  /** The non-root user games run as (DOCKER_GAME_USER). */
  user: { uid: number; gid: number };
  log: Logger;
  /** The game image's name, built on first need (image.ts imageKeeper, shared with the node's storage). */
  image: () => Promise<string>;
}

/** The volume holding a server's files on a node (docker/volume-storage.ts), mounted at its game's folder. */
export function volumeName(instance: string, serverId: string): string {
  return `gsh-${instance}-${serverId}`;
}

/**
 * How a container reaches players: `bridge` publishes its one game port on the node (its own network
 * namespace); `host` shares the node's network (an engine run without a bridge, `dockerd --bridge=none`), where
 * the game binds its port itself. SECURITY.md says what each isolates.
 */
export type NetworkMode = 'bridge' | 'host';

interface ContainerSummary {
  Id: string;
  State: string;
  Labels: Record<string, string>;
  Ports?: { PublicPort?: number }[];
}

/**
 * Game servers as Docker containers on one engine (docs/architecture.md "The Docker environment"): one
 * container per server with the plan's memory (no swap), CPU quota and pids limit, a read-only root, a
 * non-root user, no capability, no-new-privileges, only its volume writable and only its game port published;
 * no path of the control plane's host is mounted (the image holds the game, docker/image.ts).
 * Console and reports cross over the attached stdio (container-process.ts REPORT_PREFIX), CPU and memory come
 * from the engine's stats. Labels name the server and this instance, so a later service life adopts a
 * container still running (adopt) and removes every other of its own (start). When a server's container ends,
 * its next one is created at once, not started, so a start only attaches and starts it (next-containers.ts); a
 * move starts one ahead on the new node, its game held until the spawn (prestart); uninstall and close remove it.
 */
export function createDockerEnvironment(options: DockerEnvironmentOptions): Environment {
  const s: Shared = {
    options,
    held: new Set(),
    next: createNextContainers(options.engine, options.log),
    closed: false,
    networkMode: networkModeOf(options.engine),
  };
  return {
    gameBindHost: '0.0.0.0', // inside its own network namespace; the engine publishes the one port on the host
    ...lifetime(s),
    isPortFree: (address, serverId) => portFree(options, address, serverId),
    spawn: (spec) => spawn(s, spec),
    prestart: (spec) => prestart(s, spec),
    ...leftovers(s),
  };
}

/** What the pieces of one Docker environment share: createDockerEnvironment makes it once and hands it to each. */
interface Shared {
  options: DockerEnvironmentOptions;
  /** Containers this life spawned or adopted: start() removes every other labelled with this instance. */
  held: Set<string>;
  /** Each stopped server's next container, made ahead of its start (next-containers.ts). */
  next: ReturnType<typeof createNextContainers>;
  /** Set by close(): a container that ends after it gets no next one. */
  closed: boolean;
  networkMode: () => Promise<NetworkMode>;
}

/** `bridge` where the engine has its default bridge network, else `host`; asked once per engine (again if the ask failed). */
function networkModeOf(engine: Engine): () => Promise<NetworkMode> {
  let network: Promise<NetworkMode> | null = null;
  return () => {
    network ??= engine.json('GET', '/networks/bridge').then(
      () => 'bridge' as const,
      (err: unknown) => {
        network = null;
        if (err instanceof EngineError && err.status === 404) return 'host' as const;
        throw err;
      },
    );
    return network;
  };
}

/** The containers labelled with this instance (and the server, if given), running or not. */
async function ours(options: Pick<DockerEnvironmentOptions, 'engine' | 'instance'>, serverId?: string): Promise<ContainerSummary[]> {
  const label = [`${LABEL_INSTANCE}=${options.instance}`, ...(serverId ? [`${LABEL_SERVER}=${serverId}`] : [])];
  const filters = encodeURIComponent(JSON.stringify({ label }));
  return options.engine.json<ContainerSummary[]>('GET', `/containers/json?all=1&filters=${filters}`);
}

const attach = (engine: Engine, id: string) => engine.hijack(`/containers/${id}/attach?stream=1&stdin=1&stdout=1&stderr=1`);

async function inspectPid(engine: Engine, id: string): Promise<number> {
  const c = await engine.json<{ State: { Pid: number } }>('GET', `/containers/${id}/json`);
  return c.State.Pid;
}

/** Environment.prestart: the next container made and started, its game held (next-containers.ts hold). */
async function prestart(s: Shared, spec: LaunchSpec): Promise<void> {
  if (s.closed) return;
  try {
    const config = containerConfig(spec, s.options, await s.options.image(), await s.networkMode()) as { Env: string[]; Labels: Record<string, string> };
    const body = { ...config, Env: [...config.Env, 'GSH_HOLD=1'], Labels: { ...config.Labels, [LABEL_HELD]: spec.serverId } };
    await s.next.hold(spec.serverId, `gsh-${s.options.instance}-${spec.serverId}`, JSON.stringify(config), body);
  } catch (err) {
    s.options.log.warn('could not start a server\'s container ahead; it starts as usual', { serverId: spec.serverId, error: String(err) });
  }
}

/** Environment.start, close and uninstall: what a service life does with this instance's containers as a whole. */
function lifetime(s: Shared): Pick<Environment, 'start' | 'close' | 'uninstall'> {
  const { engine, log } = s.options;
  return {
    async start() {
      try {
        await s.options.image();
        const left = (await ours(s.options)).filter((c) => !s.held.has(c.Id));
        for (const c of left) await removeContainer(engine, c.Id);
        if (left.length > 0) log.warn('removed containers a previous service life left', { count: left.length });
        log.info('game servers run as containers', { engine: engine.endpoint, image: await s.options.image() });
      } catch (err) {
        log.error('the Docker engine did not answer at start; game servers cannot start until it does', { engine: engine.endpoint, error: String(err) });
      }
    },
    async close() {
      s.closed = true;
      s.held.clear();
      await s.next.removeAll(); // the stopped servers' next containers: a next life would remove them anyway
    },
    async uninstall(serverId) {
      await s.next.removeFor(serverId); // it mounts the server's volume, which cannot go while it exists
    },
  };
}

/** Environment.isPortFree. */
async function portFree(options: DockerEnvironmentOptions, address: GameAddress, serverId: string): Promise<boolean> {
  const { port } = address;
  // The engine's own view first (a published port may not show as a listener, e.g. without its userland
  // proxy); an engine that does not answer leaves the host's view, and the spawn then fails with the reason.
  const published = (await ours(options).catch(() => [] as ContainerSummary[])).filter((c) => c.State === 'running' && (c.Ports ?? []).some((p) => p.PublicPort === port));
  if (published.length > 0 && published.every((c) => c.Labels[LABEL_HELD] === serverId)) return true; // its own, started ahead
  const taken = published.length > 0;
  // The engine's own port view is enough where it is another machine; this host's listeners matter only here.
  const sameHost = options.engine.endpoint.startsWith('unix://');
  return !taken && (!sameHost || isPortFree(address));
}

/** Environment.spawn: the server's next container if its definition is unchanged, else a new one; attached, then started. */
async function spawn(s: Shared, spec: LaunchSpec): Promise<GameProcess> {
  const { engine, instance } = s.options;
  const image = await s.options.image();
  const name = `gsh-${instance}-${spec.serverId}`;
  const config = JSON.stringify(containerConfig(spec, s.options, image, await s.networkMode()));
  // The container made when its last one ended, or started ahead with its game held (prestart), if its definition
  // is still this one (next-containers.ts).
  const next = await s.next.take(spec.serverId, config);
  let id = next?.id ?? null;
  let stdio = id === null ? null : await attach(engine, id).catch(() => null); // null: removed meanwhile (killLeftover)
  const heldPid = next?.held === true && stdio !== null ? await inspectPid(engine, next.id).catch(() => 0) : 0;
  const held = heldPid > 0;
  if (next?.held && !held) stdio = (stdio?.destroy(), null); // its game left (HOLD_MAX_MS): a new one replaces it
  if (id === null || stdio === null) id = await create(engine, name, config);
  s.held.add(id);
  try {
    // Attached before it starts, so no line is lost; the attach keeps stdin open for console commands.
    stdio ??= await attach(engine, id);
    if (held) stdio.write(`${HOLD_GO}\n`);
    else await engine.json('POST', `/containers/${id}/start`);
    const proc = wrapContainer({ engine, id, pid: held ? heldPid : await inspectPid(engine, id), stdio, argv: spec.argv });
    const ended = id;
    void proc.exited.then(() => {
      s.held.delete(ended);
      if (!s.closed) s.next.prepare(spec.serverId, name, config); // its old one is removed by now
    });
    return proc;
  } catch (err) {
    s.held.delete(id);
    await removeContainer(engine, id).catch(() => undefined);
    throw err;
  }
}

async function create(engine: Engine, name: string, config: string): Promise<string> {
  const body: unknown = JSON.parse(config);
  try {
    return (await engine.json<{ Id: string }>('POST', `/containers/create?name=${name}`, body)).Id;
  } catch (err) {
    if (!(err instanceof EngineError && err.status === 409)) throw err;
    await removeContainer(engine, name); // a previous life's container that start() could not remove
    return (await engine.json<{ Id: string }>('POST', `/containers/create?name=${name}`, body)).Id;
  }
}

/** Environment.killLeftover and adopt: the containers a previous service life left, at boot. */
function leftovers(s: Shared): Pick<Environment, 'killLeftover' | 'adopt'> {
  const { engine, log } = s.options;
  return {
    async killLeftover(leftover: LeftoverProcess) {
      s.next.forget(leftover.serverId); // removed below with every other container of the server
      try {
        const found = await ours(s.options, leftover.serverId);
        for (const c of found) await removeContainer(engine, c.Id);
        return found.some((c) => c.State === 'running');
      } catch (err) {
        // The engine is away: its containers are removed by a later start(), or replaced at the next spawn.
        log.warn('could not remove a container a previous service life left', { serverId: leftover.serverId, error: String(err) });
        return false;
      }
    },
    async adopt(leftover: LeftoverProcess) {
      const running = (await ours(s.options, leftover.serverId)).find((c) => c.State === 'running');
      if (!running) return null;
      const id = running.Id;
      s.held.add(id);
      // Lines it printed while no service listened are not replayed; its reports repeat every second.
      const proc = wrapContainer({ engine, id, pid: await inspectPid(engine, id), stdio: await attach(engine, id), argv: leftover.cmdline });
      void proc.exited.then(() => s.held.delete(id));
      return proc;
    },
  };
}

/** The container's definition (API "Create a container"): every limit and confinement of the class comment. */
export function containerConfig(spec: LaunchSpec, options: Pick<DockerEnvironmentOptions, 'gameEnv' | 'instance' | 'user'>, image: string, network: NetworkMode = 'bridge'): object {
  const memory = spec.limits.memoryMb * MIB;
  const port = `${spec.address.port}/${spec.address.transport ?? 'tcp'}`;
  const publishIp = net.isIP(spec.address.host) ? spec.address.host : '0.0.0.0';
  const env = { ...options.gameEnv, HOME: spec.cwd, TMPDIR: GAME_TMP, [SERVER_ID_ENV]: spec.serverId };
  return {
    Image: image,
    Cmd: spec.argv[0] === process.execPath ? [IMAGE_NODE, ...spec.argv.slice(1)] : spec.argv, // image.ts IMAGE_NODE
    WorkingDir: spec.cwd,
    User: `${options.user.uid}:${options.user.gid}`,
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    Labels: { [LABEL_SERVER]: spec.serverId, [LABEL_INSTANCE]: options.instance },
    AttachStdin: true, AttachStdout: true, AttachStderr: true, OpenStdin: true, StdinOnce: false, Tty: false,
    ExposedPorts: network === 'bridge' ? { [port]: {} } : {},
    HostConfig: {
      Memory: memory,
      MemorySwap: memory, // no swap on top of the plan's memory
      CpuPeriod: CPU_PERIOD_US,
      CpuQuota: Math.round((spec.limits.cpuPercent / 100) * CPU_PERIOD_US),
      PidsLimit: PIDS_MAX,
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Init: true, // docker-init as pid 1: signals and zombies handled, the game's death by signal reported as 128+n
      Tmpfs: { [GAME_TMP]: 'rw,nosuid,nodev,noexec,size=64m' },
      // The server's volume on this node, and nothing of the control plane's host (the image holds the rest).
      Mounts: [{ Type: 'volume', Source: volumeName(options.instance, spec.serverId), Target: spec.cwd, ReadOnly: false }],
      NetworkMode: network,
      PortBindings: network === 'bridge' ? { [port]: [{ HostIp: publishIp, HostPort: String(spec.address.port) }] } : {},
      RestartPolicy: { Name: 'no' },
      LogConfig: { Type: 'json-file', Config: { 'max-size': '1m', 'max-file': '1' } },
    },
  };
}

