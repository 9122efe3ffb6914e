// The game image, built on each node from this host's files with no registry (docs/architecture.md "The Docker
// environment"): everything a game needs is in it, so a node needs nothing but its engine.
import { execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import tar from 'tar-stream';
import { packageRoot } from '../../../paths';
import { FILE_OPS, FOLDER_OPS, MOVE_OPS } from '../restore';
import { removeContainer } from './container-process';
import type { Engine } from './engine';
import { EngineError } from './engine';
import { moduleClosure } from './image-modules';

const run = promisify(execFile);

/**
 * Where Node is in the image, whatever its path on the host: a host path under /tmp (Node from npm, as CI's Node 24
 * run has it) would be hidden by the container's /tmp tmpfs. docker-environment.ts runs this in place of
 * process.execPath.
 */
export const IMAGE_NODE = '/usr/local/bin/node';
/** Where a server's volume is in its containers: the game's folder (its `{dir}`). Owned by the games' user. */
export const GAME_DIR = '/srv/game';
const PATH_ENV = 'PATH=/usr/local/bin:/usr/bin:/bin';
/** What buildGame puts in the layer besides the files (bumped when that changes, so hosts build the new one). */
const GAME_LAYOUT = 1;
/** Importing the base (hundreds of MB) may keep the engine silent a while after the last byte. */
const IMPORT_IDLE_MS = 5 * 60_000;

/**
 * What the image holds, in two layers so a change to a launcher rebuilds only the small one:
 *   - the base: Node (at IMAGE_NODE) and the libraries it links, the definitions' `image_files` (a native server
 *     and its data) with theirs, and their `image_modules` with everything they depend on from node_modules, at
 *     their paths on this host, less `image_exclude`;
 *   - the game layer on top: the software definitions' folders (launchers, the Luanti mod), folder-ops.cjs (what
 *     helper containers run on a volume), each at its path on this host so an argv rendered here runs unchanged,
 *     and GAME_DIR owned by the games' user, so each new volume mounted there starts as theirs.
 */
export interface ImageContent {
  imageFiles: readonly string[];
  modules: readonly string[];
  exclude: readonly string[];
  softwareDirs: readonly string[];
  user: { uid: number; gid: number };
}

const short = (h: crypto.Hash) => h.digest('hex').slice(0, 10);

/** Each image's name, from what it holds: a host whose Node, packages, games or launchers change builds new ones. */
export function imageNames(content: ImageContent): { base: string; game: string } {
  const base = crypto.createHash('sha256');
  for (const p of [...content.imageFiles].sort()) {
    const st = fs.statSync(p);
    base.update(`file ${p} ${st.size} ${st.mtimeMs}\n`);
  }
  for (const dir of moduleClosure(packageRoot(), content.modules)) {
    base.update(`module ${dir} ${(JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: string }).version}\n`);
  }
  for (const p of [...content.exclude].sort()) base.update(`exclude ${p}\n`);
  const baseName = `gsh-base:v3-node-${process.versions.node}-${short(base)}`;
  const game = crypto.createHash('sha256').update(`${baseName}\nlayout ${GAME_LAYOUT}\nuser ${content.user.uid}:${content.user.gid}\n`);
  for (const file of layerFiles(content.softwareDirs)) game.update(`${file}\n`).update(fs.readFileSync(file));
  return { base: baseName, game: `gsh-game:v3-${short(game)}` };
}

/** The files of the game layer: every file of the software folders that exist, and folder-ops.cjs with its two. */
function layerFiles(softwareDirs: readonly string[]): string[] {
  const files = [FOLDER_OPS, FILE_OPS, MOVE_OPS];
  // At the paths the definitions name them by (a launcher's path is rendered from its definition's), links followed.
  const walk = (dir: string): void => {
    for (const name of fs.readdirSync(dir)) {
      const full = path.join(dir, name);
      const st = fs.statSync(full);
      if (st.isDirectory()) walk(full);
      // The service's own modules beside the built-in definitions (src/runtime/software/*.ts) are not the game's.
      else if (st.isFile() && !name.endsWith('.ts')) files.push(full);
    }
  };
  for (const dir of softwareDirs) if (fs.existsSync(dir)) walk(dir);
  return [...new Set(files)].sort();
}

async function linked(binary: string): Promise<string[]> {
  const { stdout } = await run('ldd', [binary]);
  return stdout
    .split('\n')
    .map((line) => /(?:=>\s*)?(\/\S+)\s+\(0x/.exec(line)?.[1])
    .filter((p): p is string => p !== undefined && fs.existsSync(p));
}

/**
 * The absolute paths the base holds, each at its path on this host: Node itself, the `extra` files and folders (a
 * native game server and its data), every library `ldd` names for Node and each extra executable, and the package
 * folders of `modules` and what they depend on.
 */
export async function baseFiles(content: Pick<ImageContent, 'imageFiles' | 'modules'>, node: string = process.execPath): Promise<string[]> {
  const files = [node, ...(await linked(node))];
  for (const p of content.imageFiles) {
    const stat = fs.statSync(p); // a definition naming a missing file fails the build, saying which
    files.push(p);
    if (stat.isFile() && (stat.mode & 0o111) !== 0) files.push(...(await linked(p)));
  }
  files.push(...moduleClosure(packageRoot(), content.modules));
  return [...new Set(files)];
}

export async function imageExists(engine: Engine, name: string): Promise<boolean> {
  try {
    await engine.json('GET', `/images/${encodeURIComponent(name)}/json`);
    return true;
  } catch (err) {
    if (err instanceof EngineError && err.status === 404) return false;
    throw err;
  }
}

/**
 * Imports a tarball of baseFiles() as the base image (API "Create an image", fromSrc=-), with no shell and no package
 * manager in it. `tar -h` stores each symlinked library as the file it names; Node itself is stored as IMAGE_NODE.
 */
async function buildBase(engine: Engine, name: string, content: ImageContent): Promise<void> {
  const files = (await baseFiles(content)).map((p) => p.replace(/^\//, ''));
  // GNU tar --transform takes a sed expression: a basic regular expression, whose special characters (and the
  // delimiter) are escaped.
  const nodeMember = process.execPath.replace(/^\//, '').replace(/[\\^$.*[\],]/g, '\\$&');
  const rename = `s,^${nodeMember}$,${IMAGE_NODE.slice(1)},`;
  const excludes = content.exclude.map((p) => `--exclude=${path.join(packageRoot(), 'node_modules', p).replace(/^\//, '')}`);
  const tarArgs = ['-c', '-h', '-f', '-', '-C', '/', `--transform=${rename}`, ...excludes, ...files];
  const child = spawn('tar', tarArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const [repo, tag] = name.split(':');
  const tarExit = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const query = `fromSrc=-&repo=${encodeURIComponent(repo)}&tag=${encodeURIComponent(tag)}&changes=${encodeURIComponent(`ENV ${PATH_ENV}`)}`;
  let text: string;
  try {
    text = await engine.upload(`/images/create?${query}`, child.stdout, 'application/x-tar', 'POST', IMPORT_IDLE_MS);
  } catch (err) {
    child.kill('SIGKILL'); // nobody reads its output any more
    throw err;
  }
  if ((await tarExit) !== 0) throw new Error(`tar of the image files failed: ${stderr.trim()}`);
  const failure = /"error"\s*:\s*"([^"]*)"/.exec(text);
  if (failure) throw new Error(`the engine refused the image: ${failure[1]}`);
}

/**
 * The game layer: a container of the base (never started) gets the layer's files through the engine's archive
 * endpoint and is committed as the image (API "Create a new image from a container's changes").
 */
async function buildGame(engine: Engine, name: string, base: string, content: ImageContent): Promise<void> {
  const { Id } = await engine.json<{ Id: string }>('POST', '/containers/create', { Image: base, Cmd: [IMAGE_NODE] });
  try {
    const pack = tar.pack();
    const { uid, gid } = content.user;
    pack.entry({ name: GAME_DIR.slice(1), type: 'directory', mode: 0o755, uid, gid });
    for (const file of layerFiles(content.softwareDirs)) {
      const st = fs.statSync(file);
      pack.entry({ name: file.slice(1), mode: st.mode & 0o755, uid: 0, gid: 0, mtime: st.mtime }, fs.readFileSync(file));
    }
    pack.finalize();
    await engine.upload(`/containers/${Id}/archive?path=/`, Readable.from(pack), 'application/x-tar', 'PUT');
    const [repo, tag] = name.split(':');
    await engine.json('POST', `/commit?container=${Id}&repo=${encodeURIComponent(repo)}&tag=${encodeURIComponent(tag)}&pause=0`);
  } finally {
    await removeContainer(engine, Id).catch(() => undefined);
  }
}

/** Builds both layers on the engine (each unless it has it already, or always with `force`); resolves with the name. */
export async function buildImage(engine: Engine, content: ImageContent, force = false): Promise<string> {
  const names = imageNames(content);
  if (force || !(await imageExists(engine, names.base))) await buildBase(engine, names.base, content);
  if (force || !(await imageExists(engine, names.game))) await buildGame(engine, names.game, names.base, content);
  return names.game;
}

/** The game image's name, built on first need; concurrent callers share one build, a failed one is tried again. */
export function imageKeeper(engine: Engine, content: ImageContent): () => Promise<string> {
  let pending: Promise<string> | null = null;
  return (): Promise<string> => {
    pending ??= buildImage(engine, content);
    pending.catch(() => (pending = null)); // a failed build is retried by the next launch
    return pending;
  };
}
