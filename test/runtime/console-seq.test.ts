// Console sequence numbers survive the service's restarts (issue 42 §4; console-buffer.ts SEQ_BLOCK): each life of a
// server's console starts above every number an earlier life used, whether it closed or was cut short.
import fs from 'node:fs';
import path from 'node:path';
import { SEQ_BLOCK, serverConsole } from '../../src/runtime/server/console-buffer';
import { tempDirsOfFile } from '../helpers/app';

const dirs = tempDirsOfFile('console-seq');
const now = () => Date.parse('2026-01-01T00:00:00.000Z');

function serverDir(): string {
  const dir = path.join(dirs(), 'servers', 'srv_a');
  fs.mkdirSync(path.join(dir, 'logs'), { recursive: true });
  return dir;
}

test.each([
  ['a few lines, closed', 3, true],
  ['a few lines, cut short (no close)', 3, false],
  ['past one block, closed', SEQ_BLOCK + 5, true],
  ['past two blocks, cut short', 2 * SEQ_BLOCK + 1, false],
])('%s: the next life numbers its lines above the last', async (_name, lines, closed) => {
  const dir = serverDir();
  const first = serverConsole(dir, path.dirname(path.dirname(dir)), now);
  let last = 0;
  for (let i = 0; i < lines; i++) last = first.push('stdout', `line ${i}`).seq;
  expect(last).toBe(lines); // within a life, one by one from 1
  if (closed) await first.close();
  const second = serverConsole(dir, path.dirname(path.dirname(dir)), now);
  const next = second.push('stdout', 'after the restart').seq;
  expect(next).toBeGreaterThan(last);
  expect(next - last).toBeLessThanOrEqual(SEQ_BLOCK); // a restart skips at most one block
  expect(second.push('stdout', 'and on').seq).toBe(next + 1);
  await second.close();
  if (!closed) await first.close();
});

test('a seq file that cannot be read starts the numbers at 1, as a new server', async () => {
  const dir = serverDir();
  fs.writeFileSync(path.join(dir, 'logs', 'console.seq'), 'not a number');
  const buf = serverConsole(dir, path.dirname(path.dirname(dir)), now);
  expect(buf.push('stdout', 'first').seq).toBe(1);
  expect(fs.readFileSync(path.join(dir, 'logs', 'console.seq'), 'utf8')).toBe(`${SEQ_BLOCK}\n`);
  await buf.close();
});
