// src/log.ts: redact() hides our tokens and anything after a Bearer scheme, whatever the case, and leaves other
// lines as they are; batchedStdout(): lines of one event-loop turn leave in one write, in order, the next turn's
// in the next, and what is pending when the process exits is written by the 'exit' listener.
import { batchedStdout, redact } from '../../src/log';

test.each([
  ['{"path":"/v1/servers/srv_1"}', '{"path":"/v1/servers/srv_1"}'],
  ['{"path":"/v1/gsh_AbC-_09"}', '{"path":"/v1/[redacted]"}'],
  ['{"error":"GSH_abc bad"}', '{"error":"[redacted] bad"}'],
  ['{"h":"Bearer abc.def"}', '{"h":"Bearer [redacted]"}'],
  ['{"h":"bearer   xyz, next"}', '{"h":"bearer   [redacted], next"}'],
  ['{"msg":"bearer"}', '{"msg":"bearer"}'],
])('redact(%s)', (line, expected) => {
  expect(redact(line)).toBe(expected);
});

test('one write per loop turn, lines in order, and the rest at exit', async () => {
  const chunks: string[] = [];
  const before = process.listeners('exit');
  const write = batchedStdout({ write: (c: string) => chunks.push(c) });
  const atExit = process.listeners('exit').find((l) => !before.includes(l))!;
  try {
    write('a');
    write('b');
    write('c');
    expect(chunks).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(chunks).toEqual(['a\nb\nc\n']);
    write('d');
    await new Promise((r) => setImmediate(r));
    expect(chunks).toEqual(['a\nb\nc\n', 'd\n']);
    write('e');
    (atExit as () => void)(); // as at process exit, before the loop turns again
    expect(chunks).toEqual(['a\nb\nc\n', 'd\n', 'e\n']);
    await new Promise((r) => setImmediate(r));
    expect(chunks).toHaveLength(3); // written once
  } finally {
    process.removeListener('exit', atExit);
  }
});
