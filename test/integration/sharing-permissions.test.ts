import http from 'node:http';
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';
import { diffSnapshots, rawRequest, requiredQuery, snapshot, specOperations, type Json, type SpecOperation } from '../security/helpers';

/**
 * Every permission of a shared server, allowed and refused, on every operation it touches (issue 30 "Done when";
 * docs/architecture.md "Sharing"). The table is built from the spec: every operation on a server, with what its
 * `x-permission` says it needs, read here independently of src/http/access.ts. Two accounts: the owner and a
 * member whose permissions each case sets. For each need of each operation:
 * - refused: the member holding every permission but that one (all of them, for the owner's alone) gets 403
 *   missing_permission naming it, and nothing changes;
 * - allowed: the member holding that one alone (none, for what any member may do) passes the access check: no
 *   missing_permission, no 404 for the server, no 5xx. (The owner's own operations are allowed to the owner.)
 * One app for the file: a refused request changes nothing (checked), and after an allowed one the fixtures it
 * may have used up are made again.
 */

const PERMISSIONS = ['console', 'power', 'settings', 'players', 'backups', 'alerts', 'files'] as const;
type Permission = (typeof PERMISSIONS)[number];
type TaskType = 'command' | 'power' | 'backup';
const TASK_BODIES: Record<TaskType, Json> = {
  command: { type: 'command', command: 'say hello' },
  power: { type: 'power', action: 'stop' },
  backup: { type: 'backup' },
};

const { operations } = specOperations();
const serverOps = operations.filter((op) => op.path.startsWith('/v1/servers/{server_id}'));
const rule = (op: SpecOperation): Json => (op as Json)['x-permission'];

let t: TestApp;
let base: string;
let close: () => Promise<void>;
const agent = new http.Agent({ keepAlive: true });
const f: Record<string, string> = {}; // the fixtures' ids and tokens
const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

/** One case: who asks (the owner, or the member holding `holds`), what, and whether the access check lets it through. */
interface Case {
  name: string;
  op: SpecOperation;
  holds: Permission[] | 'owner';
  body?: unknown;
  /** The schedule the path names, by the type of its one task. */
  schedule?: TaskType;
  /** The permission a refusal names; undefined: allowed. */
  refused?: Permission | 'owner';
}

function example(schema: Json): unknown {
  if (schema.example !== undefined) return schema.example;
  if (schema.type === 'object' || schema.properties) {
    return Object.fromEntries(Object.entries<Json>(schema.properties ?? {}).map(([k, s]) => [k, example(s)]).filter(([, v]) => v !== undefined));
  }
  return undefined;
}

function bodyOf(op: SpecOperation): unknown {
  const schema = op.requestBody?.content['application/json']?.schema;
  if (op.operationId === 'createServerMember') return { email: `invitee-${Math.random().toString(36).slice(2)}@example.com`, permissions: [] };
  return schema ? example(schema) : undefined;
}

const without = (p: Permission) => PERMISSIONS.filter((x) => x !== p);

/** The cases of one operation, from its x-permission. */
function casesOf(op: SpecOperation): Case[] {
  const r = rule(op);
  const id = op.operationId;
  if (r === 'owner') {
    const owner: Case[] = id === 'deleteServer' ? [] : [{ name: `${id}: the owner`, op, holds: 'owner', body: bodyOf(op) }];
    return [{ name: `${id}: a member with every permission is refused (owner)`, op, holds: [...PERMISSIONS], body: bodyOf(op), refused: 'owner' }, ...owner];
  }
  if (r === 'member') return [{ name: `${id}: a member with no permission`, op, holds: [], body: bodyOf(op) }];
  if (typeof r === 'string') {
    const p = r as Permission;
    return [
      { name: `${id}: a member without ${p} is refused`, op, holds: without(p), body: bodyOf(op), refused: p },
      { name: `${id}: a member with ${p} alone`, op, holds: [p], body: bodyOf(op) },
    ];
  }
  if ('field' in r) {
    const bodies: Array<[Json, Permission]> = [
      ...Object.entries<string>(r.values).map(([value, p]): [Json, Permission] => [{ type: value, backup_id: '@backup' }, p as Permission]),
      [{ type: 'stop' }, r.otherwise],
    ];
    return bodies.flatMap(([body, p]) => [
      { name: `${id} ${body.type}: a member without ${p} is refused`, op, holds: without(p), body, refused: p },
      { name: `${id} ${body.type}: a member with ${p} alone`, op, holds: [p], body },
    ]);
  }
  // { tasks }: every task's permission, as sent and as stored.
  const types = Object.keys(r.tasks) as TaskType[];
  const stored = op.path.includes('{schedule_id}');
  return types.flatMap((type) => {
    const p = r.tasks[type] as Permission;
    const body = id === 'createServerSchedule' ? { name: 'x', cron: '0 4 * * *', tasks: [TASK_BODIES[type]] } : op.method === 'patch' ? { name: 'renamed' } : undefined;
    const cases: Case[] = [
      { name: `${id} (${type}): a member without ${p} is refused`, op, holds: without(p), body, schedule: stored ? type : undefined, refused: p },
      { name: `${id} (${type}): a member with ${p} alone`, op, holds: [p], body, schedule: stored ? type : undefined },
    ];
    if (op.method === 'patch') {
      // As sent: a task of another type in the body needs its permission too.
      const other = types.find((x) => r.tasks[x] !== p)!;
      cases.push({ name: `${id} (${type}, sending a ${other} task): a member with ${p} alone is refused`, op, holds: [p], body: { tasks: [TASK_BODIES[other]] }, schedule: type, refused: r.tasks[other] });
    }
    return cases;
  });
}

const cases = serverOps.flatMap(casesOf);

async function makeBackup(): Promise<string> {
  const made = await t.http.post(`/v1/servers/${f.server}/backups`).set(auth(f.owner)).send({});
  expect(made.status).toBe(202);
  await until('the backup', async () => (await t.http.get(made.headers.location).set(auth(f.owner))).body.status !== 'pending', 15_000);
  return made.body.id;
}

/** What the cases name: made once, and again after an allowed case used one up. */
async function ensureFixtures(): Promise<void> {
  await t.runtime.idle();
  const has = (table: string, id: string | undefined) => id !== undefined && t.db.prepare(`SELECT 1 FROM ${table} WHERE id = ?`).get(id) !== undefined;
  if (!has('members', f.member)) {
    const member = await t.http.post(`/v1/servers/${f.server}/members`).set(auth(f.owner)).send({ email: 'member@example.com', permissions: [] });
    expect(member.status).toBe(201);
    f.member = member.body.id;
  }
  if (!has('backups', f.backup)) f.backup = await makeBackup();
  if (!has('alert_rules', f.alert)) f.alert = (await t.http.post(`/v1/servers/${f.server}/alerts`).set(auth(f.owner)).send({ kind: 'crash' })).body.id;
  for (const type of Object.keys(TASK_BODIES) as TaskType[]) {
    if (has('schedules', f[`schedule_${type}`])) continue;
    const body = { name: `only ${type}`, cron: '0 4 * * *', tasks: [TASK_BODIES[type]] };
    f[`schedule_${type}`] = (await t.http.post(`/v1/servers/${f.server}/schedules`).set(auth(f.owner)).send(body)).body.id;
  }
  if (!has('schedule_runs', f.run)) {
    const run = await t.http.post(`/v1/servers/${f.server}/schedules/${f.schedule_command}/run`).set(auth(f.owner));
    f.run = run.body.id;
    f.runSchedule = f.schedule_command;
    await t.runtime.idle();
  }
  await t.http.put(`/v1/servers/${f.server}/players/whitelist/Steve`).set(auth(f.owner));
  await t.runtime.idle();
}

beforeAll(async () => {
  t = await createTestApp({ env: { GAME_PORT_RANGE: '27700-27719' } });
  ({ base, close } = await t.listen());
  f.owner = t.token('owner@example.com');
  f.memberToken = t.token('member@example.com');
  const created = await t.http.post('/v1/servers').set(auth(f.owner)).send({ name: 'shared', plan: 'small', version: 'flying-squid-1.20' });
  f.server = created.body.id;
  await until('the server installed', async () => (await t.http.get(`/v1/servers/${f.server}`).set(auth(f.owner))).body.state === 'stopped', 15_000);
  f.action = (await t.http.post(`/v1/servers/${f.server}/actions`).set(auth(f.owner)).send({ type: 'stop' })).body.id;
  await ensureFixtures();
}, 120_000);
afterAll(async () => {
  agent.destroy();
  await close?.();
  await t?.finish();
});

test('the table covers every operation on a server, and every permission both ways', () => {
  expect(serverOps.length).toBeGreaterThan(40);
  expect(serverOps.filter((op) => rule(op) === undefined).map((op) => op.operationId)).toEqual([]);
  expect(new Set(cases.map((c) => c.op.operationId))).toEqual(new Set(serverOps.map((op) => op.operationId)));
  for (const p of [...PERMISSIONS, 'owner']) {
    expect({ p, refused: cases.some((c) => c.refused === p) }).toEqual({ p, refused: true });
    if (p !== 'owner') expect({ p, allowed: cases.some((c) => !c.refused && c.holds !== 'owner' && c.holds.length === 1 && c.holds[0] === p) }).toEqual({ p, allowed: true });
  }
});

test.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
  t.store.members.update(f.server, f.member, c.holds === 'owner' ? [] : c.holds);
  const ids: Record<string, string> = {
    server_id: f.server, action_id: f.action, backup_id: f.backup, alert_id: f.alert, member_id: f.member, list: 'whitelist', name: 'Steve',
    schedule_id: c.schedule ? f[`schedule_${c.schedule}`] : f.runSchedule, run_id: f.run,
  };
  const path = c.op.path.replace(/\{([^}]+)\}/g, (_m, n: string) => ids[n]) + requiredQuery(c.op);
  const body = c.body && JSON.parse(JSON.stringify(c.body).replace('"@backup"', JSON.stringify(f.backup)));
  const headers: Record<string, string> = { ...auth(c.holds === 'owner' ? f.owner : f.memberToken) };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const before = snapshot(t.db, t.dir);
  const res = await rawRequest(base, { method: c.op.method.toUpperCase(), path, headers, body: body === undefined ? undefined : JSON.stringify(body) }, agent);
  const problem = /problem\+json/.test(String(res.headers['content-type'])) ? JSON.parse(res.text) : null;
  if (c.refused) {
    expect({ status: res.status, code: problem?.code, permission: problem?.permission }).toEqual({ status: 403, code: 'missing_permission', permission: c.refused });
    await t.runtime.idle();
    expect(diffSnapshots(before, snapshot(t.db, t.dir))).toEqual([]);
  } else {
    expect({ status: res.status, code: problem?.code }).toEqual({ status: res.status < 500 ? res.status : 'below 500', code: problem?.code });
    expect(['missing_permission', 'server_not_found']).not.toContain(problem?.code);
    await ensureFixtures();
  }
});
