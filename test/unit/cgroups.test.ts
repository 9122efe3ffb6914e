// The cgroup v2 side of src/runtime/host/cgroups.ts against a folder shaped like a v2 mount (the kernel files as plain
// files): which files it writes, with what. The v1 side runs against the host's real cgroups in
// test/runtime/cgroups.test.ts. Also CGROUP_ROOT's parsing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import { openCgroupHost, type CgroupHost } from '../../src/runtime/host/cgroups';

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-cgroup2-'));
  fs.writeFileSync(path.join(root, 'cgroup.controllers'), 'cpuset cpu io memory hugetlb pids rdma misc\n');
  fs.writeFileSync(path.join(root, 'cgroup.subtree_control'), 'cpu memory\n');
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const read = (...parts: string[]) => fs.readFileSync(path.join(root, ...parts), 'utf8');

function open(): CgroupHost {
  const host = openCgroupHost(root, 'inst1');
  if ('unavailable' in host) throw new Error(host.unavailable);
  return host;
}

test('v2: enables memory, cpu and pids down to the instance folder, adding only what is missing', () => {
  const host = open();
  expect(host.version).toBe(2);
  expect(host.parents).toEqual([path.join(root, 'gsh', 'inst1')]);
  expect(read('cgroup.subtree_control')).toBe('+pids');
  expect(read('gsh', 'cgroup.subtree_control')).toBe('+memory +cpu +pids');
  expect(read('gsh', 'inst1', 'cgroup.subtree_control')).toBe('+memory +cpu +pids');
});

test('v2: a server group gets memory.max, cpu.max (quota per 100 ms period) and pids.max', async () => {
  const group = await open().create('srv_a1', { memoryBytes: 256 * 1024 * 1024, cpuPercent: 150, pids: 100 });
  expect(group.procsFiles).toEqual([path.join(root, 'gsh', 'inst1', 'srv_a1', 'cgroup.procs')]);
  expect(read('gsh', 'inst1', 'srv_a1', 'memory.max')).toBe(String(256 * 1024 * 1024));
  expect(read('gsh', 'inst1', 'srv_a1', 'cpu.max')).toBe('150000 100000');
  expect(read('gsh', 'inst1', 'srv_a1', 'pids.max')).toBe('100');
});

test('v2: reads the OOM kill count from memory.events and the CPU time from cpu.stat', async () => {
  const group = await open().create('srv_a2', { memoryBytes: 1 << 20, cpuPercent: 50, pids: 10 });
  const dir = path.join(root, 'gsh', 'inst1', 'srv_a2');
  expect(group.oomKilled()).toBe(false);
  fs.writeFileSync(path.join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 3\noom 1\noom_kill 0\n');
  expect(group.oomKilled()).toBe(false);
  fs.writeFileSync(path.join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 9\noom 1\noom_kill 1\n');
  expect(group.oomKilled()).toBe(true);
  fs.writeFileSync(path.join(dir, 'cpu.stat'), 'usage_usec 123456\nuser_usec 100000\nsystem_usec 23456\n');
  expect(group.cpuUsageUs()).toBe(123456);
});

test.each([
  ['a v2 mount without the memory controller', () => fs.writeFileSync(path.join(root, 'cgroup.controllers'), 'cpu pids\n'), /no memory and cpu controllers/],
  ['a folder that is no cgroup mount', () => fs.rmSync(path.join(root, 'cgroup.controllers')), /no cgroup v2 and no cgroup v1/],
])('unavailable: %s', (_name, arrange, reason) => {
  arrange();
  const host = openCgroupHost(root, 'inst1');
  expect(host).toEqual({ unavailable: expect.stringMatching(reason) });
});

test.each([
  [undefined, '/sys/fs/cgroup'],
  ['', '/sys/fs/cgroup'],
  ['off', null],
  ['/mnt/cgroups', '/mnt/cgroups'],
])('CGROUP_ROOT=%p is %p', (value, want) => {
  expect(loadConfig(value === undefined ? {} : { CGROUP_ROOT: value }).cgroupRoot).toBe(want);
});

test('CGROUP_ROOT must be an absolute path or off', () => {
  expect(() => loadConfig({ CGROUP_ROOT: 'sys/fs/cgroup' })).toThrow(ConfigError);
});

test('games inherit PATH and LANG from the service, nothing else', () => {
  const config = loadConfig({ PATH: '/opt/java/bin:/usr/bin', LANG: 'de_DE.UTF-8', DATA_DIR: '/srv/gsh', SECRET_TOKEN: 'x' });
  expect(config.gameEnv).toEqual({ PATH: '/opt/java/bin:/usr/bin', LANG: 'de_DE.UTF-8' });
});
