import crypto from 'node:crypto';
import http from 'node:http';
import fc from 'fast-check';
import { createTestApp, type TestApp } from '../helpers/app';
import { plans } from '../../src/catalog/plans';
import { createTokensRepo } from '../../src/store/tokens-repo';
import { diffSnapshots, rawRequest, snapshot, snapshotter, specOperations, type Json, type RawRequest, type RawResponse, type SpecOperation } from './helpers';
import type { Hints } from './arbitraries';
import { fixtureKeeper, type UserFixture } from './fixtures';
import { caseArb, render, type Case } from './fuzz-cases';

/**
 * Spec-driven hostile input. For every operation of openapi/v1.yaml (read at run time), fast-check builds requests
 * from the operation's own schemas (path, query and header parameters, request body), valid first, then mutated:
 * wrong types, missing and extra fields, prototype keys at any depth, huge/empty/odd-unicode strings, traversal
 * and SQL-looking text, deep nesting, oversized and malformed bodies, wrong content types and encodings, repeated
 * and odd query values, bad, foreign, expired and revoked tokens, other methods. Every answer must be:
 * - never a 5xx;
 * - for a 4xx, an application/problem+json document with a `code` from the spec's enum (and, through the
 *   contract checker every test app runs, one that matches the spec);
 * - free of any token secret it was not asked to show;
 * - for a rejected request (4xx), no change to any table row (VOLATILE_COLUMNS aside) or server file;
 * and Object.prototype stays clean.
 *
 * No fuzzed request may start a real game. A body that could parse as a start or restart (it contains "tart" or a
 * \u escape, or is sent as UTF-7: an action, or a schedule's tasks) is always aimed at a server kept in state
 * `deleting`, where requestAction refuses every action with 409 before recording anything and no schedule runs;
 * the fixture schedule that runServerSchedule runs only stops; every other server the fuzzer reaches is stopped, where stop and
 * kill are no-ops. A backstop checks after every case that no start/restart action exists and no game process runs.
 *
 * The budget is a count, FUZZ_RUNS cases per operation (100: 6,700 in all), so a seed replays the same cases on any
 * machine, and a loaded CI machine runs as many as an idle one. (A 60 s time box ran 3,100–5,600 cases in CI and
 * 11,000 alone.) FUZZ_TIME_MS bounds the whole run as a backstop, shared evenly among the operations.
 *
 * Reproduce: FUZZ_SEED=<printed seed> npx jest test/security/fuzz.test.ts (each operation's seed is derived from it;
 * fast-check prints the counterexample, its seed and path on failure). FUZZ_RUNS and FUZZ_TIME_MS scale the run.
 */

const { operations, problemCodes } = specOperations();
const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : crypto.randomInt(0, 2 ** 31 - 1);
const TOTAL_MS = Number(process.env.FUZZ_TIME_MS ?? 300_000);
const RUNS_PER_OP = Number(process.env.FUZZ_RUNS ?? 100);
const MS_PER_OP = Math.floor(TOTAL_MS / operations.length);
console.log(`fuzz: FUZZ_SEED=${SEED}; ${operations.length} operations × ${RUNS_PER_OP} cases, at most ${MS_PER_OP} ms each (rerun: FUZZ_SEED=${SEED} npx jest test/security/fuzz.test.ts)`);

const seedFor = (operationId: string) => (SEED ^ crypto.createHash('sha256').update(operationId).digest().readInt32LE(0)) | 0;

let t: TestApp;
let base: string;
let close: () => Promise<void>;
let keeper: ReturnType<typeof fixtureKeeper>;
let A: UserFixture; // the caller
let B: UserFixture; // someone else
let expiredSecret: string;
let revokedSecret: string;
let hints: Hints;
let fingerprint: () => ReturnType<typeof snapshot>; // snapshot(t.db, t.dir), taken again only after a write
let countStarts: () => unknown;
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
const casesRun: Record<string, number> = {};
const statuses: Record<string, number> = {};

/** A fresh service with two users' fixtures: every operation's fuzzing gets its own (docs/conventions.md "Tests"). */
async function setup() {
  // Every webhook host resolves to one public address without asking DNS; no dispatcher runs, so nothing is sent.
  t = await createTestApp({ env: { GAME_PORT_RANGE: '27800-27839' }, webhooks: { lookup: async () => [{ address: '93.184.215.14', family: 4 }] } });
  ({ base, close } = await t.listen());
  keeper = fixtureKeeper(t);
  fingerprint = snapshotter(t.db, t.dir);
  const starts = t.db.prepare("SELECT count(*) FROM actions WHERE type IN ('start', 'restart')").pluck();
  countStarts = () => starts.get();
  A = await keeper.user('fuzz-a@example.com', true);
  B = await keeper.user('fuzz-b@example.com');
  const past = { now: () => Date.now() - 86_400_000 };
  expiredSecret = createTokensRepo(t.db, past, t.store.events).create(A.userId, { name: 'expired', scopes: ['servers:read'], expiresInSeconds: 60 }).token;
  const revoked = createTokensRepo(t.db, { now: () => Date.now() }, t.store.events).create(A.userId, { name: 'revoked', scopes: ['servers:read'] });
  createTokensRepo(t.db, { now: () => Date.now() }, t.store.events).revoke(A.userId, revoked.id);
  revokedSecret = revoked.token;
  const auth = { Authorization: `Bearer ${A.tokens.caller.secret}` };
  const versions = await rawRequest(base, { method: 'GET', path: '/v1/versions', headers: auth });
  const versionIds = (JSON.parse(versions.text).data as { id: string }[]).map((v) => v.id);
  const detail = await rawRequest(base, { method: 'GET', path: `/v1/versions/${versionIds[0]}`, headers: auth });
  hints = {
    plan: plans.map((p) => p.id),
    version: versionIds,
    // Settings maps (SettingsChange) use real setting names most of the time, so valid changes get past the names.
    '*key': (JSON.parse(detail.text).settings as { name: string }[]).map((d) => d.name),
    // A few keys, so the fuzzer reuses them: replays, and the same key with another body (422), happen too.
    'Idempotency-Key': ['fuzz-key-1', 'fuzz-key-2', 'fuzz-key-3'],
  };
}

async function teardown() {
  await close?.();
  await t?.close();
}

afterAll(() => {
  console.log(`fuzz: FUZZ_SEED=${SEED}; ${Object.values(casesRun).reduce((a, b) => a + b, 0)} cases: ${JSON.stringify(casesRun)}; statuses ${JSON.stringify(statuses)}`);
  agent.destroy();
});
afterEach(() => t.expectContract());

// --- one case ---------------------------------------------------------------------------------------------------

function describeExchange(req: RawRequest, res: RawResponse | undefined, note: string): string {
  const body = req.body === undefined ? '' : Buffer.isBuffer(req.body) ? req.body.toString('utf8') : req.body;
  return [
    `request: ${req.method} ${req.path.slice(0, 500)} [${note}]`,
    `headers: ${JSON.stringify(req.headers).slice(0, 500)}`,
    `body (${body.length} chars): ${JSON.stringify(body.slice(0, 500))}`,
    res ? `answer: ${res.status} ${String(res.headers['content-type'])} ${res.text.slice(0, 600)}` : 'answer: none',
  ].join('\n  ');
}

const STACK_TRACE = /\bat .+\.(ts|js|cjs):\d+/;
const protoKeys = () => Object.getOwnPropertyNames(Object.prototype).join(',');
const PROTO_BEFORE = protoKeys();

async function runCase(op: SpecOperation, c: Case): Promise<void> {
  const { req, note } = render(op, c, { A, B, expiredSecret, revokedSecret });
  // Nothing that an earlier, accepted request started (an install, an action, a deletion) may still be running
  // when the "before" fingerprint is taken, or its work would be charged to this request.
  await keeper.settle();
  const before = fingerprint();
  t.contractFailures.length = 0;
  let res: RawResponse | undefined;
  const problems: string[] = [];
  try {
    res = await rawRequest(base, req, agent);
    await new Promise((r) => setImmediate(r)); // the contract checker runs on 'finish'
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    if (res.status >= 500 || res.status < 200) problems.push(`status ${res.status}`);
    problems.push(...t.contractFailures.splice(0));
    if (res.status >= 400 && req.method !== 'HEAD') {
      if (!/^application\/problem\+json/.test(String(res.headers['content-type']))) problems.push('a 4xx that is not application/problem+json');
      let doc: Json;
      try {
        doc = JSON.parse(res.text);
      } catch {
        problems.push('a problem body that is not JSON');
      }
      if (doc && !problemCodes.includes(doc.code)) problems.push(`code ${JSON.stringify(doc?.code)} is not in the spec's enum`);
      if (doc && doc.status !== res.status) problems.push(`problem status ${doc?.status} ≠ HTTP status ${res.status}`);
    }
    if (STACK_TRACE.test(res.text)) problems.push('a stack trace in the answer');
    const everything = res.text + JSON.stringify(res.headers);
    for (const u of [A, B]) for (const tok of Object.values(u.tokens)) if (everything.includes(tok.secret)) problems.push('a token secret in the answer');
    if (res.status >= 400) {
      await t.runtime.idle(); // anything the rejected request started (it should start nothing) shows up in "after"
      const after = fingerprint();
      if (after.hash !== before.hash) problems.push(`a rejected request changed state: ${diffSnapshots(before, after).join('; ')}`);
    }
    if (protoKeys() !== PROTO_BEFORE || ({} as Json).polluted !== undefined) problems.push('Object.prototype was polluted');
    if (countStarts() !== 0 || t.runtime.doors.live().length > 0) problems.push('a game was asked to start (start guard failed)');
  } finally {
    await keeper.settle();
    await keeper.repair(A);
    await keeper.repair(B);
  }
  casesRun[op.operationId] = (casesRun[op.operationId] ?? 0) + 1;
  if (problems.length) throw new Error(`${problems.map((p) => p.slice(0, 600)).join('\n  ')}\n  ${describeExchange(req, res, note)}`);
}

describe.each(operations.map((op) => [`${op.operationId} (${op.method.toUpperCase()} ${op.path})`, op] as const))('%s', (_name, op) => {
  beforeEach(setup, 60_000);
  afterEach(teardown);
  test('hostile requests: no 5xx, a problem document for every 4xx, nothing changed by a rejected request', async () => {
    // interruptAfterTimeLimit stops *waiting* for the case in flight at the time limit; it does not stop the case.
    // That case (its request, settle and repair) must end before the next operation's first snapshot, and a
    // problem it finds must fail this test, not vanish.
    let last: Promise<void> = Promise.resolve();
    try {
      await fc.assert(
        fc.asyncProperty(caseArb(op, hints), (c) => (last = runCase(op, c))),
        { seed: seedFor(op.operationId), numRuns: RUNS_PER_OP, plugins: [fc.interruptAfterTimeLimit(MS_PER_OP)] },
      );
    } catch (err) {
      await last.catch(() => undefined);
      throw err;
    }
    await last;
    expect(casesRun[op.operationId]).toBeGreaterThan(0);
  }, MS_PER_OP + 60_000);
});

/**
 * Inputs the fuzzer found that broke the rules above, pinned so they stay fixed whatever the seed. Each names the
 * operation it targets; ids are the fixtures'. Expectation for all: a documented status below 500, a problem
 * document for a 4xx, and no change of state.
 */
describe('pinned hostile inputs (found by the fuzzer)', () => {
  // Every pinned request is refused and each test checks that nothing changed, so they share one service.
  beforeAll(setup, 60_000);
  afterAll(teardown);
  const own = () => `Bearer ${A.tokens.caller.secret}`;
  const json = { 'Content-Type': 'application/json' };
  const cases: Array<[string, () => RawRequest]> = [
    // body-parser inflates Content-Encoding; a body that is not what it claims is a zlib error without `type`,
    // which app.ts toAppError turns into a 500.
    ['gzip Content-Encoding with a body that is not gzip', () => ({ method: 'POST', path: '/v1/tokens', headers: { Authorization: own(), ...json, 'Content-Encoding': 'gzip' }, body: '{"name":"x","scopes":["servers:read"]}' })],
    ['deflate Content-Encoding with a body that is not deflate', () => ({ method: 'POST', path: '/v1/servers', headers: { Authorization: own(), ...json, 'Content-Encoding': 'deflate' }, body: '{"name":"x","plan":"micro","version":"flying-squid-1.20"}' })],
    ['br Content-Encoding with a body that is not brotli', () => ({ method: 'PATCH', path: `/v1/servers/${A.server}`, headers: { Authorization: own(), ...json, 'Content-Encoding': 'br' }, body: '{"name":"renamed"}' })],
    ['gzip garbage on a GET', () => ({ method: 'GET', path: '/v1/plans', headers: { Authorization: own(), ...json, 'Content-Encoding': 'gzip' }, body: 'not gzip' })],
    // Bodies are parsed for every method, so operations that take none answer 400/415, which they do not document.
    ['malformed JSON body on a GET that takes no body', () => ({ method: 'GET', path: '/v1/plans', headers: { Authorization: own(), ...json }, body: '{' })],
    ['unknown Content-Encoding on a GET', () => ({ method: 'GET', path: `/v1/servers/${A.server}/players`, headers: { Authorization: own(), ...json, 'Content-Encoding': 'x-unknown' }, body: '{}' })],
    ['unsupported charset on a GET', () => ({ method: 'GET', path: `/v1/servers/${A.server}/console`, headers: { Authorization: own(), 'Content-Type': 'application/json; charset=ebcdic' }, body: '{}' })],
    // listPlans and listVersions document no 400, yet an unknown query parameter is a 400.
    ['unknown query parameter on listPlans', () => ({ method: 'GET', path: '/v1/plans?limit=1', headers: { Authorization: own() } })],
    ['prototype key as a query parameter on listVersions', () => ({ method: 'GET', path: '/v1/versions?__proto__=1', headers: { Authorization: own() } })],
    // The problem's `instance` (and not_found's `detail`) echo the whole path, past the spec's maxLength of 2000.
    ['a 3,000-character path parameter', () => ({ method: 'GET', path: `/v1/servers/srv_${'a'.repeat(3000)}`, headers: { Authorization: own() } })],
    ['a 3,000-character unknown path', () => ({ method: 'GET', path: `/v1/${'a'.repeat(3000)}`, headers: { Authorization: own() } })],
  ];
  test.each(cases)('%s', async (_name, make) => {
    const req = make();
    await keeper.settle();
    const before = snapshot(t.db, t.dir);
    t.contractFailures.length = 0;
    const res = await rawRequest(base, req, agent);
    await new Promise((r) => setImmediate(r));
    const where = describeExchange(req, res, 'pinned');
    expect({ where, contract: t.contractFailures.splice(0).map((f) => f.slice(0, 300)) }).toEqual({ where, contract: [] });
    expect({ where, status: res.status < 500 }).toEqual({ where, status: true });
    if (res.status >= 400) {
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(problemCodes).toContain(JSON.parse(res.text).code);
      expect(diffSnapshots(before, snapshot(t.db, t.dir))).toEqual([]);
    }
  });
});
