// container-process.ts against a fake engine on a unix socket: what the real engine rarely does on demand.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Duplex, PassThrough } from 'node:stream';
import { REPORT_PREFIX, wrapContainer } from '../../src/runtime/host/docker/container-process';
import { createEngine } from '../../src/runtime/host/docker/engine';

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

/** One frame of the engine's multiplexed attach stream (API "Attach to a container": 8-byte header, then the payload). */
const frame = (stream: 1 | 2, text: string) => {
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(Buffer.byteLength(text), 4);
  return Buffer.concat([header, Buffer.from(text)]);
};

test('a container as a GameProcess: lines and reports, usage, a stop forced by the kill, the last lines at the exit', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-fake-engine-'));
  const socket = path.join(dir, 'docker.sock');
  const calls: string[] = [];
  let wait: http.ServerResponse | null = null;
  const server = http.createServer((req, res) => {
    calls.push(`${req.method} ${req.url}`);
    const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url?.includes('/stats')) res.write(JSON.stringify({ cpu_stats: { cpu_usage: { total_usage: 5e6 } }, memory_stats: { usage: 4000, stats: { inactive_file: 1000 } } }) + '\n');
    else if (req.url?.endsWith('/wait')) wait = res; // answered when the container is killed
    else if (req.url?.includes('/kill')) {
      res.writeHead(204).end();
      wait?.writeHead(200, { 'content-type': 'application/json' }).end('{"StatusCode":137}');
    } else if (req.url?.endsWith('/json')) json({ State: { ExitCode: 137, OOMKilled: false } });
    else res.writeHead(204).end(); // the remove after the exit
  });
  await new Promise<void>((r) => server.listen(socket, r));
  const output = new PassThrough(); // what the engine sends: frames
  const input = new PassThrough(); // what the process writes: commands
  const proc = wrapContainer({ engine: createEngine(`unix://${socket}`), id: 'c1', pid: 1, stdio: Duplex.from({ readable: output, writable: input }), argv: ['game'] });
  const lines: string[] = [];
  const messages: unknown[] = [];
  proc.onLine((stream, text) => lines.push(`${stream}:${text}`));
  proc.onMessage((msg) => messages.push(msg));
  const commands: string[] = [];
  input.on('data', (chunk: Buffer) => commands.push(chunk.toString()));
  try {
    output.write(frame(1, 'hello wo'));
    output.write(frame(1, `rld\r\n\u001b[31mred\u001b[0m\n${REPORT_PREFIX}{"a":1}\n${REPORT_PREFIX}{torn\n`));
    output.write(frame(2, 'err line\ntail'));
    const deadline = Date.now() + 10_000;
    while ((lines.length < 3 || !proc.usage?.()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(lines).toEqual(['stdout:hello world', 'stdout:red', 'stderr:err line']);
    expect(messages).toEqual([{ a: 1 }]); // a torn report is neither a message nor a line
    expect(proc.usage?.()).toEqual({ cpuMs: 5, rssBytes: 3000 }); // the inactive page cache is not the game's
    proc.sendCommand('list');
    // The game ignores the stop command: after the timeout the container is killed, and the stop says so.
    expect(await proc.stop('stop', 200)).toEqual({ code: null, signal: 'SIGKILL', forced: true });
    expect(commands.join('')).toBe('list\nstop\n');
    expect(lines.at(-1)).toBe('stderr:tail'); // the unterminated last line is handed on at the exit
    expect([proc.isAlive(), proc.usage?.(), proc.rssBytes()]).toEqual([false, null, null]);
    expect(() => proc.sendCommand('list')).toThrow('the process has exited');
    expect(calls.filter((c) => c.startsWith('DELETE')).map((c) => c.replace(/^.*\/containers\//, ''))).toEqual(['c1?force=1&v=1']);
    expect(await proc.stop('stop', 200)).toEqual({ code: null, signal: 'SIGKILL', forced: false });
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
