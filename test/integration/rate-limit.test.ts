import { createTestApp, type TestApp } from '../helpers/app';

// Every test makes tokens or spends a rate-limit budget, so each gets its own app (and its own budgets).
let t: TestApp;
beforeEach(async () => {
  t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '120' } });
});
afterEach(() => t.finish());

describe('120 requests per minute per user (draft-ietf-httpapi-ratelimit-headers-08)', () => {
  test('the 121st request in a minute is 429 with Retry-After and a problem; another user is unaffected', async () => {
    const a = t.token('a@example.com');
    const b = t.token('b@example.com');
    for (let i = 1; i <= 120; i++) {
      const res = await t.http.get('/v1/plans').set('Authorization', `Bearer ${a}`);
      expect(res.status).toBe(200);
      if (i === 1) {
        expect(res.headers['ratelimit-policy']).toMatch(/^"120-in-1min"; q=120; w=60; pk=:[A-Za-z0-9+/=]+:$/);
        expect(res.headers.ratelimit).toMatch(/^"120-in-1min"; r=119; t=\d+$/);
      }
    }
    const over = await t.http.get('/v1/plans').set('Authorization', `Bearer ${a}`);
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('rate_limited');
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(over.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(over.headers.ratelimit).toMatch(/r=0;/);

    const other = await t.http.get('/v1/plans').set('Authorization', `Bearer ${b}`);
    expect(other.status).toBe(200);
    expect(other.headers.ratelimit).toMatch(/r=119;/);
  });

  test('requests without a valid token share a budget per client address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 121; i++) {
      statuses.push((await t.http.get('/v1/plans').set('Authorization', 'Bearer gsh_guess' + i)).status);
    }
    expect(statuses.slice(0, 120).every((s) => s === 401)).toBe(true);
    expect(statuses[120]).toBe(429);
  });

  test('two tokens of one user share one budget, and the headers show what is left of it', async () => {
    const [a, b] = [t.token('twice@example.com'), t.token('twice@example.com')];
    const bob = t.token('bob@example.com');
    const left: number[] = [];
    for (let i = 0; i < 120; i++) {
      const res = await t.http.get('/v1/plans').set('Authorization', `Bearer ${i % 2 ? a : b}`);
      expect(res.status).toBe(200);
      left.push(Number(/r=(\d+)/.exec(res.headers.ratelimit)![1]));
    }
    // One count for both tokens: 119, 118, … 0, whichever token asked.
    expect(left).toEqual(Array.from({ length: 120 }, (_, i) => 119 - i));
    const policies = await Promise.all([a, b].map((x) => t.http.get('/v1/plans').set('Authorization', `Bearer ${x}`)));
    expect(policies.map((r) => r.status)).toEqual([429, 429]);
    expect(policies[0].headers['ratelimit-policy']).toBe(policies[1].headers['ratelimit-policy']);
    expect(policies[0].body.detail).toMatch(/^Your tokens together may make 120 requests per minute/);
    // A token minted now adds no budget.
    const c = await t.http.post('/v1/tokens').set('Authorization', `Bearer ${bob}`).send({ name: 'c', scopes: ['servers:read'] });
    expect(c.status).toBe(201);
    const other = await t.http.get('/v1/plans').set('Authorization', `Bearer ${c.body.token}`);
    expect(other.status).toBe(200);
    expect(other.headers.ratelimit).toMatch(/r=118;/); // bob's second request, by his new token
  });

  test('the key is the user, never a token or its secret', async () => {
    const c = t.token('c@example.com');
    const res = await t.http.get('/v1/plans').set('Authorization', `Bearer ${c}`);
    const pk = /pk=:([^:]+):/.exec(res.headers['ratelimit-policy'])![1];
    expect(Buffer.from(pk, 'base64').toString()).not.toContain(c.slice(4, 12));
    expect(res.headers['ratelimit-policy']).not.toContain(c);
    const again = await t.http.get('/v1/plans').set('Authorization', `Bearer ${t.token('c@example.com')}`);
    expect(again.headers['ratelimit-policy']).toBe(res.headers['ratelimit-policy']);
  });
});
