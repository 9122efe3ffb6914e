import { createTestApp, type TestApp } from '../helpers/app';

// Every test here writes (servers, actions), so each gets its own app and database.
let t: TestApp;
let token: string;
beforeEach(async () => {
  t = await createTestApp();
  token = t.token();
});
afterEach(() => t.finish());

const auth = () => ({ Authorization: `Bearer ${token}` });

async function finished(location: string) {
  for (;;) {
    const res = await t.http.get(location).set(auth());
    if (res.body.status === 'succeeded' || res.body.status === 'failed') return res.body;
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('actions page newest first, and every action is listed exactly once', async () => {
  const server = (await t.http.post('/v1/servers').set(auth()).send({ name: 'a', plan: 'micro', version: 'flying-squid-1.20' })).body;
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    // Stop on a stopped server succeeds at once (a harmless no-op), so these run without a game.
    const res = await t.http.post(`/v1/servers/${server.id}/actions`).set(auth()).send({ type: 'stop' });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ type: 'stop', status: 'pending', error: null, started_at: null, completed_at: null });
    expect(await finished(res.headers.location)).toMatchObject({ status: 'succeeded', error: null });
    ids.push(res.body.id);
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const q: string = cursor ? `?limit=2&starting_after=${cursor}` : '?limit=2';
    const page = await t.http.get(`/v1/servers/${server.id}/actions${q}`).set(auth());
    seen.push(...page.body.data.map((a: { id: string }) => a.id));
    cursor = page.body.next_cursor;
  } while (cursor);
  expect(seen).toEqual([...ids].reverse());
  const all = await t.http.get(`/v1/servers/${server.id}/actions?limit=5`).set(auth());
  expect(all.body).toMatchObject({ has_more: false, next_cursor: null });
});
