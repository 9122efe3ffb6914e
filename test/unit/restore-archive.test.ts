// A restore reads its archive once (src/runtime/host/restore.ts swapIn, checkedArchive; storage.ts importArchive):
// its entries are checked and unpacked beside the world in that one read, its SHA-256 compared at the end, and only
// then is beforeSwap called (the game stopped) and the world swapped in. A damaged archive, one of another digest
// and one with an entry outside the backup's paths all leave the server's folder as it was, beforeSwap uncalled.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { checkedArchive, swapIn } from '../../src/runtime/host/restore';
import { tempDirsOfFile } from '../helpers/app';

const dirs = tempDirsOfFile('restore');
const sha256 = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** A server folder with a world, and the gzipped tar of another world made by tar(1) from `make` in `source`. */
function setUp(make: (source: string) => string[]): { dir: string; file: string } {
  const root = dirs();
  const dir = path.join(root, 'server');
  fs.mkdirSync(path.join(dir, 'world'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'world', 'marker.txt'), 'the live world');
  const source = path.join(root, 'source');
  fs.mkdirSync(source);
  const file = path.join(root, 'backup.tar.gz');
  execFileSync('tar', ['-czf', file, '-C', source, ...make(source)]);
  return { dir, file };
}

function backupWorld(source: string): string[] {
  fs.mkdirSync(path.join(source, 'world', 'region'), { recursive: true });
  fs.writeFileSync(path.join(source, 'world', 'marker.txt'), 'the backup');
  fs.writeFileSync(path.join(source, 'world', 'region', 'r.0.0.mca'), crypto.randomBytes(256 * 1024));
  return ['world'];
}

/** Why `p` rejected ('resolved' if it did not): zlib's errors are not of the test's realm, so toThrow cannot read them. */
const failureOf = (p: Promise<unknown>) => p.then(() => 'resolved', (err: Error) => err.message);

/** What a failed restore must leave: the live world, and no staging folder. */
function unchanged(dir: string): void {
  expect(fs.readFileSync(path.join(dir, 'world', 'marker.txt'), 'utf8')).toBe('the live world');
  expect(fs.readdirSync(dir)).toEqual(['world']);
}

test('a whole archive of its digest is swapped in, beforeSwap called once just before', async () => {
  const { dir, file } = setUp(backupWorld);
  const seen: string[][] = [];
  await swapIn(dir, ['world'], { file, sha256: sha256(file), tag: 'bkp_one' }, async () => {
    seen.push(fs.readdirSync(dir).sort()); // unpacked beside the world, nothing swapped yet
  });
  expect(seen).toEqual([['.restore-bkp_one', 'world']]);
  expect(fs.readFileSync(path.join(dir, 'world', 'marker.txt'), 'utf8')).toBe('the backup');
  expect(fs.statSync(path.join(dir, 'world', 'region', 'r.0.0.mca')).size).toBe(256 * 1024);
  expect(fs.readdirSync(dir)).toEqual(['world']);
});

test.each<[string, (file: string) => string, RegExp]>([
  ['of another digest', () => 'a'.repeat(64), /does not match its SHA-256/],
  ['damaged after it was recorded', (file) => {
    const digest = sha256(file);
    fs.appendFileSync(file, 'damage');
    return digest;
  }, /incorrect header check|does not match its SHA-256/], // gzip notices the bytes past its end first
])('an archive %s fails before beforeSwap and changes nothing', async (_name, digestOf, reason) => {
  const { dir, file } = setUp(backupWorld);
  const sha = digestOf(file);
  const beforeSwap = jest.fn(async () => undefined);
  expect(await failureOf(swapIn(dir, ['world'], { file, sha256: sha, tag: 'bkp_bad' }, beforeSwap))).toMatch(reason);
  expect(beforeSwap).not.toHaveBeenCalled();
  unchanged(dir);
});

test.each<[string, (source: string) => string[], RegExp]>([
  ['a link', (source) => {
    fs.mkdirSync(path.join(source, 'world'));
    fs.symlinkSync('/etc/passwd', path.join(source, 'world', 'passwd'));
    return ['world'];
  }, /links or special files/],
  ['a name outside the backup\'s paths', (source) => {
    backupWorld(source);
    fs.writeFileSync(path.join(source, 'elsewhere.txt'), 'outside');
    return ['world', 'elsewhere.txt'];
  }, /outside world/],
])('an archive holding %s, of the right digest, is refused and changes nothing', async (_name, make, reason) => {
  const { dir, file } = setUp(make);
  const beforeSwap = jest.fn(async () => undefined);
  expect(await failureOf(swapIn(dir, ['world'], { file, sha256: sha256(file), tag: 'bkp_evil' }, beforeSwap))).toMatch(reason);
  expect(beforeSwap).not.toHaveBeenCalled();
  unchanged(dir);
  expect(fs.existsSync(path.join(dir, 'elsewhere.txt'))).toBe(false);
});

test('checkedArchive passes on no entry after a bad one, and reads the file once', async () => {
  const { file } = setUp((source) => {
    fs.mkdirSync(path.join(source, 'a'));
    fs.writeFileSync(path.join(source, 'a', 'first.txt'), 'first');
    fs.writeFileSync(path.join(source, 'b.txt'), 'outside');
    fs.writeFileSync(path.join(source, 'c.txt'), 'after');
    return ['a', 'b.txt', 'c.txt'];
  });
  const opened = jest.spyOn(fs, 'createReadStream');
  try {
    const stream = checkedArchive({ file, sha256: sha256(file), tag: 'bkp_x' }, ['a']);
    const out: Buffer[] = [];
    const failure = await new Promise<Error>((resolve) => {
      stream.on('data', (d: Buffer) => out.push(d));
      stream.on('error', resolve);
      stream.on('end', () => resolve(new Error('ended without an error')));
    });
    expect(failure.message).toMatch(/"b.txt", outside a/);
    const text = Buffer.concat(out).toString('latin1');
    expect(text).toContain('first');
    expect(text).not.toContain('outside');
    expect(text).not.toContain('after');
    expect(opened.mock.calls.filter(([p]) => p === file)).toHaveLength(1);
  } finally {
    opened.mockRestore();
  }
});
