// A console stream resumed across a service restart (issue 42 §4; openapi/v1.yaml streamServerConsole): a client
// that reconnects with the Last-Event-ID of the service's last life gets every line the new life buffered, because
// sequence numbers continue across lives (console-buffer.ts SEQ_BLOCK). Two services, one after the other, on one
// DATA_DIR and database, with the runtime tests' fake game. Game ports 28550-28559.
import fs from 'node:fs';
import path from 'node:path';
import { createTestApp, tempDirsOfFile, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';

jest.setTimeout(120_000);

const dataDirs = tempDirsOfFile('console-resume');
const software = path.join(__dirname, '..', 'runtime', 'fixtures', 'software');

function service(dataDir: string): Promise<TestApp> {
  return createTestApp({
    boot: true,
    software: fs.existsSync(path.join(dataDir, 'software')) ? undefined : software,
    env: { DATA_DIR: dataDir, GAME_PORT_RANGE: '28550-28559' },
    runtime: { backoffMs: 200, stopTimeoutMs: 3_000, reconcileMs: 500 },
  });
}

interface Line { seq: number; text: string }

/** The SSE events of a stream, read until `enough` holds for them (or the timeout). */
async function readStream(url: string, headers: Record<string, string>, enough: (ids: Array<{ id: string; data: Line }>) => boolean) {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: Array<{ id: string; data: Line }> = [];
  let buffer = '';
  try {
    while (!enough(events)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const fields = Object.fromEntries(buffer.slice(0, end).split('\n').filter((l) => !l.startsWith(':')).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]));
        buffer = buffer.slice(end + 2);
        if (fields.data) events.push({ id: fields.id, data: JSON.parse(fields.data) });
      }
    }
  } finally {
    controller.abort();
  }
  return events;
}

test('a client resuming with a Last-Event-ID from before a restart gets every line buffered since', async () => {
  const dataDir = dataDirs();
  let t = await service(dataDir);
  const token = t.token('resume@example.com');
  const auth = { Authorization: `Bearer ${token}` };
  let id: string;
  let lastBefore: number;
  try {
    const created = await t.http.post('/v1/servers').set(auth).send({ name: 'Resume', plan: 'micro', version: 'fake-game-1.0' });
    expect(created.status).toBe(201);
    id = created.body.id;
    await until('installed', async () => (await t.http.get(`/v1/servers/${id}`).set(auth)).body.state === 'stopped');
    const before: Line[] = (await t.http.get(`/v1/servers/${id}/console`).set(auth)).body.data;
    expect(before.length).toBeGreaterThan(0);
    lastBefore = before.at(-1)!.seq;
  } finally {
    await t.finish();
  }

  // The service restarts: a new life, its buffer empty, on the same folder and database.
  t = await service(dataDir);
  try {
    expect((await t.http.post(`/v1/servers/${id}/actions`).set(auth).send({ type: 'start' })).status).toBe(202);
    await until('running', async () => (await t.http.get(`/v1/servers/${id}`).set(auth)).body.state === 'running');
    const buffered: Line[] = (await t.http.get(`/v1/servers/${id}/console`).set(auth)).body.data;
    expect(buffered.length).toBeGreaterThan(0);
    // Every line of the new life is numbered above every line of the last one.
    for (const line of buffered) expect(line.seq).toBeGreaterThan(lastBefore);

    const { base, close } = await t.listen();
    try {
      const newest = buffered.at(-1)!.seq;
      const events = await readStream(`${base}/v1/servers/${id}/console/stream`, { ...auth, 'Last-Event-ID': String(lastBefore) }, (got) => got.some((e) => e.data.seq >= newest));
      // The whole new buffer, in order, each event's id its line's seq.
      expect(events.slice(0, buffered.length).map((e) => [e.id, e.data.seq, e.data.text])).toEqual(buffered.map((l) => [String(l.seq), l.seq, l.text]));
    } finally {
      await close();
    }
  } finally {
    await t.finish();
  }
});
