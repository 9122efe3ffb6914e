// The Docker engine for the Docker tests: the one at DOCKER_HOST (default /var/run/docker.sock) if it answers,
// else a dockerd this file starts and stops again (.ci/run normally starts one first). No test is skipped.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { instanceName } from '../../src/runtime/host/cgroups';
import { LABEL_INSTANCE, LABEL_SERVER, volumeName } from '../../src/runtime/host/docker/docker-environment';
import { GAME_DIR, IMAGE_NODE } from '../../src/runtime/host/docker/image';
import { createDockerNode } from '../../src/runtime/host/docker/node';
import { loadSoftwareCatalog } from '../../src/runtime/software/software-catalog';
import type { Logger } from '../../src/log';
import { createEngine, type Engine } from '../../src/runtime/host/docker/engine';
import { builtinSoftwareDir } from '../../src/runtime/host/select-environment';
import { fixtureSoftwareDir, type EnvironmentFactory } from '../runtime/helpers';
import { runCli } from '../../src/cli';

export const DOCKER_HOST = process.env.DOCKER_HOST || 'unix:///var/run/docker.sock';
export const engine: Engine = createEngine(DOCKER_HOST);
export const GAME_USER = { uid: 1000, gid: 1000 };

/**
 * How long the Docker tests wait: for what the service bounds, not for a warm machine's speed (issue 44; a fresh
 * machine's CI builds every image and compiles beside them). One call to an engine may take the engine client's
 * 60 s (src/runtime/host/docker/engine.ts, Engine.json's default); a server's removal makes up to three slow ones in
 * a row on its node (volume-storage.ts drop: the volume, the containers left mounting it, each waited for while
 * another removal of it is under way, then the volume again). A first game image on a cold engine is the base's tar,
 * which the engine may import in silence for 5 minutes after its last byte (image.ts IMPORT_IDLE_MS), then the
 * game layer.
 */
export const ENGINE_CALL_MS = 60_000;
export const REMOVAL_MS = 3 * ENGINE_CALL_MS;
export const FIRST_IMAGE_MS = 10 * 60_000;

async function answers(): Promise<boolean> {
  try {
    await engine.json('GET', '/version', undefined, 2_000);
    return true;
  } catch {
    return false;
  }
}

/** Makes sure an engine answers; `release` stops the dockerd this call started, if any. */
export async function ensureEngine(): Promise<{ release(): Promise<void> }> {
  if (await answers()) return { release: async () => undefined };
  if (DOCKER_HOST !== 'unix:///var/run/docker.sock') throw new Error(`no Docker engine answers at DOCKER_HOST=${DOCKER_HOST}`);
  const log = path.join(os.tmpdir(), `gsh-dockerd-${process.pid}.log`);
  const out = fs.openSync(log, 'a');
  let daemon: ChildProcess;
  try {
    daemon = spawn('dockerd', [], { stdio: ['ignore', out, out] });
    await new Promise<void>((resolve, reject) => {
      daemon.once('spawn', resolve);
      daemon.once('error', (err) => reject(new Error(`dockerd could not start (${err.message}); install docker.io (.ci/run does)`)));
    });
  } finally {
    fs.closeSync(out);
  }
  for (let i = 0; i < 120 && !(await answers()); i++) {
    if (daemon.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  if (!(await answers())) {
    daemon.kill('SIGKILL');
    throw new Error(`dockerd did not answer; its log: ${fs.readFileSync(log, 'utf8').slice(-2000)}`);
  }
  return {
    async release() {
      if (daemon.exitCode !== null || daemon.signalCode !== null) return;
      const exited = new Promise((r) => daemon.once('exit', r));
      daemon.kill('SIGTERM');
      await exited;
      fs.rmSync(log, { force: true });
    },
  };
}

/**
 * The runtime tests' environment and storage on the engine (one node): the fixtures' and built-in software in the
 * game image, games and helpers as GAME_USER. One image for every test file (the same content builds the same name).
 */
export const dockerEnvironment: EnvironmentFactory = (log, config) => dockerNode(engine, log, config.dataDir);

export function dockerNode(on: Engine, log: Logger, dataDir: string) {
  const catalog = loadSoftwareCatalog({ operatorDir: fixtureSoftwareDir });
  return createDockerNode({
    engine: on,
    instance: instanceName(dataDir),
    gameEnv: { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8' },
    user: GAME_USER,
    dataDir,
    image: { imageFiles: catalog.imageFiles(), ...catalog.imageModules(), softwareDirs: [builtinSoftwareDir(), fixtureSoftwareDir] },
    log,
  });
}

export interface ContainerInfo {
  Id: string;
  State: string;
  Labels: Record<string, string>;
}

/** Every container (running or not) labelled with the instance of this DATA_DIR, helpers included. */
function allContainersOf(dataDir: string, on: Engine): Promise<ContainerInfo[]> {
  const filters = encodeURIComponent(JSON.stringify({ label: [`${LABEL_INSTANCE}=${instanceName(dataDir)}`] }));
  return on.json<ContainerInfo[]>('GET', `/containers/json?all=1&filters=${filters}`);
}

/**
 * Every game container (running or not) of this DATA_DIR's instance: not the short-lived helpers that read and
 * write volumes (helper-containers.ts), which the disk watcher may have running at any time.
 */
export async function containersOf(dataDir: string, on: Engine = engine): Promise<ContainerInfo[]> {
  return (await allContainersOf(dataDir, on)).filter((c) => c.Labels[LABEL_SERVER] !== undefined);
}

/** Removes, by id, every container of this DATA_DIR's instance, then its volumes; resolves with how many containers. */
export async function removeContainersOf(dataDir: string, on: Engine = engine): Promise<number> {
  const left = await allContainersOf(dataDir, on);
  for (const c of left) await on.json('DELETE', `/containers/${c.Id}?force=1`).catch(() => undefined);
  for (const v of await volumesOf(dataDir, on)) await on.json('DELETE', `/volumes/${v.Name}`).catch(() => undefined);
  return left.length;
}

/** Every volume labelled with the instance of this DATA_DIR. */
export async function volumesOf(dataDir: string, on: Engine = engine): Promise<{ Name: string; Labels: Record<string, string> }[]> {
  const filters = encodeURIComponent(JSON.stringify({ label: [`${LABEL_INSTANCE}=${instanceName(dataDir)}`] }));
  return (await on.json<{ Volumes: { Name: string; Labels: Record<string, string> }[] | null }>('GET', `/volumes?filters=${filters}`)).Volumes ?? [];
}

/** A container of the game image, never started and unlabelled, with a server's volume mounted where games have it. */
export async function containerOnVolume(on: Engine, dataDir: string, serverId: string): Promise<string> {
  const image = (await on.json<{ RepoTags: string[] }[]>('GET', '/images/json')).flatMap((i) => i.RepoTags ?? []).find((n) => n.startsWith('gsh-game:'))!;
  const c = await on.json<{ Id: string }>('POST', '/containers/create', {
    Image: image, Cmd: [IMAGE_NODE, '-e', ''], HostConfig: { Mounts: [{ Type: 'volume', Source: volumeName(instanceName(dataDir), serverId), Target: GAME_DIR }] },
  });
  return c.Id;
}

/** Puts files into a server's volume on an engine, as the game could write them (the engines' archive endpoint). */
export async function putIntoVolume(on: Engine, dataDir: string, serverId: string, files: Record<string, Buffer>): Promise<void> {
  const container = await containerOnVolume(on, dataDir, serverId);
  try {
    const pack = tar.pack();
    for (const [name, content] of Object.entries(files)) pack.entry({ name, uid: GAME_USER.uid, gid: GAME_USER.gid }, content);
    pack.finalize();
    await on.upload(`/containers/${container}/archive?path=${GAME_DIR}`, Readable.from(pack), 'application/x-tar', 'PUT');
  } finally {
    await on.json('DELETE', `/containers/${container}?force=1`);
  }
}

export interface SecondEngine {
  dockerHost: string;
  engine: Engine;
  /** Stops the engine (its containers end with it) and resolves once it has exited. */
  stop(): Promise<void>;
  /** Starts it again on the same folders; resolves once it answers. */
  start(): Promise<void>;
  /** Leaves it as it was found: the one .ci/run started running again, one started here stopped and removed. */
  release(): Promise<void>;
}

const nodeScript = path.join(__dirname, '..', '..', 'scripts', 'docker-node.sh');

function runNodeScript(command: 'start' | 'stop', dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('bash', [nodeScript, command, dir], { timeout: 120_000 }, (err, _out, stderr) =>
      err ? reject(new Error(`docker-node.sh ${command} ${dir}: ${stderr || err.message}`)) : resolve(),
    );
  });
}

/**
 * How many second engines test files may hold at once, each with its own folder, bridge and lock: the files that
 * stop and start one (moves, volumes, nodes) hold it for minutes, and with one engine the others waited that long
 * holding a jest worker idle.
 */
const SECOND_ENGINES = 2;

/** Where each second engine's lock lives: one per machine, whichever checkout or worker asks. */
const lockOf = (slot: number) => path.join(os.tmpdir(), `gsh-second-engine-${slot}.lock`);

/**
 * A second engine is one resource of the machine that test files stop and start again (moves, nodes), and jest
 * runs several files at once: so each file takes one to itself, the first free of SECOND_ENGINES, or waits its
 * turn. A lock is a folder made atomically, held from secondEngine() until release(), naming its holder's pid; one
 * whose holder is gone is taken over.
 */
async function lockSecondEngine(): Promise<{ slot: number; unlock: () => void }> {
  const deadline = Date.now() + 20 * 60_000;
  for (;;) {
    for (let slot = 0; slot < SECOND_ENGINES; slot++) {
      const unlock = tryLock(lockOf(slot));
      if (unlock) return { slot, unlock };
    }
    if (Date.now() > deadline) throw new Error(`every second engine stayed locked (${lockOf(0)} and the next)`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

function tryLock(lock: string): (() => void) | undefined {
  const pidFile = path.join(lock, 'pid');
  try {
    fs.mkdirSync(lock);
    fs.writeFileSync(pidFile, String(process.pid));
    return () => fs.rmSync(lock, { recursive: true, force: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const holder = Number(fs.existsSync(pidFile) ? fs.readFileSync(pidFile, 'utf8') : 0); // 0: just being made
  if (holder > 0 && !alive(holder)) {
    fs.rmSync(lock, { recursive: true, force: true });
    return tryLock(lock);
  }
  return undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A second engine beside the first, as a second node (scripts/docker-node.sh). With GSH_NODE2_DIR, the one .ci/run
 * started there, or the next in GSH_NODE2_DIR-1 (started here and left running for the files after, as the first
 * is; .ci/run stops both); without it, one started here in a short folder of its own (a unix socket path is at
 * most 107 bytes) and stopped again. The calling file has it to itself until release() (lockSecondEngine).
 */
export async function secondEngine(): Promise<SecondEngine> {
  const { slot, unlock } = await lockSecondEngine();
  const given = process.env.GSH_NODE2_DIR && (slot === 0 ? process.env.GSH_NODE2_DIR : `${process.env.GSH_NODE2_DIR}-${slot}`);
  const dir = given || fs.mkdtempSync('/tmp/gsh-n2-');
  try {
    await runNodeScript('start', dir);
  } catch (err) {
    unlock();
    throw err;
  }
  const dockerHost = `unix://${dir}/docker.sock`;
  let running = true;
  return {
    dockerHost,
    engine: createEngine(dockerHost),
    async stop() {
      await runNodeScript('stop', dir);
      running = false;
    },
    async start() {
      await runNodeScript('start', dir);
      running = true;
    },
    async release() {
      try {
        if (given) {
          if (!running) await runNodeScript('start', dir);
          return;
        }
        await runNodeScript('stop', dir);
        fs.rmSync(dir, { recursive: true, force: true });
      } finally {
        unlock();
      }
    },
  };
}

/** `gsh …` in-process, as an operator runs it on this DATA_DIR: its exit code and what it printed. */
export async function gsh(dataDir: string, ...argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runCli(argv, { DATA_DIR: dataDir }, (s) => lines.push(s), (s) => lines.push(s));
  return { code, out: lines.join('\n') };
}

/**
 * Watches every container of this DATA_DIR's instance on the engines (helpers too) while a test runs, reading each
 * one's mounts once; `stop()` resolves with each mount seen as `type source`, so a test can show none is a bind.
 */
export function watchMounts(dataDir: string, engines: Engine[]): { stop(): Promise<string[]> } {
  const seen = new Map<string, string[]>();
  let on = true;
  const loop = (async () => {
    while (on) {
      for (const e of engines) {
        const all = await allContainersOf(dataDir, e).catch(() => [] as ContainerInfo[]);
        for (const c of all.filter((c) => !seen.has(c.Id))) {
          const inspect = await e.json<{ Mounts: { Type: string; Source: string; Name?: string }[] }>('GET', `/containers/${c.Id}/json`).catch(() => null);
          if (inspect) seen.set(c.Id, inspect.Mounts.map((m) => `${m.Type} ${m.Name ?? m.Source}`));
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    async stop() {
      on = false;
      await loop;
      return [...seen.values()].flat();
    },
  };
}

/**
 * The service in processes of its own, as `npm start` runs it (test/helpers/service-main.cjs), on RUNTIME=docker over
 * `dataDir`: `start` resolves once one listens; `logTail` keeps the services' last log lines but the access log, to
 * show with a failure; `killAll` ends every one still running (a test's afterAll).
 */
export function serviceProcesses(dataDir: string) {
  const started: ChildProcess[] = [];
  const logTail: string[] = [];
  async function start(): Promise<{ child: ChildProcess; base: string }> {
    const env = {
      ...process.env, DATA_DIR: dataDir, RUNTIME: 'docker', DOCKER_HOST, PORT: '0', HOST: '127.0.0.1', NODE_CHECK_INTERVAL_S: '1', RATE_LIMIT_PER_MINUTE: '100000',
    };
    const child = spawn(process.execPath, [path.join(__dirname, '..', 'helpers', 'service-main.cjs')], { env, stdio: ['ignore', 'pipe', 'ignore'] });
    started.push(child);
    let buffered = '';
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
          const line = buffered.slice(0, nl);
          const entry = JSON.parse(line);
          buffered = buffered.slice(nl + 1);
          if (entry.msg !== 'request') logTail.push(line.slice(0, 600));
          if (logTail.length > 60) logTail.shift();
          if (entry.msg === 'listening') resolve(entry.address.port);
        }
      });
      child.once('exit', (code) => reject(new Error(`the service exited with ${code}`)));
    });
    return { child, base: `http://127.0.0.1:${port}` };
  }
  const killAll = () => {
    for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  return { start, logTail, killAll };
}
