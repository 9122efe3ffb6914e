// The counters behind quotas and placement survive kill -9 (migration 026; docs/architecture.md "At scale"): they
// are written by triggers in the transaction of every change to `servers`, so a process killed in the middle of
// creates, actions, state changes, plan changes and removals leaves counters that match the rows exactly, and the
// next process goes on from there. test/unit/server-counts.test.ts checks the same on random sequences.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { openDb } from '../../src/store/db';
import { tempDir } from '../helpers/app';
import { countsDrift } from '../helpers/server-counts';

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** Starts the churn on the file; resolves once it has done at least `ops` more operations, then kills it with SIGKILL. */
async function churnThenKill(dbFile: string, ops: number): Promise<number> {
  const child = spawn(process.execPath, [path.join(__dirname, 'fixtures', 'server-churn.cjs'), dbFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let done = 0;
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      done = Number(d.toString().trim().split('\n').at(-1));
      if (done >= ops) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the churn exited with ${code}`)));
  });
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  expect(child.signalCode).toBe('SIGKILL');
  return done;
}

test('kill -9 in the middle of server writes leaves every counter equal to the rows, three times over', async () => {
  const dir = tempDir('counts-kill');
  const dbFile = path.join(dir, 'gsh.sqlite');
  try {
    for (let round = 0; round < 3; round++) {
      await churnThenKill(dbFile, 300 + round * 137);
      const db = openDb(dbFile);
      try {
        expect(db.prepare('SELECT COUNT(*) FROM servers').pluck().get()).toBeGreaterThan(0);
        expect(countsDrift(db)).toEqual([]);
      } finally {
        db.close();
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
