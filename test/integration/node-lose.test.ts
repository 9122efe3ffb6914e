// `gsh node lose` and the recovery's recorded steps (src/cli-node-lose.ts, src/store/recoveries-repo.ts;
// docs/architecture.md "When a node is lost") on a real SQLite file: what the CLI refuses, writing nothing (an unknown
// node, the only node, a node whose engine answers: a real HTTP engine stand-in on loopback, unless --force), and the
// steps the service takes: the switch to a live node with server.updated, the restore's server.recovered naming the
// backup and its age (or none), a lost node never placed on again. The whole recovery on engines is
// test/docker/node-lose.test.ts's.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { serviceActor } from '../../src/actors';
import type { Clock } from '../../src/clock';
import { plans } from '../../src/catalog/plans';
import { runCli } from '../../src/cli';
import { createStore, type Store } from '../../src/store';
import { openDb, type Db } from '../../src/store/db';
import { tempDir } from '../helpers/app';

const noQuotas = { servers: 1_000_000, running: 1_000_000, memory_mb: 1_000_000_000 };
let dir: string;
let db: Db;
let store: Store;
let userId: string;
let now = Date.parse('2030-01-01T00:00:00.000Z');
const clock: Clock = { now: () => now };
let engine: http.Server;
let answering: string;
let silent: string;

/** A port nothing listens on: an engine that is gone. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

beforeAll(async () => {
  // A stand-in for an engine that still answers: Docker's GET /version, over plain HTTP on loopback.
  engine = http.createServer((req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ Version: '27.0.0' })));
  await new Promise<void>((r) => engine.listen(0, '127.0.0.1', r));
  answering = `tcp://127.0.0.1:${(engine.address() as AddressInfo).port}`;
  silent = `tcp://127.0.0.1:${await closedPort()}`;
});
afterAll(() => new Promise((r) => engine.close(r)));

beforeEach(() => {
  dir = tempDir('node-lose');
  db = openDb(path.join(dir, 'gsh.sqlite'));
  store = createStore(db, clock, { host: '127.0.0.1', portRange: [29700, 29799], nodes: true }, { defaults: noQuotas, plans }, () => serviceActor('operator'));
  userId = store.users.ensure('alice@example.com').id;
});

afterEach(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function addNode(name: string, dockerHost: string, ports: [number, number], memoryMb = 2048): void {
  store.nodes.add({ name, dockerHost, publicHost: `${name}.example.net`, memoryMb, ports });
}

async function gsh(...argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runCli(argv, { DATA_DIR: dir }, (s) => lines.push(s), (s) => lines.push(s));
  return { code, out: lines.join('\n') };
}

/** A server placed on `node` (the others drained meanwhile). */
function serverOn(node: string): string {
  const others = store.nodes.list().filter((n) => n.name !== node);
  for (const n of others) store.nodes.setDraining(n.name, true);
  const id = store.servers.create(userId, { name: 'x', plan: 'micro', version: 'flying-squid-1.20', software: 'flying-squid', game_version: '1.20' }).id;
  for (const n of others) store.nodes.setDraining(n.name, false);
  return id;
}

const lostAt = (name: string) => store.nodes.get(name)?.lostAt ?? null;

test('refused, writing nothing: an unknown node, the only node, a node whose engine answers (without --force)', async () => {
  expect(await gsh('node', 'lose')).toMatchObject({ code: 2 });
  addNode('a', silent, [29700, 29709]);
  const id = serverOn('a');
  expect(await gsh('node', 'lose', 'zz')).toEqual({ code: 1, out: 'gsh: There is no node zz.' });
  const only = await gsh('node', 'lose', 'a');
  expect(only.code).toBe(1);
  expect(only.out).toMatch(/Node a is the only node left/);
  addNode('b', answering, [29710, 29719]);
  const answers = await gsh('node', 'lose', 'b');
  expect(answers.code).toBe(1);
  expect(answers.out).toMatch(/Node b answers: its files are still there\. gsh node drain b --evacuate/);
  expect([lostAt('a'), lostAt('b'), store.recoveries.open()]).toEqual([null, null, []]);
  expect(store.nodes.nodeOf(id)).toBe('a');

  // --force takes a node that answers; a lost node then leaves a the only one not lost, so a cannot be lost too.
  expect(await gsh('node', 'lose', 'b', '--force', '--no-wait')).toMatchObject({ code: 0 });
  expect(lostAt('b')).not.toBeNull();
  expect((await gsh('node', 'list')).out).toMatch(/^b\tlost since \S+\t/m);
  expect((await gsh('node', 'lose', 'a')).out).toMatch(/Node a is the only node left/);
  expect(store.recoveries.open()).toEqual([]); // b had no server
});

test('a node that does not answer is lost: each server on it gets a recovery, once; the node takes no server again', async () => {
  addNode('a', silent, [29700, 29709]);
  addNode('b', silent, [29710, 29719]);
  const ids = [serverOn('a'), serverOn('a')];
  const asked = await gsh('node', 'lose', 'a', '--no-wait');
  expect(asked).toEqual({ code: 0, out: 'Node a is lost: it takes no server again. Recovering 2 server(s) from their newest backups on other nodes.' });
  expect(store.recoveries.open().map((r) => [r.serverId, r.fromNode, r.status]).sort()).toEqual(ids.sort().map((id) => [id, 'a', 'pending']));
  expect((await gsh('node', 'lose', 'a', '--no-wait')).code).toBe(0); // again: the same recoveries, none added
  expect(store.recoveries.open()).toHaveLength(2);
  store.nodes.setDraining('b', true);
  expect(() => store.servers.create(userId, { name: 'y', plan: 'micro', version: 'flying-squid-1.20', software: 'flying-squid', game_version: '1.20' })).toThrow(/No capacity/);
});

test('the switch places the server on a live node with server.updated; the restore raises server.recovered with the backup and its age', () => {
  addNode('a', silent, [29700, 29709]);
  addNode('b', silent, [29710, 29719]);
  addNode('c', silent, [29720, 29729]);
  const id = serverOn('a');
  const withoutBackup = serverOn('a');
  const backupIds: string[] = [];
  for (const name of ['older', 'newer']) {
    now += 60_000;
    const made = store.backups.create(id, name, { limit: 10 });
    if (!('backup' in made)) throw new Error('the backup was not made');
    store.backups.markReady(made.backup.id, { consistency: 'stop', sizeBytes: 1, sha256: 'a'.repeat(64) });
    backupIds.push(made.backup.id);
  }
  store.nodes.setDraining('c', true);
  const lost = store.recoveries.lose('a');
  if ('refused' in lost) throw new Error(lost.refused);
  const first = lost.recoveries.find((r) => r.serverId === id)!;
  const second = lost.recoveries.find((r) => r.serverId === withoutBackup)!;

  now += 3_600_000; // an hour after the backups
  const switched = store.recoveries.switchOver(first.id);
  expect(switched).toMatchObject({ toNode: 'b', address: { host: 'b.example.net' } });
  expect(store.servers.find(id)?.address).toMatchObject({ host: 'b.example.net' });
  expect(store.recoveries.get(first.id)).toMatchObject({ status: 'switched', toNode: 'b', leftover: 'a' });
  const newest = store.recoveries.backups(id)[0];
  expect(store.recoveries.backups(id).map((b) => b.id)).toEqual([...backupIds].reverse());
  store.recoveries.restored(first.id, newest);
  store.recoveries.restored(first.id, newest); // once
  store.recoveries.switchOver(second.id);
  store.recoveries.restored(second.id, null);

  const events = store.events.page(userId, { limit: 100, type: 'server.recovered' }).data;
  expect(events.map((e) => [e.server_id, e.data])).toEqual([
    [id, expect.objectContaining({ backup_id: newest.id, backup_created_at: newest.createdAt, backup_age_seconds: 3600 })],
    [withoutBackup, expect.objectContaining({ backup_id: null, backup_created_at: null, backup_age_seconds: null })],
  ]);
  const updated = store.events.page(userId, { limit: 100, type: 'server.updated' }).data.filter((e) => e.server_id === id);
  expect(updated.map((e) => (e.data as { server: { address: { host: string } } }).server.address.host)).toEqual(['b.example.net']);

  // No room anywhere: the recovery fails and the server stays on the lost node.
  const third = serverOn('b');
  store.nodes.setDraining('c', true);
  const lostB = store.recoveries.lose('b');
  if ('refused' in lostB) throw new Error(lostB.refused);
  const mine = lostB.recoveries.find((r) => r.serverId === third)!;
  expect(store.recoveries.switchOver(mine.id)).toEqual({ refused: 'no live node has room for it (plan memory and a free port)' });
  expect(store.nodes.nodeOf(third)).toBe('b');
});
