// archive() (src/runtime/services/backups.ts) of the local storage's tar (local-storage.ts tarOf) on a busy service: a small world's archive fits whole in the pipe's buffer, so
// tar may exit before the service reads a byte, and Node discards a child's unread stdout once it exited. Here the
// libuv thread pool (which runs file opens) is kept busy with PBKDF2 jobs, as a loaded service's would be, so any
// file work between starting tar and reading it waits while tar exits. Every archive must still hold the world.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { archive } from '../../src/runtime/services/backups';
import { tarOf } from '../../src/runtime/host/local-storage';
import { tempDir } from '../helpers/app';

test('small archives made while the thread pool is saturated are all whole', async () => {
  const dir = tempDir('archive');
  fs.mkdirSync(path.join(dir, 'world'));
  fs.writeFileSync(path.join(dir, 'world', 'level.dat'), 'a tiny world');
  let busy = true;
  const hog = (): void => {
    if (busy) crypto.pbkdf2('x', 'salt', 40_000, 32, 'sha256', hog); // ~30 ms of a pool thread each
  };
  for (let i = 0; i < 8; i++) hog(); // twice the pool's 4 threads: a queue, always
  try {
    const made: Array<{ size: number }> = [];
    for (let i = 0; i < 10; i++) made.push(await archive(() => tarOf(dir, ['world']), path.join(dir, 'out', `${i}.tar.gz`)));
    for (const [i, { size }] of made.entries()) {
      const file = path.join(dir, 'out', `${i}.tar.gz`);
      expect(size).toBeGreaterThan(0);
      expect(fs.statSync(file).size).toBe(size);
      expect(execFileSync('tar', ['-xzOf', file, 'world/level.dat']).toString()).toBe('a tiny world');
    }
  } finally {
    busy = false;
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
