import { createTestApp, type TestApp } from '../helpers/app';
import { createIdempotencyRepo, IN_FLIGHT_STALE_MS } from '../../src/store/idempotency-repo';
import crypto from 'node:crypto';
import { manualClock } from '../helpers/app';
import { sql as idempotentAnswers } from '../../src/store/migrations/030-idempotent-answers';

let t: TestApp;
let token: string;
const clock = manualClock();
beforeAll(async () => {
  t = await createTestApp({ clock });
  token = t.token();
});
afterAll(() => t.close());
afterEach(() => t.expectContract());

const body = { name: 'Retry me', plan: 'micro', version: 'flying-squid-1.20' };
const post = (key: string, b: object = body) =>
  t.http.post('/v1/servers').set('Authorization', `Bearer ${token}`).set('Idempotency-Key', key).send(b);
const count = async () => (await t.http.get('/v1/servers?limit=100').set('Authorization', `Bearer ${token}`)).body.data.length;

describe('Idempotency-Key on POST /v1/servers', () => {
  test('the same key and body replays the first answer: same server, nothing new created', async () => {
    const first = await post('key-1');
    const again = await post('key-1');
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(await count()).toBe(1);
  });

  test('the same key with another body is 422 and creates nothing', async () => {
    const res = await post('key-1', { ...body, name: 'Different' });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('idempotency_key_reused');
    expect(await count()).toBe(1);
  });

  test('a key stored by an earlier release (the server alone as its answer) replays after the upgrade', async () => {
    // As createServer stored it before it answered through idempotent(): its fields hashed, the server as the body.
    const earlier = t.token('earlier@example.com');
    const send = () => t.http.post('/v1/servers').set('Authorization', `Bearer ${earlier}`).set('Idempotency-Key', 'key-before').send(body);
    const first = await send();
    const hash = crypto.createHash('sha256').update(JSON.stringify([body.name, body.plan, body.version])).digest('hex');
    const where = "key = 'key-before' AND user_id = (SELECT id FROM users WHERE email = 'earlier@example.com')";
    expect(t.db.prepare(`SELECT request_hash FROM idempotency_keys WHERE ${where}`).pluck().get()).toBe(hash);
    t.db.prepare(`UPDATE idempotency_keys SET response_body = ? WHERE ${where}`).run(JSON.stringify(first.body));
    t.db.exec(idempotentAnswers); // the upgrade's migration
    const again = await send();
    expect([again.status, again.headers['idempotent-replayed'], again.headers.location, again.body]).toEqual([201, 'true', `/v1/servers/${first.body.id}`, first.body]);
  });

  test('keys are per user', async () => {
    const other = t.token('other@example.com');
    const res = await t.http.post('/v1/servers').set('Authorization', `Bearer ${other}`).set('Idempotency-Key', 'key-1').send(body);
    expect(res.status).toBe(201);
    expect(await count()).toBe(1);
  });

  test('a retry while the first is still in flight is 409; a claim abandoned by a crash is taken over', async () => {
    // Another instance on the same database holds the key, mid-request.
    const users = t.db.prepare('SELECT id FROM users WHERE email = ?').get('alice@example.com') as { id: string };
    const repo = createIdempotencyRepo(t.db, clock);
    const { createHash } = await import('node:crypto');
    const hash = createHash('sha256').update(JSON.stringify([body.name, body.plan, body.version])).digest('hex');
    expect(repo.claim(users.id, 'key-2', hash)).toEqual({ kind: 'new' });
    const res = await post('key-2');
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('idempotency_in_flight');
    clock.advance(IN_FLIGHT_STALE_MS);
    expect((await post('key-2')).status).toBe(201);
    expect(await count()).toBe(2);
  });

  test('after 24 hours the key is forgotten and a retry creates again', async () => {
    clock.advance(24 * 3600 * 1000);
    const res = await post('key-1');
    expect(res.status).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(await count()).toBe(3);
    // Expired keys are purged from the table, not just ignored: the other user's day-old key is gone too.
    const other = t.db.prepare("SELECT COUNT(*) AS n FROM idempotency_keys k JOIN users u ON u.id = k.user_id WHERE u.email = 'other@example.com'").get() as { n: number };
    expect(other.n).toBe(0);
  });

  test('concurrent retries with one key create exactly one server', async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, () => post('key-3')));
    const ids = new Set(answers.filter((r) => r.status === 201).map((r) => r.body.id));
    expect(answers.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    expect(ids.size).toBe(1);
    expect(await count()).toBe(4);
  });
});
