// src/log.ts: redact() hides our tokens and anything after a Bearer scheme, whatever the case, and leaves other
// lines as they are; batchedStdout(): lines written within its 10 ms leave in one write, in order, later ones in
// the next, 64 KiB at once, and what is pending when the process exits is written by the 'exit' listener.
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

const later = () => new Promise((r) => setTimeout(r, 30));

test('one write per batch, lines in order, a full batch at once, and the rest at exit', async () => {
  const chunks: string[] = [];
  const before = process.listeners('exit');
  const write = batchedStdout({ write: (c: string) => chunks.push(c) });
  const atExit = process.listeners('exit').find((l) => !before.includes(l))!;
  try {
    write('a');
    write('b');
    write('c');
    await new Promise((r) => setImmediate(r));
    expect(chunks).toEqual([]); // not yet: it waits for more
    await later();
    expect(chunks).toEqual(['a\nb\nc\n']);
    write('d');
    await later();
    expect(chunks).toEqual(['a\nb\nc\n', 'd\n']);
    const big = 'x'.repeat(64 * 1024);
    write(big);
    expect(chunks).toEqual(['a\nb\nc\n', 'd\n', `${big}\n`]); // past 64 KiB: at once
    write('e');
    (atExit as () => void)(); // as at process exit, before its timer
    expect(chunks).toEqual(['a\nb\nc\n', 'd\n', `${big}\n`, 'e\n']);
    await later();
    expect(chunks).toHaveLength(4); // written once
  } finally {
    process.removeListener('exit', atExit);
  }
});
