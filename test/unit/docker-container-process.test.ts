// container-process.ts against a fake engine on a unix socket: what the real engine rarely does on demand.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { wrapContainer } from '../../src/runtime/docker/container-process';
import { createEngine } from '../../src/runtime/docker/engine';

const stats = (cpuMs: number) => JSON.stringify({ cpu_stats: { cpu_usage: { total_usage: cpuMs * 1e6 } }, memory_stats: { usage: 1000, stats: {} } }) + '\n';

test('a stats stream the engine ends while the container runs is opened again', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-fake-engine-'));
  const socket = path.join(dir, 'docker.sock');
  let statsCalls = 0;
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    if (req.url?.includes('/stats')) {
      statsCalls += 1;
      res.write(stats(statsCalls === 1 ? 100 : 200));
      if (statsCalls === 1) res.end(); // the engine restarting, say
      else held.push(res);
    } else {
      held.push(res); // wait: the container keeps running
    }
  });
  await new Promise<void>((r) => server.listen(socket, r));
  const proc = wrapContainer({ engine: createEngine(`unix://${socket}`), id: 'c1', pid: 1, stdio: new PassThrough(), argv: ['game'] });
  try {
    const deadline = Date.now() + 10_000;
    while (proc.usage?.()?.cpuMs !== 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(proc.usage?.()).toEqual({ cpuMs: 200, rssBytes: 1000 });
    expect(statsCalls).toBe(2);
  } finally {
    proc.detach?.();
    for (const res of held) res.destroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
