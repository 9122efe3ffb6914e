// The game image: built on the node from this host's Node binary and the libraries it links, with no registry
// (docs/architecture.md "The Docker environment"). Games' code (launchers, node_modules) is mounted read-only.
import { execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { promisify } from 'node:util';
import type { Engine } from './engine';
import { EngineError } from './engine';

const run = promisify(execFile);

/**
 * Where Node is in the image, whatever its path on the host: a host path under /tmp (Node from npm, as CI's Node 24
 * run has it) would be hidden by the container's /tmp tmpfs. docker-environment.ts runs this in place of
 * process.execPath.
 */
export const IMAGE_NODE = '/usr/local/bin/node';

/**
 * The image's name: one per layout (`v2`: Node at IMAGE_NODE), per Node version and per set of extra files (the
 * software definitions' `image_files`), so a host whose Node or games change builds a new one.
 */
export function imageName(extra: readonly string[] = []): string {
  if (extra.length === 0) return `gsh-game:v2-node-${process.versions.node}`;
  const digest = crypto.createHash('sha256').update([...extra].sort().join('\n')).digest('hex').slice(0, 10);
  return `gsh-game:v2-node-${process.versions.node}-${digest}`;
}

async function linked(binary: string): Promise<string[]> {
  const { stdout } = await run('ldd', [binary]);
  return stdout
    .split('\n')
    .map((line) => /(?:=>\s*)?(\/\S+)\s+\(0x/.exec(line)?.[1])
    .filter((p): p is string => p !== undefined && fs.existsSync(p));
}

/**
 * The absolute paths the image holds, each at its path on this host: Node itself, the definitions' `extra`
 * files and folders (a native game server and its data), and every library `ldd` names for Node and for each
 * extra executable.
 */
export async function imageFiles(node: string = process.execPath, extra: readonly string[] = []): Promise<string[]> {
  const files = [node, ...(await linked(node))];
  for (const p of extra) {
    const stat = fs.statSync(p); // a definition naming a missing file fails the build, saying which
    files.push(p);
    if (stat.isFile() && (stat.mode & 0o111) !== 0) files.push(...(await linked(p)));
  }
  return [...new Set(files)];
}

export async function imageExists(engine: Engine, name: string = imageName()): Promise<boolean> {
  try {
    await engine.json('GET', `/images/${encodeURIComponent(name)}/json`);
    return true;
  } catch (err) {
    if (err instanceof EngineError && err.status === 404) return false;
    throw err;
  }
}

/**
 * Imports a tarball of imageFiles() as the image (API "Create an image", fromSrc=-), with no shell and no
 * package manager in it. `tar -h` stores each symlinked library as the file it names; Node itself is stored as
 * IMAGE_NODE. Resolves with the name.
 */
export async function buildImage(engine: Engine, name: string = imageName(), extra: readonly string[] = []): Promise<string> {
  const files = (await imageFiles(process.execPath, extra)).map((p) => p.replace(/^\//, ''));
  // GNU tar --transform takes a sed expression: a basic regular expression, whose special characters (and the
  // delimiter) are escaped.
  const nodeMember = process.execPath.replace(/^\//, '').replace(/[\\^$.*[\],]/g, '\\$&');
  const rename = `s,^${nodeMember}$,${IMAGE_NODE.slice(1)},`;
  const tar = spawn('tar', ['-c', '-h', '-f', '-', '-C', '/', `--transform=${rename}`, ...files], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  tar.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const [repo, tag] = name.split(':');
  const changes = encodeURIComponent(`ENV PATH=/usr/local/bin:/usr/bin:/bin`);
  const tarExit = new Promise<number | null>((resolve) => tar.once('exit', resolve));
  const query = `fromSrc=-&repo=${encodeURIComponent(repo)}&tag=${encodeURIComponent(tag)}&changes=${changes}`;
  let text: string;
  try {
    text = await engine.upload(`/images/create?${query}`, tar.stdout, 'application/x-tar');
  } catch (err) {
    tar.kill('SIGKILL'); // nobody reads its output any more
    throw err;
  }
  if ((await tarExit) !== 0) throw new Error(`tar of the image files failed: ${stderr.trim()}`);
  const failure = /"error"\s*:\s*"([^"]*)"/.exec(text);
  if (failure) throw new Error(`the engine refused the image: ${failure[1]}`);
  return name;
}

/** Builds the image unless the engine has it already; concurrent callers share one build. */
export function imageKeeper(engine: Engine, name: string = imageName(), extra: readonly string[] = []) {
  let pending: Promise<string> | null = null;
  return (): Promise<string> => {
    pending ??= (async () => ((await imageExists(engine, name)) ? name : buildImage(engine, name, extra)))();
    pending.catch(() => (pending = null)); // a failed build is retried by the next launch
    return pending;
  };
}
