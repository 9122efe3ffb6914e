// The first run as an operator sees it: the built service (`node dist/src/main.js`, built by `npm test`) prints
// one short block, the command it names creates the first account, and the docs build is quiet unless it fails.
// Game ports 29230-29239.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/app';

const root = path.join(__dirname, '..', '..');
let dir: string;
const started: ChildProcess[] = [];

beforeEach(() => {
  dir = tempDir('first-run');
});
afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Starts the service; resolves with its stderr up to the end of the block (the block's last line is known). */
function start(env: Record<string, string>): Promise<{ child: ChildProcess; block: string }> {
  const child = spawn(process.execPath, [path.join(root, 'dist', 'src', 'main.js')], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let stderr = '';
  let stdout = '';
  child.stdout!.on('data', (c: Buffer) => void (stdout += c.toString()));
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString();
      if (/ {2}data {7}.*\n/.test(stderr) && (/npx gsh user create.*\n/.test(stderr) || !stderr.includes('No dashboard account'))) resolve({ child, block: stderr });
    });
    child.once('exit', (code) => reject(new Error(`service exited (${code}): ${stderr}${stdout}`)));
  });
}

async function stop(child: ChildProcess) {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

test('npm start prints one short block; its command creates the first account, and the block stops asking', async () => {
  const env = { DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', GAME_PORT_RANGE: '29230-29239' };
  const first = await start(env);
  const lines = first.block.trimEnd().split('\n');
  expect(lines[0]).toBe(`gsh is running on Node ${process.version} (game servers as local processes).`);
  const port = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(lines[1])![1];
  expect(lines.slice(1)).toEqual([
    `  dashboard  http://127.0.0.1:${port}/`,
    `  API docs   http://127.0.0.1:${port}/docs`,
    `  data       ${dir}`,
    'No dashboard account yet. Create the first one (in another terminal, from this folder):',
    `  DATA_DIR=${dir} npx gsh user create --email you@example.com --password '<8 or more characters>'`,
  ]);
  expect((await fetch(`http://127.0.0.1:${port}/docs`)).status).toBe(200);

  // The command as printed, with a real email and password in place of the placeholders.
  const command = lines[lines.length - 1].trim().replace('<8 or more characters>', 'first-password').split(' ');
  const argv = command.slice(command.indexOf('gsh') + 1).map((a) => a.replace(/^'|'$/g, ''));
  const created = spawnSync(process.execPath, [path.join(root, 'bin', 'gsh.js'), ...argv], { env: { ...process.env, DATA_DIR: dir }, encoding: 'utf8' });
  expect([created.status, created.stdout.trim()]).toEqual([0, 'Created user you@example.com.']);
  await stop(first.child);

  const second = await start(env);
  expect(second.block).not.toContain('No dashboard account');
  expect(second.block.trimEnd().split('\n')).toHaveLength(4);
  await stop(second.child);
}, 240_000); // two starts of the built service and a CLI run, on a busy two-core machine

test('the docs build prints nothing when it works, and Redocly\'s own output when it fails', () => {
  const script = path.join(root, 'scripts', 'build-docs.js');
  const ok = spawnSync(process.execPath, [script, '--force', '--out', path.join(dir, 'ok', 'index.html')], { encoding: 'utf8' });
  expect([ok.status, ok.stdout, ok.stderr]).toEqual([0, '', '']);
  expect(fs.statSync(path.join(dir, 'ok', 'index.html')).size).toBeGreaterThan(100_000);

  fs.writeFileSync(path.join(dir, 'bad.yaml'), 'openapi: 3.1.0\ninfo: [broken\n');
  const bad = spawnSync(process.execPath, [script, '--force', '--spec', path.join(dir, 'bad.yaml'), '--out', path.join(dir, 'bad', 'index.html')], { encoding: 'utf8' });
  expect(bad.status).not.toBe(0);
  expect(bad.stderr).toMatch(/bad\.yaml/); // Redocly's own report of the error
  expect(bad.stderr).toContain(`build-docs: Redocly failed (exit ${bad.status}) building ${path.join(dir, 'bad.yaml')}`);
});
