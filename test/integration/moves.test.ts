// The operator's move requests and the switch (src/store/moves-repo.ts, docs/architecture.md "Moving a server"),
// table-driven on a real SQLite file: what `gsh server move` refuses (writing nothing), and the switch: the server's
// new node, host and port with its server.updated event in one transaction, or nothing when the target no longer
// takes it. No engine is needed: the copy itself is test/docker/moves.test.ts's.
import fs from 'node:fs';
import path from 'node:path';
import { serviceActor } from '../../src/actors';
import { systemClock } from '../../src/clock';
import { plans } from '../../src/catalog/plans';
import { runCli } from '../../src/cli';
import { createStore, type Store } from '../../src/store';
import { openDb, type Db } from '../../src/store/db';
import type { NewNode } from '../../src/store/nodes-repo';
import { tempDir } from '../helpers/app';

const noQuotas = { servers: 1_000_000, running: 1_000_000, memory_mb: 1_000_000_000 };
let dir: string;
let db: Db;
let store: Store;
let userId: string;

beforeEach(() => {
  dir = tempDir('moves');
  db = openDb(path.join(dir, 'gsh.sqlite'));
  store = createStore(db, systemClock, { host: '127.0.0.1', portRange: [29600, 29699], nodes: true }, { defaults: noQuotas, plans }, () => serviceActor('operator'));
  userId = store.users.ensure('alice@example.com').id;
  for (const [name, memoryMb, ports] of [['a', 2048, [29600, 29609]], ['b', 2048, [29610, 29619]], ['c', 600, [29620, 29629]]] as const) {
    store.nodes.add({ name, dockerHost: `unix:///run/${name}.sock`, publicHost: `${name}.example.net`, memoryMb, ports: [...ports] } satisfies NewNode);
  }
});

afterEach(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A server of `plan` on node a (b and c drained while it is placed). */
function serverOnA(plan = 'micro'): string {
  store.nodes.setDraining('b', true);
  store.nodes.setDraining('c', true);
  const id = store.servers.create(userId, { name: 'x', plan, version: 'flying-squid-1.20', software: 'flying-squid', game_version: '1.20' }).id;
  store.nodes.setDraining('b', false);
  store.nodes.setDraining('c', false);
  return id;
}

const refusals: [string, { setup?: (id: string) => string | void; to: string; want: RegExp }][] = [
  ['an unknown server', { setup: () => 'srv_nothere', to: 'b', want: /There is no server srv_nothere/ }],
  ['an unknown node', { to: 'zz', want: /there is no node zz/ }],
  ['the node it is on', { to: 'a', want: /on node a already/ }],
  ['a drained node', { setup: () => void store.nodes.setDraining('b', true), to: 'b', want: /node b does not take/ }],
  ['a node without room for its plan', { setup: () => serverOnA('small'), to: 'c', want: /node c does not take a server of 1024 MiB/ }],
  ['a node that does not answer', { setup: () => void store.nodes.setReachable('b', false), to: 'b', want: /node b does not take/ }],
  ['its own node not answering', { setup: () => void store.nodes.setReachable('a', false), to: 'b', want: /Node a, where the server's files are, does not answer/ }],
  ['a server being moved already', { setup: (id) => void store.moves.request(id, 'b'), to: 'c', want: /being moved already/ }],
  ['a server being deleted', { setup: (id) => void store.servers.markDeleting(id), to: 'b', want: /being deleted/ }],
];

test.each(refusals)('a move to %s is refused, and writes nothing', (_name, { setup, to, want }) => {
  let id = serverOnA();
  id = setup?.(id) ?? id;
  const before = store.moves.open().length;
  const asked = store.moves.request(id, to);
  expect('refused' in asked && asked.refused).toMatch(want);
  expect(store.moves.open().length).toBe(before);
});

test('the switch gives the server its new node, host and a port of that node, with server.updated, in one step', () => {
  const id = serverOnA();
  const asked = store.moves.request(id, 'b');
  if (!('move' in asked)) throw new Error(asked.refused);
  expect(asked.move).toMatchObject({ serverId: id, fromNode: 'a', toNode: 'b', status: 'pending', wasRunning: null, leftover: null });
  expect(store.moves.begin(asked.move.id, true)).toMatchObject({ status: 'copying', wasRunning: true });
  expect(store.moves.begin(asked.move.id, false)).toMatchObject({ wasRunning: true }); // a restart keeps the first answer
  const switched = store.moves.switchOver(asked.move.id, 12345);
  expect(switched).toMatchObject({ address: { host: 'b.example.net' } });
  const server = store.servers.find(id)!;
  expect([store.nodes.nodeOf(id), server.address?.host]).toEqual(['b', 'b.example.net']);
  expect(server.address!.port).toBeGreaterThanOrEqual(29610);
  expect(server.address!.port).toBeLessThanOrEqual(29619);
  expect(store.moves.get(asked.move.id)).toMatchObject({ status: 'switched', bytes: 12345, leftover: 'a' });
  const updated = store.events.page(userId, { limit: 10, desc: true }).data.find((e) => e.type === 'server.updated');
  expect(updated?.data).toMatchObject({ server: { id, address: server.address } });
  expect(updated?.actor).toEqual(serviceActor('operator')); // as whoever's work ran it: the operator's move
  store.moves.finish(asked.move.id);
  store.moves.dropped(asked.move.id);
  expect(store.moves.get(asked.move.id)).toMatchObject({ status: 'done', leftover: null });
  expect(store.moves.open()).toEqual([]);
});

test('a switch the target no longer takes changes nothing; the move fails with the target as leftover', () => {
  const id = serverOnA();
  const asked = store.moves.request(id, 'b');
  if (!('move' in asked)) throw new Error(asked.refused);
  store.moves.begin(asked.move.id, false);
  store.nodes.setDraining('b', true);
  const before = store.servers.find(id)!.address;
  expect(store.moves.switchOver(asked.move.id, 1)).toMatchObject({ refused: expect.stringMatching(/node b does not take/) });
  expect([store.nodes.nodeOf(id), store.servers.find(id)!.address]).toEqual(['a', before]);
  store.moves.fail(asked.move.id, 'the target was drained', 'b');
  expect(store.moves.get(asked.move.id)).toMatchObject({ status: 'failed', leftover: 'b', error: 'the target was drained' });
});

test('`gsh server move` checks its arguments and says why a move is refused', async () => {
  const id = serverOnA();
  db.close();
  const run = async (...argv: string[]) => {
    const lines: string[] = [];
    const code = await runCli(argv, { DATA_DIR: dir }, (s) => lines.push(s), (s) => lines.push(s));
    return { code, out: lines.join('\n') };
  };
  expect(await run('server', 'move', id)).toMatchObject({ code: 2, out: expect.stringMatching(/needs a server id and --to/) });
  expect(await run('server', 'move', id, '--to', 'a')).toMatchObject({ code: 1, out: expect.stringMatching(/on node a already/) });
  expect(await run('server', 'move', id, '--to', 'b', '--no-wait')).toMatchObject({ code: 0, out: expect.stringMatching(/Asked the service to move .* from node a to node b/) });
  db = openDb(path.join(dir, 'gsh.sqlite'));
});
