// The counters behind quotas and placement (migration 026; docs/architecture.md "At scale"): `server_counts` (an
// account's servers and running servers per plan) and `node_counts` (a node's servers per plan) are kept by triggers
// on `servers`, so whatever sequence of writes the store makes, each equals the GROUP BY over the rows it replaced,
// and GET /v1/quota's use with it. fast-check drives random sequences of the store's own writes against a real
// SQLite file; test/integration/server-counts-kill.test.ts adds kill -9 in the middle of such writes.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { systemClock } from '../../src/clock';
import { plans } from '../../src/catalog/plans';
import { serviceActor } from '../../src/actors';
import { createStore, type Store } from '../../src/store';
import { openDb, type Db } from '../../src/store/db';
import { createServerWrites } from '../../src/store/server-writes';
import { serverStates } from '../../src/runtime/server/states';
import { tempDir } from '../helpers/app';
import { countsDrift } from '../helpers/server-counts';

const noQuotas = { servers: 1_000_000, running: 1_000_000, memory_mb: 1_000_000_000 };
const planIds = ['micro', 'small', 'medium'] as const;

type Op =
  | { op: 'create'; user: number; plan: string }
  | { op: 'state'; pick: number; state: (typeof serverStates)[number] }
  | { op: 'action'; pick: number; type: 'start' | 'stop' }
  | { op: 'plan'; pick: number; plan: string }
  | { op: 'remove'; pick: number }
  | { op: 'deleteUser'; user: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('create' as const), user: fc.nat(2), plan: fc.constantFrom(...planIds) }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('state' as const), pick: fc.nat(), state: fc.constantFrom(...serverStates) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('action' as const), pick: fc.nat(), type: fc.constantFrom('start' as const, 'stop' as const) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('plan' as const), pick: fc.nat(), plan: fc.constantFrom(...planIds) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('remove' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('deleteUser' as const), user: fc.nat(2) }) },
);

let dir: string;
let db: Db;
let store: Store;

beforeEach(() => {
  dir = tempDir('server-counts');
  db = openDb(path.join(dir, 'db.sqlite'));
  // Servers go on two nodes (RUNTIME=docker placement), so node_counts is exercised too.
  store = createStore(db, systemClock, { host: '127.0.0.1', portRange: [30000, 30999], nodes: true }, { defaults: noQuotas, plans }, () => serviceActor('operator'));
  for (const name of ['a', 'b']) store.nodes.add({ name, dockerHost: `unix:///run/${name}.sock`, publicHost: `${name}.example.net`, memoryMb: 1_000_000, ports: name === 'a' ? [30000, 30499] : [30500, 30999] });
});

afterEach(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Applies one operation through the store's own writes (the ones the service makes), skipping what cannot apply. */
function apply(o: Op): void {
  const ids = db.prepare('SELECT id, user_id FROM servers ORDER BY id').all() as { id: string; user_id: string }[];
  const pick = 'pick' in o && ids.length > 0 ? ids[o.pick % ids.length] : undefined;
  const writes = createServerWrites(db, systemClock, store.events);
  if (o.op === 'create') {
    const user = store.users.ensure(`user${o.user}@example.com`);
    store.servers.create(user.id, { name: 'x', plan: o.plan, version: 'flying-squid-1.20', software: 'flying-squid', game_version: '1.20' });
  } else if (o.op === 'deleteUser') {
    db.prepare('DELETE FROM users WHERE email = ?').run(`user${o.user}@example.com`); // ON DELETE CASCADE takes their servers
  } else if (pick && o.op === 'state') {
    writes.setState(pick.id, o.state);
  } else if (pick && o.op === 'action') {
    store.actions.create(pick.id, pick.user_id, o.type);
  } else if (pick && o.op === 'plan') {
    db.prepare("UPDATE servers SET state = 'stopped' WHERE id = ?").run(pick.id); // a plan changes only while stopped
    store.servers.update(pick.user_id, pick.id, { plan: o.plan });
  } else if (pick && o.op === 'remove') {
    writes.markDeleting(pick.id);
    writes.remove(pick.id);
  }
}

test('after any sequence of the store\'s writes, the counters equal the rows they count', () => {
  fc.assert(
    fc.property(fc.array(opArb, { minLength: 1, maxLength: 40 }), (ops) => {
      db.exec('DELETE FROM users; DELETE FROM server_counts; DELETE FROM node_counts;');
      for (const o of ops) {
        apply(o);
        expect(countsDrift(db)).toEqual([]);
      }
    }),
    { numRuns: 60, seed: 32 },
  );
});

test('GET /v1/quota\'s use follows the counters: servers, running and plan memory', () => {
  const user = store.users.ensure('owner@example.com');
  const create = (plan: string) => store.servers.create(user.id, { name: 'x', plan, version: 'flying-squid-1.20', software: 'flying-squid', game_version: '1.20' });
  const [a, b] = [create('micro'), create('small'), create('small')];
  store.actions.create(a.id, user.id, 'start');
  const use = () => {
    const q = store.quotas.get(user.id);
    return [q.servers.used, q.running.used, q.memory_mb.used];
  };
  expect(use()).toEqual([3, 1, 512 + 1024 + 1024]);
  const writes = createServerWrites(db, systemClock, store.events);
  store.actions.create(a.id, user.id, 'stop'); // desired stopped, but its game still runs: it still counts
  writes.setState(a.id, 'running');
  expect(use()).toEqual([3, 1, 2560]);
  writes.setState(a.id, 'stopped');
  expect(use()).toEqual([3, 0, 2560]);
  writes.setState(b.id, 'stopped'); // installed
  store.servers.update(user.id, b.id, { plan: 'medium' });
  expect(use()).toEqual([3, 0, 512 + 2048 + 1024]);
  writes.markDeleting(b.id); // counts until it is gone
  expect(use()).toEqual([3, 0, 3584]);
  writes.remove(b.id);
  expect(use()).toEqual([2, 0, 1536]);
  expect(countsDrift(db)).toEqual([]);
});
