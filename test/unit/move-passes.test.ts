// A live move's passes inside the files (issue 41 §2; docs/architecture.md "Moving a server"; folder-ops.cjs snapshot,
// delta, apply, listing) on real folders: a first copy made after the record, then the original changed every way a
// game or its owner changes files (a rewrite of the same size, a new file, a removed folder, a changed mode, a file
// renamed over another, a folder turned into a file), and only what the delta holds carried over, with tar as the
// engines' archives do: the two listings and every file's content are equal again. And a last pass whose old node
// goes away while the game stops fails at once (move-passes.ts haltOrAway).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { CommandContext } from '../../src/runtime/server/door';
import type { ServerSupervisor } from '../../src/runtime/server/server-supervisor';
import { lastPass, type PassDeps } from '../../src/runtime/services/move-passes';
import type { Move } from '../../src/store/moves-repo';
import { tempDir } from '../helpers/app';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- folder-ops.cjs is plain JavaScript, loaded as the helpers run it
const ops = require('../../src/runtime/host/folder-ops.cjs') as Record<'snapshot' | 'delta' | 'apply' | 'listing', (dir: string) => Promise<Record<string, unknown>>>
  & { flush: (dir: string, tag?: string) => Promise<Record<string, unknown>> };

const root = tempDir('move-passes');
const [src, dst] = [path.join(root, 'src'), path.join(root, 'dst')];
const put = (p: string, content: string) => {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
};
/** A tar of `from` unpacked into `to`, keeping modes and times (what GET archive then PUT archive does). */
const carry = (from: string, to: string) => execFileSync('sh', ['-c', `tar -C "${from}" -cf - . | tar -C "${to}" -xpf -`]);
/** Every file under `dir` but the move's own folder, with its content. */
const contents = (dir: string): Record<string, string> => Object.fromEntries(
  (fs.readdirSync(dir, { recursive: true }) as string[]).filter((p) => !p.startsWith('.gsh-move') && fs.lstatSync(path.join(dir, p)).isFile())
    .sort().map((p) => [p, fs.readFileSync(path.join(dir, p), 'utf8')]),
);

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

test('what changed after the record, and only that, makes the copy equal again', async () => {
  put(path.join(src, 'world/region/r.0.0.mca'), 'aaaa');
  put(path.join(src, 'world/region/r.0.1.mca'), 'bbbb');
  put(path.join(src, 'world/gone/old.dat'), 'old');
  put(path.join(src, 'world/level.dat'), 'level');
  put(path.join(src, 'world/turns'), 'x');
  put(path.join(src, 'server.properties'), 'motd=1');
  fs.mkdirSync(dst);
  expect(await ops.snapshot(src)).toEqual({ files: 6, bytes: 4 + 4 + 3 + 5 + 1 + 6 });
  carry(src, dst);

  await new Promise((r) => setTimeout(r, 20));
  fs.writeFileSync(path.join(src, 'world/region/r.0.0.mca'), 'AAAA'); // same size, same second
  put(path.join(src, 'world/region/r.1.1.mca'), 'new region');
  fs.rmSync(path.join(src, 'world/gone'), { recursive: true });
  fs.chmodSync(path.join(src, 'server.properties'), 0o600);
  put(path.join(src, 'world/level.dat_new'), 'LEVEL');
  fs.renameSync(path.join(src, 'world/level.dat_new'), path.join(src, 'world/level.dat'));
  fs.rmSync(path.join(src, 'world/turns'));
  put(path.join(src, 'world/turns/inside'), 'y');

  const delta = await ops.delta(src);
  expect(delta).toMatchObject({ files: 5, bytes: 4 + 10 + 6 + 5 + 1, removed: 1, listing: await ops.listing(src) });
  expect(await ops.listing(src)).not.toEqual(await ops.listing(dst));
  carry(path.join(src, '.gsh-move', 'delta'), dst);
  expect(await ops.apply(dst)).toEqual({ removed: 1, listing: await ops.listing(src) });

  expect(await ops.listing(dst)).toEqual(await ops.listing(src));
  expect(contents(dst)).toEqual(contents(src));
  expect(fs.existsSync(path.join(dst, '.gsh-move'))).toBe(false);
  expect(fs.statSync(path.join(dst, 'server.properties')).mode & 0o777).toBe(0o600);
  // Made again after an interruption: the same delta, the same result.
  expect(await ops.delta(src)).toEqual(delta);
});

test('apply refuses a removal outside the files', async () => {
  const dir = path.join(root, 'apply');
  put(path.join(dir, '.gsh-move/removed.json'), JSON.stringify(['../escape']));
  await expect(ops.apply(dir)).rejects.toThrow('not a path of the files');
});

test('flush follows a copy as it lands and ends once the sign of the whole copy is there; without a tag, at once', async () => {
  const dir = path.join(root, 'flush');
  put(path.join(dir, 'world/a.bin'), 'a'.repeat(4096));
  let ended = false;
  const following = ops.flush(dir, 'f00d').then((r) => ((ended = true), r));
  await new Promise((r) => setTimeout(r, 300));
  fs.appendFileSync(path.join(dir, 'world/a.bin'), 'grown after its first fsync');
  put(path.join(dir, 'world/region/b.bin'), 'b');
  await new Promise((r) => setTimeout(r, 300));
  expect(ended).toBe(false); // the copy is not whole until its sign says so
  put(path.join(dir, '.gsh-move/landed-f00d'), '');
  expect(await following).toMatchObject({ files: 2 });
  expect(fs.existsSync(path.join(dir, '.gsh-move/landed-f00d'))).toBe(false);
  expect(await ops.flush(dir)).toEqual({ files: 2 });
  await expect(ops.flush(dir, '../x')).rejects.toThrow('not a tag');
});

test('a last pass whose old node stops answering while the game stops fails, and does not wait for an exit the engine cannot report', async () => {
  // The engine went away mid-stop: the halt never ends (container-process.ts waitExit retries until it answers).
  let answers = true;
  let copied = false;
  const server = { id: 'srv_x', hasProcess: true, state: 'stopping', halt: () => new Promise<void>(() => undefined) };
  const transfer = { reachable: () => answers, catchUp: () => ((copied = true), Promise.reject(new Error('not reached'))) };
  const deps = { repo: {}, transfer, log: { info: () => undefined } } as unknown as PassDeps;
  const move = { fromNode: 'two', toNode: 'one', wasRunning: true } as Move;
  let startedAhead = false;
  const pass = lastPass(deps, server as unknown as ServerSupervisor, { overtaken: false } as CommandContext, move, () => (startedAhead = true));
  setTimeout(() => (answers = false), 1_200);
  expect(await pass).toEqual({ failed: 'node two stopped answering while the game stopped', restart: false });
  expect({ copied, startedAhead }).toEqual({ copied: false, startedAhead: false }); // nothing starts on the new node either
});
