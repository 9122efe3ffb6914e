import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConsoleBuffer, type ConsoleLine } from '../../src/runtime/console-buffer';

const at = () => '2026-01-01T00:00:00.000Z';

test('drops the oldest line when full and keeps seq increasing', () => {
  const buf = new ConsoleBuffer(3, null, at);
  for (const t of ['a', 'b', 'c', 'd']) buf.push('stdout', t);
  expect(buf.recent(10).map((l) => [l.seq, l.text])).toEqual([[2, 'b'], [3, 'c'], [4, 'd']]);
  expect(buf.recent(1).map((l) => l.text)).toEqual(['d']);
  expect(buf.recent(0)).toEqual([]);
});

test('subscribe resumes after a seq, then streams live lines; unsubscribe stops it', () => {
  const buf = new ConsoleBuffer(10, null, at);
  buf.push('stdout', 'one');
  buf.push('stderr', 'two');
  const got: ConsoleLine[] = [];
  const off = buf.subscribe((l) => got.push(l), 1);
  buf.push('input', 'three');
  off();
  buf.push('system', 'four');
  expect(got.map((l) => [l.seq, l.stream, l.text])).toEqual([[2, 'stderr', 'two'], [3, 'input', 'three']]);
});

test('a throwing subscriber does not stop the others', () => {
  const buf = new ConsoleBuffer(10, null, at);
  const got: string[] = [];
  buf.subscribe(() => {
    throw new Error('socket closed');
  });
  buf.subscribe((l) => got.push(l.text));
  buf.push('stdout', 'x');
  expect(got).toEqual(['x']);
});

test('appends every line to the log file', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-console-'));
  const file = path.join(dir, 'console.log');
  const buf = new ConsoleBuffer(1, file, at);
  buf.push('stdout', 'first');
  buf.push('system', 'second');
  await buf.close();
  expect(fs.readFileSync(file, 'utf8')).toBe(`${at()} [stdout] first\n${at()} [system] second\n`);
  fs.rmSync(dir, { recursive: true });
});
