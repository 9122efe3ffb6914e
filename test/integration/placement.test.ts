// Placement over nodes (src/store/nodes-repo.ts, docs/architecture.md "Nodes and placement"), table-driven on a
// real SQLite file: the node with the most free plan memory that has a free port, never past a node's memory,
// never on a drained or unreachable node; past every node, 503 capacity_exhausted with Retry-After, and no node
// name in what a tenant reads. No engine is needed: placement is the database's business.
import fs from 'node:fs';
import path from 'node:path';
import { systemClock } from '../../src/clock';
import { plans } from '../../src/catalog/plans';
import { AppError } from '../../src/errors';
import { createStore, type Store } from '../../src/store';
import { openDb, type Db } from '../../src/store/db';
import type { NewNode } from '../../src/store/nodes-repo';
import { createTestApp, tempDir } from '../helpers/app';
import { serviceActor } from '../../src/actors';

const noQuotas = { servers: 1_000_000, running: 1_000_000, memory_mb: 1_000_000_000 };
let dir: string;
let db: Db;
let store: Store;
let userId: string;

beforeEach(() => {
  dir = tempDir('placement');
  db = openDb(path.join(dir, 'db.sqlite'));
  store = createStore(db, systemClock, { host: '127.0.0.1', portRange: [29500, 29599], nodes: true }, { defaults: noQuotas, plans }, () => serviceActor('operator'));
  userId = store.users.ensure('alice@example.com').id;
});

afterEach(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const node = (name: string, memoryMb: number, ports: [number, number]): NewNode => ({
  name, dockerHost: `unix:///run/${name}.sock`, publicHost: `${name}.example.net`, memoryMb, ports,
});

/** Creates a server of this plan (micro 512, small 1024, medium 2048 MiB); its node, or the error code. */
function create(plan: string): string {
  try {
    const server = store.servers.create(userId, { name: 'x', plan, version: 'flying-squid-1.20', software: 'flying-squid', game_version: '1.20' });
    return store.nodes.nodeOf(server.id) ?? 'none';
  } catch (e) {
    return (e as AppError).code;
  }
}

const cases: [string, { nodes: NewNode[]; setup?: (s: Store) => void; plans: string[]; want: string[] }][] = [
  ['the most free plan memory wins, and fills evenly', {
    nodes: [node('a', 2048, [29500, 29509]), node('b', 3072, [29510, 29519])],
    plans: ['small', 'small', 'small', 'small', 'small'],
    want: ['b', 'a', 'b', 'a', 'b'],
  }],
  ['a tie goes to the first name', { nodes: [node('b', 1024, [29510, 29519]), node('a', 1024, [29500, 29509])], plans: ['micro'], want: ['a'] }],
  ['never past a node\'s memory: two plans that do not fit on one node land on two, a third nowhere', {
    nodes: [node('a', 800, [29500, 29509]), node('b', 800, [29510, 29519])],
    plans: ['micro', 'micro', 'micro'],
    want: ['a', 'b', 'capacity_exhausted'],
  }],
  ['a plan larger than what any node has free is refused, a smaller one still fits', {
    nodes: [node('a', 1536, [29500, 29509])],
    plans: ['small', 'small', 'micro'],
    want: ['a', 'capacity_exhausted', 'a'],
  }],
  ['a node without a free port is passed over', {
    nodes: [node('a', 8192, [29500, 29500]), node('b', 1024, [29510, 29519])],
    plans: ['micro', 'micro', 'micro'],
    want: ['a', 'b', 'b'],
  }],
  ['a drained node takes no new server', {
    nodes: [node('a', 8192, [29500, 29509]), node('b', 1024, [29510, 29519])],
    setup: (s) => s.nodes.setDraining('a', true),
    plans: ['micro', 'micro', 'micro'],
    want: ['b', 'b', 'capacity_exhausted'],
  }],
  ['an unreachable node takes no new server until it answers again', {
    nodes: [node('a', 8192, [29500, 29509]), node('b', 512, [29510, 29519])],
    setup: (s) => s.nodes.setReachable('a', false),
    plans: ['micro', 'micro'],
    want: ['b', 'capacity_exhausted'],
  }],
  ['no node at all: nothing can be placed', { nodes: [], plans: ['micro'], want: ['capacity_exhausted'] }],
];

for (const [name, c] of cases) {
  test(name, () => {
    for (const n of c.nodes) expect(store.nodes.add(n)).toBe(true);
    c.setup?.(store);
    expect(c.plans.map(create)).toEqual(c.want);
  });
}

test('a server\'s address is its node\'s public host and a port of its range', () => {
  store.nodes.add(node('a', 4096, [29500, 29503]));
  const server = store.servers.create(userId, { name: 'x', plan: 'micro', version: 'flying-squid-1.20', software: 'flying-squid', game_version: '1.20' });
  expect(server.address?.host).toBe('a.example.net');
  expect(server.address?.port).toBeGreaterThanOrEqual(29500);
  expect(server.address?.port).toBeLessThanOrEqual(29503);
  expect(Object.keys(server)).not.toContain('node');
});

test('a larger plan is refused when the server\'s node cannot hold it, and nothing changes', () => {
  store.nodes.add(node('a', 1200, [29500, 29509]));
  const first = store.servers.create(userId, { name: 'x', plan: 'micro', version: 'flying-squid-1.20', software: 'flying-squid', game_version: '1.20' });
  const second = store.servers.create(userId, { name: 'y', plan: 'micro', version: 'flying-squid-1.20', software: 'flying-squid', game_version: '1.20' });
  store.servers.setState(first.id, 'stopped');
  expect(() => store.servers.update(userId, first.id, { plan: 'small' })).toThrow(expect.objectContaining({ code: 'capacity_exhausted' }));
  expect(store.servers.find(first.id)?.plan).toBe('micro');
  // Within the node's memory it is allowed: alone on it, 512 → 1024 of its 1200.
  store.servers.remove(second.id);
  expect(store.servers.update(userId, first.id, { plan: 'small' })?.plan).toBe('small');
});

test('with no node added, the default node is made once, and servers placed before nodes existed are on it', () => {
  const local = createStore(db, systemClock, { host: '127.0.0.1', portRange: [29600, 29609] }, { defaults: noQuotas, plans }, () => serviceActor('operator'));
  const before = local.servers.create(userId, { name: 'old', plan: 'micro', version: 'flying-squid-1.20', software: 'flying-squid', game_version: '1.20' });
  expect(store.nodes.nodeOf(before.id)).toBeNull();
  store.nodes.ensureDefault(node('local', 4096, [29600, 29609]));
  store.nodes.ensureDefault(node('local', 9999, [29600, 29609])); // a second boot changes nothing
  expect(store.nodes.list().map((n) => [n.name, n.memoryMb])).toEqual([['local', 4096]]);
  expect(store.nodes.nodeOf(before.id)).toBe('local');
  expect(store.nodes.remove('local')).toBe('in_use');
});

test('through the API: past every node\'s capacity, 503 capacity_exhausted with Retry-After, naming no node', async () => {
  const dataDir = tempDir('placement-api');
  const t = await createTestApp({ env: { DATA_DIR: dataDir, RUNTIME: 'docker', DOCKER_HOST: 'unix:///nonexistent.sock' } });
  try {
    t.store.nodes.setDraining('local', true); // the default node (RUNTIME=docker with none added) takes nothing
    const auth = { Authorization: `Bearer ${t.token()}` };
    const res = await t.http.post('/v1/servers').set(auth).send({ name: 'x', plan: 'micro', version: 'flying-squid-1.20' });
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['retry-after']).toBe('60');
    expect(res.body).toMatchObject({ code: 'capacity_exhausted', status: 503 });
    // No member names the node or its engine (`type` is the problem page on PUBLIC_URL, localhost here).
    const { type: _type, ...rest } = res.body as Record<string, unknown>;
    expect(JSON.stringify(rest)).not.toMatch(/local|nonexistent/);
    expect((await t.http.get('/v1/servers').set(auth)).body.data).toEqual([]);
  } finally {
    await t.finish();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
