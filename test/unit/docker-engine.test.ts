// The Docker environment's pure parts (src/runtime/docker/): DOCKER_HOST and the other RUNTIME settings, the
// engine's multiplexed stdio, its stats, and the container's definition. test/docker/ runs them on a real engine.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { ConfigError, loadConfig } from '../../src/config';
import { containerConfig, GAME_TMP, type NetworkMode } from '../../src/runtime/host/docker/docker-environment';
import { usageFromStats } from '../../src/runtime/host/docker/container-process';
import { IMAGE_NODE } from '../../src/runtime/host/docker/image';
import { createEngine, demux, parseDockerHost } from '../../src/runtime/host/docker/engine';
import type { LaunchSpec } from '../../src/runtime/host/environment';

test.each([
  [{}, 'local', 'unix:///var/run/docker.sock', { uid: 1000, gid: 1000 }],
  [{ RUNTIME: 'docker', DOCKER_HOST: 'tcp://10.0.0.2:2375', DOCKER_GAME_USER: '2000:3000' }, 'docker', 'tcp://10.0.0.2:2375', { uid: 2000, gid: 3000 }],
  [{ RUNTIME: 'local', DOCKER_HOST: 'unix:///run/d.sock' }, 'local', 'unix:///run/d.sock', { uid: 1000, gid: 1000 }],
])('%p selects %p on %p as %p', (env, runtime, dockerHost, user) => {
  const config = loadConfig(env);
  expect([config.runtime, config.dockerHost, config.dockerGameUser]).toEqual([runtime, dockerHost, user]);
});

test.each([
  { RUNTIME: 'kubernetes' },
  { DOCKER_HOST: '/var/run/docker.sock' },
  { DOCKER_HOST: 'ssh://node2' },
  { DOCKER_GAME_USER: '0:0' }, // never root
  { DOCKER_GAME_USER: '1000' },
])('%p is refused', (env) => {
  expect(() => loadConfig(env)).toThrow(ConfigError);
});

test.each([
  ['unix:///var/run/docker.sock', { socketPath: '/var/run/docker.sock' }],
  ['tcp://node2.example:2375', { host: 'node2.example', port: 2375 }],
  ['tcp://[::1]:2375', { host: '::1', port: 2375 }],
])('DOCKER_HOST %p is %p', (url, endpoint) => {
  expect(parseDockerHost(url)).toEqual(endpoint);
});

test('demux splits stdout and stderr frames, across chunk boundaries', () => {
  const source = new PassThrough();
  const got: string[] = [];
  demux(source, (stream, chunk) => got.push(`${stream}:${chunk.toString()}`));
  const frame = (kind: number, text: string) => {
    const head = Buffer.alloc(8);
    head[0] = kind;
    head.writeUInt32BE(Buffer.byteLength(text), 4);
    return Buffer.concat([head, Buffer.from(text)]);
  };
  const all = Buffer.concat([frame(1, 'hello\n'), frame(2, 'oops\n'), frame(1, 'bye')]);
  source.write(all.subarray(0, 5));
  source.write(all.subarray(5, 17));
  source.write(all.subarray(17));
  expect(got).toEqual(['stdout:hello\n', 'stderr:oops\n', 'stdout:bye']);
});

test('usage from engine stats: CPU in ms, memory without the inactive page cache', () => {
  const stats = { cpu_stats: { cpu_usage: { total_usage: 2_500_000_000 } }, memory_stats: { usage: 300, stats: { total_inactive_file: 100 } } };
  expect(usageFromStats(stats)).toEqual({ cpuMs: 2500, rssBytes: 200 });
  expect(usageFromStats({})).toBeNull(); // the first stats of a starting container can be empty
});

test('the container definition holds every limit and confinement, and publishes only the game port', () => {
  const spec: LaunchSpec = {
    serverId: 'srv_1', argv: ['/usr/bin/node', 'game.js'], cwd: '/srv/game', address: { host: '203.0.113.7', port: 25570 },
    ipc: true, limits: { memoryMb: 256, cpuPercent: 150 },
  };
  const options = { engine: createEngine('unix:///nowhere.sock'), instance: 'i1', gameEnv: { PATH: '/usr/bin' }, user: { uid: 1000, gid: 1000 } };
  const config = containerConfig(spec, options, 'gsh-game:test') as Record<string, unknown> & { HostConfig: Record<string, unknown> };
  expect(config).toMatchObject({ User: '1000:1000', Labels: { 'io.gsh.server': 'srv_1', 'io.gsh.instance': 'i1' }, ExposedPorts: { '25570/tcp': {} } });
  expect(config.Env).toEqual(['PATH=/usr/bin', 'HOME=/srv/game', `TMPDIR=${GAME_TMP}`, 'GSH_SERVER_ID=srv_1']);
  expect(config.HostConfig).toMatchObject({
    Memory: 256 * 1024 * 1024, MemorySwap: 256 * 1024 * 1024, CpuPeriod: 100_000, CpuQuota: 150_000, PidsLimit: 512,
    ReadonlyRootfs: true, CapDrop: ['ALL'], SecurityOpt: ['no-new-privileges'],
    // Scratch space off /tmp, where a checkout (a CI clone) may live: the image holds its files at their host paths.
    Tmpfs: { '/run/gsh-tmp': 'rw,nosuid,nodev,noexec,size=64m' },
    PortBindings: { '25570/tcp': [{ HostIp: '203.0.113.7', HostPort: '25570' }] },
  });
  // Its volume on the node, and no path of the control plane's host.
  expect(config.HostConfig.Mounts).toEqual([{ Type: 'volume', Source: 'gsh-i1-srv_1', Target: '/srv/game', ReadOnly: false }]);
  const other = containerConfig({ ...spec, argv: ['/opt/game/bin/server', '--port', '25570'] }, options, 'gsh-game:test') as { Cmd: string[] };
  expect(other.Cmd).toEqual(['/opt/game/bin/server', '--port', '25570']); // a native game (image_files): run as given
  // This service's Node runs as the image's copy, wherever it is on the host.
  const own = containerConfig({ ...spec, argv: [process.execPath, 'game.js'] }, options, 'gsh-game:test') as { Cmd: string[] };
  expect(own.Cmd).toEqual([IMAGE_NODE, 'game.js']);
});

test('on an engine without a bridge network the container shares the node\'s network and publishes nothing', () => {
  const spec: LaunchSpec = {
    serverId: 'srv_1', argv: ['/usr/bin/node', 'game.js'], cwd: '/srv/game', address: { host: '203.0.113.7', port: 25570 },
    ipc: true, limits: { memoryMb: 256, cpuPercent: 150 },
  };
  const options = { engine: createEngine('unix:///nowhere.sock'), instance: 'i1', gameEnv: {}, user: { uid: 1000, gid: 1000 } };
  const cases: [NetworkMode, object][] = [
    ['bridge', { ExposedPorts: { '25570/tcp': {} }, HostConfig: { NetworkMode: 'bridge', PortBindings: { '25570/tcp': [{ HostIp: '203.0.113.7', HostPort: '25570' }] } } }],
    ['host', { ExposedPorts: {}, HostConfig: { NetworkMode: 'host', PortBindings: {} } }],
  ];
  for (const [mode, want] of cases) expect(containerConfig(spec, options, 'gsh-game:test', mode)).toMatchObject(want);
});

test('acceptsNew asks on a connection of its own: a server that closed its listener still answers on a kept one, not a new one', async () => {
  // What dockerd does as it stops (its API listener closed first, the connections it has still served): the last
  // pass of a move must see it (docker/volume-transfer.ts lastPassHelpers).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-ping-'));
  const socketPath = path.join(dir, 'docker.sock');
  const server = http.createServer((req, res) => res.end(req.url === '/v1.41/_ping' ? 'OK' : '{}'));
  await new Promise<void>((r) => server.listen(socketPath, r));
  try {
    const e = createEngine(`unix://${socketPath}`);
    await e.acceptsNew();
    await e.json('GET', '/info'); // a connection kept alive (Node's global agent keeps them since Node 19)
    net.Server.prototype.close.call(server); // the listener only, as Go's does (http's also closes idle connections)
    expect(await e.json('GET', '/info')).toEqual({});
    await expect(e.acceptsNew()).rejects.toThrow(/ENOENT|ECONNREFUSED/);
  } finally {
    server.closeAllConnections();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
