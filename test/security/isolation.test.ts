import http from 'node:http';
import { utils as sshUtils } from 'ssh2';
import { createTestApp, type TestApp } from '../helpers/app';
import { until } from '../helpers/wait';
import { newId } from '../../src/ids';
import { diffSnapshots, missingIdLike, rawRequest, requiredQuery, snapshot, specOperations, type Json, type RawResponse, type SpecOperation } from './helpers';

/**
 * Tenancy (docs/conventions.md "Authentication": "Every resource has an owner. Another owner's resource answers 404, exactly like a missing
 * one"). Two users, each with a server, an action, a crash, metrics and a spare token. For every operation of the
 * spec that takes a resource id (found by walking the spec), the attacker names the victim's resource and must get:
 * - 404 with the same status, headers and body as for a truly missing id of the same shape (the id itself aside,
 *   which `detail` and `instance` echo);
 * - nothing of the victim's (names, other ids, secrets, console or crash lines) in the body or the headers;
 * - no change of state;
 * - for an event stream, the 404 before any event.
 * Every collection the spec lists (an operation whose 200 schema has a `data` array) is read by the attacker, also
 * with the victim's ids as cursors, and never shows a victim's item.
 */

const { operations } = specOperations();
let t: TestApp;
let base: string;
let close: () => Promise<void>;
const agent = new http.Agent({ keepAlive: true });

interface Tenant {
  email: string;
  token: string;
  userId: string;
  server: string;
  action: string;
  spare: { id: string; secret: string; prefix: string };
  crash: string;
  webhook: string;
  backup: string;
  /** A backup kept from a deleted server (listKeptBackups). */
  kept: string;
  alert: string;
  /** A member of `server` (an invited email), a schedule of it, and a run of that schedule. */
  member: string;
  schedule: string;
  run: string;
  sshKey: string;
  /** Values only this tenant's answers may contain. */
  secrets: string[];
}
let victim: Tenant;
let attacker: Tenant;

const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

async function tenant(label: string): Promise<Tenant> {
  const email = `${label}-${Math.random().toString(36).slice(2)}@example.com`;
  const token = t.token(email);
  const userId = (t.db.prepare('SELECT id FROM users WHERE email = ?').get(email) as { id: string }).id;
  const name = `${label}-server-name-${Math.random().toString(36).slice(2, 8)}`;
  const created = await t.http.post('/v1/servers').set(auth(token)).send({ name, plan: 'micro', version: 'flying-squid-1.20' });
  expect(created.status).toBe(201);
  const server = created.body.id as string;
  await until(`${label}'s server to install`, async () => (await t.http.get(`/v1/servers/${server}`).set(auth(token))).body.state === 'stopped', 15_000);
  // Stop on a stopped server succeeds at once without starting anything.
  const act = await t.http.post(`/v1/servers/${server}/actions`).set(auth(token)).send({ type: 'stop' });
  expect(act.status).toBe(202);
  await until(`${label}'s action to finish`, async () => (await t.http.get(act.headers.location).set(auth(token))).body.status === 'succeeded', 15_000);
  const tokenName = `${label}-token-name-${Math.random().toString(36).slice(2, 8)}`;
  const spare = await t.http.post('/v1/tokens').set(auth(token)).send({ name: tokenName, scopes: ['servers:read'] });
  expect(spare.status).toBe(201);
  // A crash record and telemetry, so the crash and metrics reads have something to leak.
  const crashLine = `${label}-crash-line-${Math.random().toString(36).slice(2, 8)}`;
  const crash = newId('crs');
  t.db
    .prepare('INSERT INTO crashes (id, server_id, at, exit_code, signal, reason, last_lines) VALUES (?, ?, ?, 1, NULL, ?, ?)')
    .run(crash, server, new Date().toISOString(), 'exited', JSON.stringify([crashLine]));
  t.metrics.write([{ server_id: server, at: new Date().toISOString(), tps: 19.5, cpu_percent: 12.5, ram_bytes: 123_456_789, players_online: 3, players_max: 5 }]);
  // A webhook with a delivery (never made: the dispatcher is not started), and the events all of this recorded.
  const hookUrl = `https://${label}-hook-${Math.random().toString(36).slice(2, 8)}.example.com/in`;
  const hook = await t.http.post('/v1/webhooks').set(auth(token)).send({ url: hookUrl, event_types: ['server.created'] });
  expect(hook.status).toBe(201);
  const delivery = await t.http.post(`/v1/webhooks/${hook.body.id}/test`).set(auth(token));
  expect(delivery.status).toBe(202);
  // A name on its whitelist, so the list reads have something to leak; and settings of its own.
  const player = `${label.slice(0, 6)}${Math.random().toString(36).slice(2, 8)}`;
  expect((await t.http.put(`/v1/servers/${server}/players/whitelist/${player}`).set(auth(token))).status).toBe(200);
  const motd = `${label}-motd-${Math.random().toString(36).slice(2, 8)}`;
  expect((await t.http.patch(`/v1/servers/${server}/settings`).set(auth(token)).send({ motd })).status).toBe(200);
  // A ready backup, so the backup reads and the archive download have something to leak.
  const backup = await t.http.post(`/v1/servers/${server}/backups`).set(auth(token)).send({ name: `${label}-backup` });
  expect(backup.status).toBe(202);
  await until(`${label}'s backup`, async () => (await t.http.get(backup.headers.location).set(auth(token))).body.status === 'ready', 15_000);
  // A second server, backed up and deleted with keep_backups=true: a kept backup.
  const gone = (await t.http.post('/v1/servers').set(auth(token)).send({ name: `${label}-gone`, plan: 'micro', version: 'flying-squid-1.20' })).body.id as string;
  await until(`${label}'s second server to install`, async () => (await t.http.get(`/v1/servers/${gone}`).set(auth(token))).body.state === 'stopped', 15_000);
  const keptBackup = await t.http.post(`/v1/servers/${gone}/backups`).set(auth(token)).send({ name: `${label}-kept` });
  await until(`${label}'s kept backup`, async () => (await t.http.get(keptBackup.headers.location).set(auth(token))).body.status === 'ready', 15_000);
  expect((await t.http.delete(`/v1/servers/${gone}`).query({ keep_backups: 'true' }).set(auth(token))).status).toBe(202);
  await until(`${label}'s second server to go`, async () => (await t.http.get('/v1/backups').set(auth(token))).body.data.length === 1, 15_000);
  const alertName = `${label}-alert-${Math.random().toString(36).slice(2, 8)}`;
  const alert = await t.http.post(`/v1/servers/${server}/alerts`).set(auth(token)).send({ kind: 'metric', name: alertName, metric: 'tps', comparison: 'below', threshold: 15 });
  expect(alert.status).toBe(201);
  const memberEmail = `${label}-friend-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const member = await t.http.post(`/v1/servers/${server}/members`).set(auth(token)).send({ email: memberEmail, permissions: ['console'] });
  expect(member.status).toBe(201);
  const scheduleName = `${label}-schedule-${Math.random().toString(36).slice(2, 8)}`;
  const schedule = await t.http.post(`/v1/servers/${server}/schedules`).set(auth(token)).send({ name: scheduleName, cron: '0 4 * * *', tasks: [{ type: 'power', action: 'stop' }] });
  expect(schedule.status).toBe(201);
  const run = await t.http.post(`/v1/servers/${server}/schedules/${schedule.body.id}/run`).set(auth(token));
  expect(run.status).toBe(202);
  await until(`${label}'s run`, async () => (await t.http.get(run.headers.location).set(auth(token))).body.status !== 'running', 15_000);
  // A file of its own (and so a line of file activity) at the path the spec's examples name, and an SSH key.
  const fileText = `${label}-file-${Math.random().toString(36).slice(2, 8)}`;
  const upload = await t.http.put(`/v1/servers/${server}/files/content`).query({ path: 'world/level.dat' }).set(auth(token)).set('Content-Type', 'application/octet-stream').send(Buffer.from(fileText));
  expect(upload.status).toBeLessThan(300);
  const sshKey = await t.http.post('/v1/ssh-keys').set(auth(token)).send({ public_key: sshUtils.generateKeyPairSync('ed25519', { comment: `${label}-key` }).public, name: `${label}-key` });
  expect(sshKey.status).toBe(201);
  const eventIds = (t.db.prepare('SELECT id FROM events WHERE user_id = ?').pluck().all(userId) as string[]);
  return {
    email, token, userId, server, action: act.body.id, crash, webhook: hook.body.id, backup: backup.body.id, kept: keptBackup.body.id, alert: alert.body.id,
    member: member.body.id, schedule: schedule.body.id, run: run.body.id, sshKey: sshKey.body.id as string,
    spare: { id: spare.body.id, secret: spare.body.token, prefix: spare.body.prefix },
    secrets: [email, userId, token, name, tokenName, crashLine, server, act.body.id, crash, spare.body.id, spare.body.token, spare.body.prefix,
      hookUrl, hook.body.id, hook.body.secret, delivery.body.id, ...eventIds, player, motd, backup.body.id, gone, keptBackup.body.id, alert.body.id, alertName,
      memberEmail, member.body.id, scheduleName, schedule.body.id, run.body.id, fileText, sshKey.body.id, `${label}-key`],
  };
}

beforeAll(async () => {
  // Webhook hosts resolve to a public documentation-free address; nothing is ever sent (no dispatcher runs).
  // SFTP_PORT: getServerSftp answers the attacker's own server as the victim's (jest's default is SFTP off: 404).
  t = await createTestApp({ env: { GAME_PORT_RANGE: '27850-27899', SFTP_PORT: '2022' }, webhooks: { lookup: async () => [{ address: '93.184.215.14', family: 4 }] } });
  ({ base, close } = await t.listen());
  victim = await tenant('victim');
  attacker = await tenant('attacker');
}, 180_000);
afterAll(async () => {
  agent.destroy();
  await close?.();
  await t?.close();
});
afterEach(() => t.expectContract());

// --- the spec walk ------------------------------------------------------------------------------------------------

const ID_PARAMS: Record<string, (who: Tenant) => string> = {
  server_id: (who) => who.server,
  action_id: (who) => who.action,
  token_id: (who) => who.spare.id,
  webhook_id: (who) => who.webhook,
  backup_id: (who) => who.backup,
  alert_id: (who) => who.alert,
  member_id: (who) => who.member,
  schedule_id: (who) => who.schedule,
  run_id: (who) => who.run,
  ssh_key_id: (who) => who.sshKey,
};
/** Under /v1/backups, `backup_id` names a kept backup (listKeptBackups). */
const KEPT_PATH = /^\/v1\/backups\//;
/** Path parameters that name no owned resource: the same for both tenants (a player list, a player's name, a version). */
const FIXED_PARAMS: Record<string, string> = { list: 'whitelist', name: 'Steve', version_id: 'flying-squid-1.20' };
const pathParams = (op: SpecOperation) => op.parameters.filter((p) => p.in === 'path');
const paramFor = (name: string, who: Tenant, op: SpecOperation) =>
  FIXED_PARAMS[name] ?? (name === 'backup_id' && KEPT_PATH.test(op.path) ? who.kept : ID_PARAMS[name](who));
const isStream = (op: SpecOperation) => Boolean(op.responses['200']?.content?.['text/event-stream']);

/** A valid body from the spec's own examples (every property has one; docs/conventions.md "The contract" requires it). */
function example(schema: Json): unknown {
  if (schema.example !== undefined) return schema.example;
  if (schema.type === 'object' || schema.properties) {
    return Object.fromEntries(Object.entries<Json>(schema.properties ?? {}).map(([k, s]) => [k, example(s)]).filter(([, v]) => v !== undefined));
  }
  return undefined;
}

function bodyFor(op: SpecOperation): unknown {
  const schema = op.requestBody?.content['application/json']?.schema;
  if (!schema) return undefined;
  const body = example(schema) as Record<string, unknown>;
  // The spec's example action is `start`. Should isolation ever fail, a stop on the victim's stopped server changes
  // the database (caught below) without launching a game.
  if (op.operationId === 'createServerAction') return { ...body, type: 'stop' };
  return body;
}

/**
 * Which of the path's ids are the victim's in each variant: all of them; and, for nested resources, the
 * attacker's own parent with the victim's child (e.g. the victim's action under the attacker's server).
 */
function variants(op: SpecOperation): Array<{ label: string; victimParams: string[] }> {
  const ids = pathParams(op).map((p) => p.name).filter((n) => n in ID_PARAMS);
  if (ids.length === 0) return [];
  const out = [{ label: `victim's ${ids.join(' + ')}`, victimParams: ids }];
  if (ids.length > 1) out.push({ label: `own ${ids.slice(0, -1).join(' + ')}, victim's ${ids[ids.length - 1]}`, victimParams: ids.slice(-1) });
  return out;
}

const cases = operations.flatMap((op) => variants(op).map((v) => [`${op.operationId} (${op.method.toUpperCase()} ${op.path}): ${v.label}`, op, v] as const));

function request(op: SpecOperation, ids: Record<string, string>, token: string, body: unknown) {
  const path = op.path.replace(/\{([^}]+)\}/g, (_m, n: string) => ids[n]) + requiredQuery(op);
  const headers: Record<string, string> = { ...auth(token) };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  return rawRequest(base, { method: op.method.toUpperCase(), path, headers, body: body === undefined ? undefined : JSON.stringify(body) }, agent);
}

/** The answer with these ids replaced by placeholders, and the headers that do not vary per request. */
function shape(res: RawResponse, ids: string[]) {
  let text = res.text;
  for (const [i, id] of ids.entries()) text = text.split(id).join(`<id${i}>`);
  // Every answer has its own Request-Id (docs/conventions.md "Request ids"), in the header and the problem.
  const requestId = res.headers['request-id'];
  if (typeof requestId === 'string') text = text.split(requestId).join('<request-id>');
  const headers = Object.fromEntries(
    Object.entries(res.headers).filter(([k]) => !['date', 'ratelimit', 'ratelimit-policy', 'keep-alive', 'connection', 'request-id'].includes(k)),
  );
  return { status: res.status, headers, body: text };
}

describe('another user\'s resource answers exactly like a missing one', () => {
  test('the spec walk found every kind of id', () => {
    // Every operation's, not only those the cases were made of: an id no fixture names must fail here.
    const names = new Set(operations.flatMap((op) => pathParams(op).map((p) => p.name).filter((n) => !(n in FIXED_PARAMS))));
    expect([...names].sort()).toEqual(Object.keys(ID_PARAMS).sort());
    expect(cases.length).toBeGreaterThanOrEqual(operations.filter((op) => pathParams(op).length > 0).length);
  });

  test.each(cases)('%s', async (_name, op, variant) => {
    const body = bodyFor(op);
    const ids: Record<string, string> = {};
    const missing: Record<string, string> = {};
    for (const p of pathParams(op)) {
      const who = variant.victimParams.includes(p.name) ? victim : attacker;
      ids[p.name] = paramFor(p.name, who, op);
      missing[p.name] = variant.victimParams.includes(p.name) ? missingIdLike(ids[p.name]) : ids[p.name];
    }
    const sentVictimIds = variant.victimParams.map((n) => ids[n]);

    const before = snapshot(t.db, t.dir);
    const res = await request(op, ids, attacker.token, body);
    const after = snapshot(t.db, t.dir);
    const none = await request(op, missing, attacker.token, body);

    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(shape(res, sentVictimIds)).toEqual(shape(none, variant.victimParams.map((n) => missing[n])));

    // Nothing of the victim's, apart from the ids the attacker sent itself.
    const seen = res.text + JSON.stringify(res.headers);
    const leaked = victim.secrets.filter((s) => !sentVictimIds.includes(s) && seen.includes(s));
    expect(leaked).toEqual([]);

    expect(diffSnapshots(before, after)).toEqual([]);
    if (isStream(op)) expect(res.text).not.toMatch(/^(event|data|id):/m);
  });

  // Positive control: the same reads with the attacker's own ids succeed, so the 404s above are about ownership.
  test.each(cases.filter(([, op, v]) => op.method === 'get' && v.victimParams.length === pathParams(op).length))('%s, with the attacker\'s own ids, is not a 404', async (_name, op) => {
    const ids = Object.fromEntries(pathParams(op).map((p) => [p.name, paramFor(p.name, attacker, op)]));
    const res = await request(op, ids, attacker.token, undefined);
    expect(res.status).not.toBe(404);
    expect(res.status).toBeLessThan(500);
  });
});

// --- collections --------------------------------------------------------------------------------------------------

// Collections of resources: a `data` array of things with ids (not, say, the times a cron names: listScheduleTimes).
const lists = operations.filter((op) => {
  const data = op.responses['200']?.content?.['application/json']?.schema?.properties?.data;
  return op.method === 'get' && data?.type === 'array' && data.items?.properties?.id !== undefined;
});

describe('collections never show another user\'s items', () => {
  test('the spec walk found the collections', () => {
    expect(lists.map((op) => op.operationId)).toEqual(expect.arrayContaining(['listServers', 'listTokens', 'listServerActions']));
  });

  test.each(lists.map((op) => [`${op.operationId} (${op.path})`, op] as const))('%s', async (_name, op) => {
    const ids = Object.fromEntries(pathParams(op).map((p) => [p.name, paramFor(p.name, attacker, op)]));
    const path = op.path.replace(/\{([^}]+)\}/g, (_m, n: string) => ids[n]);
    const queries = [''];
    for (const p of op.parameters.filter((q) => q.in === 'query')) {
      // A cursor of the victim's: the page after it must still be the attacker's own items.
      const prefix = /^\^(srv|tok|act|evt|whk|dlv|bkp|alr|mem|sch|run|key|fch)_/.exec(p.schema?.pattern ?? '')?.[1];
      if (prefix) for (const s of victim.secrets.filter((v) => v.startsWith(`${prefix}_`))) queries.push(`${p.name}=${s}`);
      for (const value of p.schema?.enum ?? []) queries.push(`${p.name}=${value}`);
    }
    for (const q of queries) {
      const res = await rawRequest(base, { method: 'GET', path: q ? `${path}?${q}` : path, headers: auth(attacker.token) }, agent);
      expect({ q, status: res.status }).toEqual({ q, status: 200 });
      const seen = res.text + JSON.stringify(res.headers);
      const sent = q.split('=')[1];
      expect({ q, leaked: victim.secrets.filter((s) => s !== sent && seen.includes(s)) }).toEqual({ q, leaked: [] });
    }
    // And the attacker does see its own items (the list is not simply empty).
    const own = await rawRequest(base, { method: 'GET', path, headers: auth(attacker.token) }, agent);
    expect(JSON.parse(own.text).data.length).toBeGreaterThan(0);
  });
});

// --- idempotency keys ---------------------------------------------------------------------------------------------

describe('an Idempotency-Key is per user', () => {
  // These create servers, so each gets a service of its own (docs/conventions.md "Tests").
  let own: TestApp;
  beforeEach(async () => {
    own = await createTestApp({ env: { GAME_PORT_RANGE: '27950-27959' } });
  });
  afterEach(async () => {
    await own.close();
    own.expectContract();
  });

  test.each([
    ['the same body', (b: Json) => b],
    ['another body', (b: Json) => ({ ...b, name: 'attacker-other-name' })],
  ])('another user sending the victim\'s key with %s gets its own new server, not the victim\'s answer nor a 422', async (_name, bodyOf) => {
    const victimToken = own.token('victim@example.com');
    const attackerToken = own.token('attacker@example.com');
    const key = `shared-key-${Math.random().toString(36).slice(2)}`;
    const body = { name: 'victim-idempotent-name', plan: 'micro', version: 'flying-squid-1.20' };
    const first = await own.http.post('/v1/servers').set(auth(victimToken)).set('Idempotency-Key', key).send(body);
    expect(first.status).toBe(201);
    const res = await own.http.post('/v1/servers').set(auth(attackerToken)).set('Idempotency-Key', key).send(bodyOf(body));
    expect(res.status).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(res.body.id).not.toBe(first.body.id);
    expect(JSON.stringify(res.body) + JSON.stringify(res.headers)).not.toContain(first.body.id);
    expect((await own.http.get(`/v1/servers/${res.body.id}`).set(auth(attackerToken))).status).toBe(200);
    expect((await own.http.get(`/v1/servers/${first.body.id}`).set(auth(attackerToken))).status).toBe(404);
  });
});
