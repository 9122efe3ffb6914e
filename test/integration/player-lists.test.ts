// Player lists through the API, without a game: reads, idempotent adds whatever the case, removals, the
// whitelist's switch, and what is refused (400 with pointers, 404, nothing changed). Real clients:
// test/e2e/player-lists.test.ts.
import path from 'node:path';
import { createTestApp, type TestApp } from '../helpers/app';

let t: TestApp;
let token: string;
let id: string;
const auth = () => ({ Authorization: `Bearer ${token}` });

beforeEach(async () => {
  t = await createTestApp({ software: path.join(__dirname, '..', 'runtime', 'fixtures', 'software') });
  token = t.token();
  id = (await t.http.post('/v1/servers').set(auth()).send({ name: 'lists', plan: 'micro', version: 'flying-squid-1.20' })).body.id;
});
afterEach(async () => {
  await t.runtime.idle();
  await t.finish();
});

test('names go on and off a list, whatever their case; the whitelist has a switch', async () => {
  const first = await t.http.put(`/v1/servers/${id}/players/operators/Steve`).set(auth());
  expect(first.status).toBe(200);
  expect(first.body.name).toBe('Steve');
  const again = await t.http.put(`/v1/servers/${id}/players/operators/STEVE`).set(auth());
  expect(again.body).toEqual(first.body); // already there: answered as it is
  expect((await t.http.get(`/v1/servers/${id}/players/operators`).set(auth())).body).toEqual({ enabled: null, data: [first.body] });
  expect((await t.http.get(`/v1/servers/${id}/players/whitelist`).set(auth())).body).toEqual({ enabled: false, data: [] });
  expect((await t.http.patch(`/v1/servers/${id}/players/whitelist`).set(auth()).send({ enabled: true })).body.enabled).toBe(true);
  expect((await t.http.delete(`/v1/servers/${id}/players/operators/steve`).set(auth())).status).toBe(204);
  const gone = await t.http.delete(`/v1/servers/${id}/players/operators/steve`).set(auth());
  expect(gone.status).toBe(404);
  expect(gone.body.code).toBe('not_found');
});

const refused: Array<[string, { method: 'put' | 'patch' | 'get'; path: string; body?: object; status: number; pointer?: string }]> = [
  ['a name with a space', { method: 'put', path: 'whitelist/bad%20name', status: 400, pointer: '/path/name' }],
  ['a name too long', { method: 'put', path: `whitelist/${'a'.repeat(17)}`, status: 400, pointer: '/path/name' }],
  ['an unknown list', { method: 'get', path: 'admins', status: 400, pointer: '/path/list' }],
  // Only the whitelist has a switch: the schema's rule (updateServerPlayerList's list is SwitchablePlayerListName).
  ['a switch for the bans', { method: 'patch', path: 'bans', body: { enabled: true }, status: 400, pointer: '/path/list' }],
  ['a switch that is not a boolean', { method: 'patch', path: 'whitelist', body: { enabled: 'yes' }, status: 400, pointer: '/body/enabled' }],
];

test.each(refused)('%s is refused and changes nothing', async (_name, c) => {
  const req = t.http[c.method](`/v1/servers/${id}/players/${c.path}`).set(auth());
  const res = c.body ? await req.send(c.body) : await req;
  expect(res.status).toBe(c.status);
  if (c.pointer) expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(c.pointer);
  for (const list of ['whitelist', 'bans']) {
    expect((await t.http.get(`/v1/servers/${id}/players/${list}`).set(auth())).body).toMatchObject({ data: [] });
  }
  expect((await t.http.get(`/v1/servers/${id}/players/whitelist`).set(auth())).body.enabled).toBe(false);
});

test('software without player lists answers 404 for them', async () => {
  const fake = (await t.http.post('/v1/servers').set(auth()).send({ name: 'fake', plan: 'micro', version: 'fake-game-1.0' })).body.id;
  const res = await t.http.put(`/v1/servers/${fake}/players/whitelist/Steve`).set(auth());
  expect(res.status).toBe(404);
  expect(res.body.detail).toMatch(/fake-game has no whitelist/);
});
