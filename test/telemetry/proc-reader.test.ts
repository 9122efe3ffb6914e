import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLinuxProcReader, machineFigures, parseStat } from '../../src/telemetry/proc-reader';

// The child starts a grandchild that holds 64 MiB and burns CPU, then idles itself: so the tree's numbers
// can only be right if descendants are counted.
const GRANDCHILD = `const b = Buffer.alloc(64 * 1024 * 1024, 1); let x = 0;
setInterval(() => { for (let i = 0; i < 5e6; i++) x += i % 7; }, 1); process.stdout.write('ready\\n'); b;`;
const CHILD = `const { spawn } = require('child_process');
const g = spawn(process.execPath, ['-e', ${JSON.stringify(GRANDCHILD)}], { stdio: ['ignore', 'pipe', 'inherit'] });
g.stdout.once('data', () => process.stdout.write(String(g.pid) + '\\n'));
setInterval(() => {}, 1000);`;

describe('parseStat', () => {
  test('counts fields from the last parenthesis, so names with spaces and parens parse', () => {
    const line = '42 (my (odd) name) S 7 42 42 0 -1 4194560 1 0 0 0 150 50 10 5 20 0 3 0 100 999 2500 18446744073709551615';
    expect(parseStat(line)).toEqual({ ppid: 7, cpuTicks: 150 + 50 + 10 + 5, rssPages: 2500 });
  });
  test('rejects text that is not a stat line', () => {
    expect(parseStat('garbage')).toBeNull();
  });
});

describe('machineFigures', () => {
  // getconf(1) asks sysconf(3), the figures' owner; the auxiliary vector must give the same.
  test.each([
    ['pageSize', 'PAGESIZE'],
    ['clockTicks', 'CLK_TCK'],
  ] as const)('%s is what `getconf %s` says', (figure, name) => {
    expect(machineFigures()[figure]).toBe(Number(execFileSync('getconf', [name], { encoding: 'utf8' }).trim()));
  });
  // An auxiliary vector as the kernel lays it out on this 64-bit little-endian machine: (type, value) pairs.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-auxv-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const auxv = (pairs: Array<[number, number]>) => {
    const file = path.join(dir, `auxv-${pairs.flat().join('-')}`);
    const buf = Buffer.alloc(pairs.length * 16);
    pairs.forEach(([type, value], i) => {
      buf.writeBigUInt64LE(BigInt(type), i * 16);
      buf.writeBigUInt64LE(BigInt(value), i * 16 + 8);
    });
    fs.writeFileSync(file, buf);
    return file;
  };
  test.each([
    ['both figures, among others', [[33, 7], [6, 65536], [17, 250], [0, 0]], { pageSize: 65536, clockTicks: 250 }],
    ['nothing after AT_NULL', [[6, 16384], [0, 0], [17, 1000]], { pageSize: 16384, clockTicks: 100 }],
    ['a zero value is no figure', [[6, 0], [17, 0], [0, 0]], { pageSize: 4096, clockTicks: 100 }],
  ] as Array<[string, Array<[number, number]>, object]>)('from an auxiliary vector: %s', (_, pairs, expected) => {
    expect(machineFigures(auxv(pairs))).toEqual(expected);
  });
  test('without an auxiliary vector to read, Linux\'s defaults', () => {
    expect(machineFigures('/nonexistent/auxv')).toEqual({ pageSize: 4096, clockTicks: 100 });
  });
});

describe('Linux ProcReader on a real process tree', () => {
  let child: ChildProcess;
  let grandchildPid = 0;

  beforeAll(async () => {
    child = spawn(process.execPath, ['-e', CHILD], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [data] = (await once(child.stdout!, 'data')) as [Buffer];
    grandchildPid = Number(data.toString().trim());
  });
  afterAll(async () => {
    if (grandchildPid) process.kill(grandchildPid, 'SIGKILL');
    child.kill('SIGKILL');
    await once(child, 'exit').catch(() => undefined);
  });

  test('RSS and CPU of the tree include the descendant', async () => {
    const reader = createLinuxProcReader();
    const before = reader.readTrees([child.pid!, grandchildPid]);
    // Wait until the grandchild has visibly burnt CPU (no wall-clock assertion: we wait for the effect).
    let after = before;
    for (let i = 0; i < 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      after = reader.readTrees([child.pid!, grandchildPid]);
      if (after.get(grandchildPid)!.cpuMs > before.get(grandchildPid)!.cpuMs) break;
    }
    const tree = after.get(child.pid!)!;
    const leaf = after.get(grandchildPid)!;
    expect(leaf.rssBytes).toBeGreaterThan(64 * 1024 * 1024);
    expect(tree.rssBytes).toBeGreaterThan(leaf.rssBytes);
    expect(leaf.cpuMs).toBeGreaterThan(before.get(grandchildPid)!.cpuMs);
    expect(tree.cpuMs - before.get(child.pid!)!.cpuMs).toBeGreaterThanOrEqual(leaf.cpuMs - before.get(grandchildPid)!.cpuMs);
  });

  test('a pid that does not exist has no entry', () => {
    const reader = createLinuxProcReader();
    expect(reader.readTrees([2 ** 22 + 7]).size).toBe(0);
    expect(reader.readTrees([]).size).toBe(0);
  });
});
