// The game image: built on the node from this host's Node binary and the libraries it links, with no registry
// (docs/architecture.md "The Docker environment"). Games' code (launchers, node_modules) is mounted read-only.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import type { Engine } from './engine';
import { EngineError } from './engine';

const run = promisify(execFile);

/** The image's name: one per Node version, so a host whose Node changes builds a new one. */
export function imageName(): string {
  return `gsh-game:node-${process.versions.node}`;
}

/** The absolute paths the image holds: Node itself (at its path on this host) and every library `ldd` names. */
export async function imageFiles(node: string = process.execPath): Promise<string[]> {
  const { stdout } = await run('ldd', [node]);
  const libs = stdout
    .split('\n')
    .map((line) => /(?:=>\s*)?(\/\S+)\s+\(0x/.exec(line)?.[1])
    .filter((p): p is string => p !== undefined && fs.existsSync(p));
  return [...new Set([node, ...libs])];
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
 * package manager in it. `tar -h` stores each symlinked library as the file it names. Resolves with the name.
 */
export async function buildImage(engine: Engine, name: string = imageName()): Promise<string> {
  const files = (await imageFiles()).map((p) => p.replace(/^\//, ''));
  const tar = spawn('tar', ['-c', '-h', '-f', '-', '-C', '/', ...files], { stdio: ['ignore', 'pipe', 'pipe'] });
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
export function imageKeeper(engine: Engine, name: string = imageName()) {
  let pending: Promise<string> | null = null;
  return (): Promise<string> => {
    pending ??= (async () => ((await imageExists(engine, name)) ? name : buildImage(engine, name)))();
    pending.catch(() => (pending = null)); // a failed build is retried by the next launch
    return pending;
  };
}
