import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CONSOLE_LOG_ROTATION, ConsoleBuffer, MAX_LINE_CHARS, serverConsole, type ConsoleLine } from '../../src/runtime/server/console-buffer';
import { loadSpec } from '../../src/spec';
import { userActor } from '../../src/actors';

const at = () => '2026-01-01T00:00:00.000Z';

test('drops the oldest line when full and keeps seq increasing', () => {
  const buf = new ConsoleBuffer(3, null, at);
  for (const t of ['a', 'b', 'c', 'd']) buf.push('stdout', t);
  expect(buf.recent(10).map((l) => [l.seq, l.text])).toEqual([[2, 'b'], [3, 'c'], [4, 'd']]);
  expect(buf.recent(1).map((l) => l.text)).toEqual(['d']);
  expect(buf.recent(0)).toEqual([]);
});

test('a line longer than the spec allows is cut to ConsoleLine.text\'s maxLength', () => {
  const spec = loadSpec().document as { components: { schemas: { ConsoleLine: { properties: { text: { maxLength: number } } } } } };
  expect(MAX_LINE_CHARS).toBe(spec.components.schemas.ConsoleLine.properties.text.maxLength);
  const buf = new ConsoleBuffer(3, null, at);
  const line = buf.push('stdout', 'x'.repeat(MAX_LINE_CHARS + 500));
  expect(line.text).toHaveLength(MAX_LINE_CHARS);
  expect(buf.lastTexts(1)[0]).toHaveLength(MAX_LINE_CHARS);
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

test.each([
  { capacity: 3, pushed: 0, holds: [[0, true], [4, true]] },
  { capacity: 3, pushed: 5, holds: [[0, false], [1, false], [2, true], [4, true], [5, true], [9, true]] },
  { capacity: 0, pushed: 1, holds: [[0, false], [1, true]] },
])('holdsAllAfter: whether every line after a seq is still held ($capacity lines, $pushed written)', ({ capacity, pushed, holds }) => {
  const buf = new ConsoleBuffer(capacity, null, at);
  for (let i = 0; i < pushed; i++) buf.push('stdout', `line ${i}`);
  for (const [seq, held] of holds) expect([seq, buf.holdsAllAfter(seq as number)]).toEqual([seq, held]);
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
  expect(buf.push('input', 'say third', userActor('usr_abc', 'tok_abc')).token_id).toBe('tok_abc');
  await buf.close();
  expect(fs.readFileSync(file, 'utf8')).toBe(`${at()} [stdout] first\n${at()} [system] second\n${at()} [input tok_abc] say third\n`);
  fs.rmSync(dir, { recursive: true });
});

describe('ring buffer', () => {
  test.each([
    { capacity: 1, pushes: 50 },
    { capacity: 3, pushes: 3 },
    { capacity: 7, pushes: 7 * 13 + 5 }, // wraps around many times, head not at slot 0
    { capacity: 64, pushes: 10_000 },
  ])('capacity $capacity after $pushes pushes keeps exactly the newest lines, in order', ({ capacity, pushes }) => {
    const buf = new ConsoleBuffer(capacity, null, at);
    for (let i = 1; i <= pushes; i++) expect(buf.push('stdout', `line ${i}`).seq).toBe(i);
    const held = buf.recent(capacity + 10);
    const first = pushes - capacity + 1;
    expect(held.map((l) => l.seq)).toEqual(Array.from({ length: capacity }, (_, i) => first + i));
    expect(held.map((l) => l.text)).toEqual(Array.from({ length: capacity }, (_, i) => `line ${first + i}`));
    expect(buf.lastTexts(2)).toEqual(held.slice(-2).map((l) => l.text));
  });

  test('holds fewer lines than capacity until full', () => {
    const buf = new ConsoleBuffer(5, null, at);
    expect(buf.recent(5)).toEqual([]);
    buf.push('stdout', 'a');
    buf.push('stderr', 'b');
    expect(buf.recent(5).map((l) => l.text)).toEqual(['a', 'b']);
  });

  // 12 pushes into 5 slots: held seqs 8..12, stored across the wrap (head at slot 2).
  test.each([
    { limit: 0, seqs: [] },
    { limit: -3, seqs: [] },
    { limit: 1, seqs: [12] },
    { limit: 3, seqs: [10, 11, 12] },
    { limit: 5, seqs: [8, 9, 10, 11, 12] },
    { limit: 6, seqs: [8, 9, 10, 11, 12] },
    { limit: 1000, seqs: [8, 9, 10, 11, 12] },
  ])('recent($limit) gives the newest lines, oldest first', ({ limit, seqs }) => {
    const buf = new ConsoleBuffer(5, null, at);
    for (let i = 0; i < 12; i++) buf.push('stdout', String(i + 1));
    expect(buf.recent(limit).map((l) => l.seq)).toEqual(seqs);
    expect(buf.lastTexts(limit)).toEqual(seqs.map(String));
  });

  // 10 pushes into 4 slots: held seqs 7..10.
  test.each([
    { afterSeq: 0, replayed: [7, 8, 9, 10] }, // older than the buffer: only what is still held
    { afterSeq: 5, replayed: [7, 8, 9, 10] },
    { afterSeq: 7, replayed: [8, 9, 10] },
    { afterSeq: 9, replayed: [10] },
    { afterSeq: 10, replayed: [] },
    { afterSeq: 99, replayed: [] }, // from a previous service life: nothing to replay, live lines still come
  ])('subscribe after seq $afterSeq replays $replayed, then streams live', ({ afterSeq, replayed }) => {
    const buf = new ConsoleBuffer(4, null, at);
    for (let i = 0; i < 10; i++) buf.push('stdout', `l${i + 1}`);
    const got: ConsoleLine[] = [];
    buf.subscribe((l) => got.push(l), afterSeq);
    buf.push('system', 'live');
    expect(got.map((l) => l.seq)).toEqual([...replayed, 11]);
    expect(got.map((l) => l.text)).toEqual([...replayed.map((s) => `l${s}`), 'live']);
  });
});

describe('log file', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-console-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('exists as soon as the first push returns', async () => {
    const file = path.join(dir, 'console.log');
    const buf = new ConsoleBuffer(4, file, at);
    expect(fs.existsSync(file)).toBe(false);
    buf.push('stdout', 'hello');
    expect(fs.existsSync(file)).toBe(true); // no await in between: the open is synchronous
    await buf.close();
    expect(fs.readFileSync(file, 'utf8')).toBe(`${at()} [stdout] hello\n`);
  });

  test('appends to what an earlier life wrote', async () => {
    const file = path.join(dir, 'console.log');
    fs.writeFileSync(file, 'before\n');
    const buf = new ConsoleBuffer(4, file, at);
    buf.push('stdout', 'after');
    await buf.close();
    expect(fs.readFileSync(file, 'utf8')).toBe(`before\n${at()} [stdout] after\n`);
  });

  test('a push when the folder does not exist does not throw, and the buffer keeps working', async () => {
    const file = path.join(dir, 'gone', 'logs', 'console.log');
    const buf = new ConsoleBuffer(4, file, at);
    const got: string[] = [];
    buf.subscribe((l) => got.push(l.text));
    expect(() => buf.push('stdout', 'one')).not.toThrow();
    expect(() => buf.push('stderr', 'two')).not.toThrow();
    expect(buf.recent(10).map((l) => l.text)).toEqual(['one', 'two']);
    expect(got).toEqual(['one', 'two']);
    expect(fs.existsSync(path.join(dir, 'gone'))).toBe(false);
    await expect(buf.close()).resolves.toBeUndefined();
  });

  test('the file is used once the folder appears', async () => {
    const logs = path.join(dir, 'logs');
    const file = path.join(logs, 'console.log');
    const buf = new ConsoleBuffer(4, file, at);
    buf.push('stdout', 'lost');
    fs.mkdirSync(logs);
    buf.push('stdout', 'kept');
    await buf.close();
    expect(fs.readFileSync(file, 'utf8')).toBe(`${at()} [stdout] kept\n`);
  });

  test('close resolves after the file is flushed and closed, and can be called again', async () => {
    const file = path.join(dir, 'console.log');
    const buf = new ConsoleBuffer(2, file, at);
    const texts = Array.from({ length: 2000 }, (_, i) => `line ${i} ${'x'.repeat(100)}`);
    for (const t of texts) buf.push('stdout', t);
    await buf.close();
    expect(fs.readFileSync(file, 'utf8')).toBe(texts.map((t) => `${at()} [stdout] ${t}\n`).join(''));
    await expect(buf.close()).resolves.toBeUndefined();
  });

  /** The log files in `logs`, by name, with their sizes and contents. */
  function logFiles(logs: string): Record<string, string> {
    // console.seq (the reserved sequence numbers, SEQ_BLOCK) is not a log file.
    return Object.fromEntries(fs.readdirSync(logs).filter((f) => f !== 'console.seq').sort().map((f) => [f, fs.readFileSync(path.join(logs, f), 'utf8')]));
  }

  test('a server log rotates at 1 MiB and keeps two old files, so console spam stays within 3 MiB', async () => {
    const serverDir = path.join(dir, 'servers', 'srv_a');
    fs.mkdirSync(path.join(serverDir, 'logs'), { recursive: true });
    const buf = serverConsole(serverDir, dir, () => Date.parse(at()));
    const texts = Array.from({ length: 1000 }, (_, i) => `spam ${i} ${'y'.repeat(MAX_LINE_CHARS - 20)}`); // ~10 MB
    for (const t of texts) buf.push('stdout', t);
    await buf.close();
    const files = logFiles(path.join(serverDir, 'logs'));
    expect(Object.keys(files)).toEqual(['console.log', 'console.log.1', 'console.log.2']);
    const { maxBytes } = CONSOLE_LOG_ROTATION;
    expect(maxBytes).toBe(1024 * 1024);
    for (const text of Object.values(files)) expect(Buffer.byteLength(text)).toBeLessThanOrEqual(maxBytes);
    // The newest lines are in console.log, whole and in order, and the old files hold the lines just before them.
    const lines = [files['console.log.2'], files['console.log.1'], files['console.log']].join('').split('\n').slice(0, -1);
    expect(lines).toEqual(texts.slice(-lines.length).map((t) => `${at()} [stdout] ${t}`));
    expect(files['console.log'].endsWith(`${texts.at(-1)}\n`)).toBe(true);
  });

  test.each([
    { name: 'lines are never split across files', before: '', pushes: 9, wantFiles: ['console.log', 'console.log.1'] },
    { name: 'an earlier life\'s file counts toward the cap', before: 'z'.repeat(90), pushes: 1, wantFiles: ['console.log', 'console.log.1'] },
  ])('rotation: $name', async ({ before, pushes, wantFiles }) => {
    const file = path.join(dir, 'console.log');
    if (before) fs.writeFileSync(file, before);
    const buf = new ConsoleBuffer(4, file, at, [], { maxBytes: 100, keep: 1 });
    for (let i = 0; i < pushes; i++) buf.push('stdout', `line ${i}`); // 40 bytes each with the prefix
    await buf.close();
    const files = logFiles(dir);
    expect(Object.keys(files)).toEqual(wantFiles);
    for (const text of Object.values(files)) {
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(100);
      if (text !== before) expect(text).toMatch(/^(\S+ \[stdout\] line \d+\n)+$/);
    }
    expect(files['console.log']).toContain(`line ${pushes - 1}\n`);
  });
});

// The buffer is where every line passes (game output from any Environment, system lines, commands), so it is
// where terminal controls are removed: the stored line reaches API clients and `tail -f logs/console.log`.
test('lines are stored, streamed and written without terminal controls', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-console-'));
  const file = path.join(dir, 'console.log');
  const buf = new ConsoleBuffer(4, file, at);
  const streamed: string[] = [];
  buf.subscribe((l) => streamed.push(l.text));
  const hostile = 'a\x1b]0;pwned\x07b\x1bP1$qm\x1b\\c\x1bcd\x07e\x9b31mf\x1b[0m';
  expect(buf.push('stdout', hostile).text).toBe('abcdef');
  await buf.close();
  expect(buf.recent(1).map((l) => l.text)).toEqual(['abcdef']);
  expect(streamed).toEqual(['abcdef']);
  expect(fs.readFileSync(file, 'utf8')).toBe(`${at()} [stdout] abcdef\n`);
  fs.rmSync(dir, { recursive: true });
});
