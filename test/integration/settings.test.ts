// Typed settings through the API, without a game: the schema in GET /v1/versions/{id}, settings at create, reads,
// changes, and every refused change (400 with pointers, nothing changed). A running game: test/e2e/settings.test.ts.
import { createTestApp, type TestApp } from '../helpers/app';

let t: TestApp;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });

beforeEach(async () => {
  t = await createTestApp();
  token = t.token();
});
afterEach(async () => {
  await t.runtime.idle();
  await t.finish();
});

async function create(body: Record<string, unknown> = {}) {
  const res = await t.http.post('/v1/servers').set(auth()).send({ name: 'settings', plan: 'micro', version: 'flying-squid-1.20', ...body });
  return res;
}

test('GET /v1/versions/{id} returns the settings schema of its software', async () => {
  const res = await t.http.get('/v1/versions/flying-squid-1.20').set(auth());
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ id: 'flying-squid-1.20', software: 'flying-squid', game_version: '1.20' });
  const byName = Object.fromEntries(res.body.settings.map((s: { name: string }) => [s.name, s]));
  expect(Object.keys(byName)).toEqual(['motd', 'gamemode', 'difficulty', 'pvp', 'view_distance', 'world_type', 'seed', 'max_players']);
  expect(byName.motd).toMatchObject({ restart_required: true, applied_through: ['file'], creation_only: false, plan_limit: null });
  expect(byName.motd.schema).toMatchObject({ type: 'string', default: 'A flying-squid server' });
  expect(byName.difficulty).toMatchObject({ restart_required: false, applied_through: ['file', 'console'] });
  expect(byName.seed).toMatchObject({ creation_only: true });
  expect(byName.max_players).toMatchObject({ applied_through: ['argument'], plan_limit: 'player_slots' });
  const missing = await t.http.get('/v1/versions/flying-squid-0.0.1').set(auth());
  expect(missing.status).toBe(404);
  expect(missing.body.code).toBe('not_found');
});

test('a new server has every default, a seed picked at random, the plan bounds max_players; settings given at create are kept', async () => {
  const plain = await create();
  expect(plain.status).toBe(201);
  const defaults = await t.http.get(`/v1/servers/${plain.body.id}/settings`).set(auth());
  expect(defaults.status).toBe(200);
  expect(defaults.body).toEqual({
    values: { motd: 'A flying-squid server', gamemode: 'creative', difficulty: 'easy', pvp: true, view_distance: 2, world_type: 'diamond_square', seed: expect.any(Number), max_players: 5 },
    restart_pending: [],
  });
  // The seed is the service's pick (random_at_create, within the schema's 1–2147483647): two servers, two seeds.
  const other = await t.http.get(`/v1/servers/${(await create()).body.id}/settings`).set(auth());
  expect(defaults.body.values.seed).toBeGreaterThanOrEqual(1);
  expect(other.body.values.seed).not.toBe(defaults.body.values.seed);
  const chosen = await create({ settings: { motd: 'Hello', seed: 42, world_type: 'superflat', max_players: 3 } });
  expect(chosen.status).toBe(201);
  const read = await t.http.get(`/v1/servers/${chosen.body.id}/settings`).set(auth());
  expect(read.body.values).toMatchObject({ motd: 'Hello', seed: 42, world_type: 'superflat', max_players: 3 });
});

test('PATCH changes what it is given, null puts a default back', async () => {
  const id = (await create()).body.id;
  const res = await t.http.patch(`/v1/servers/${id}/settings`).set(auth()).send({ motd: 'Welcome', difficulty: 'hard', pvp: false });
  expect(res.status).toBe(200);
  expect(res.body.values).toMatchObject({ motd: 'Welcome', difficulty: 'hard', pvp: false, gamemode: 'creative' });
  expect(res.body.restart_pending).toEqual([]); // nothing runs: the next start gets them all
  const reset = await t.http.patch(`/v1/servers/${id}/settings`).set(auth()).send({ motd: null });
  expect(reset.body.values).toMatchObject({ motd: 'A flying-squid server', difficulty: 'hard' });
});

const refused: Array<[string, Record<string, unknown>, string[]]> = [
  ['a motd too long', { motd: 'x'.repeat(101) }, ['/body/motd']],
  ['a control character in the motd', { motd: 'a\u0007b' }, ['/body/motd']],
  ['an unknown game mode', { gamemode: 'god' }, ['/body/gamemode']],
  ['a view distance out of bounds', { view_distance: 99 }, ['/body/view_distance']],
  ['a string for a number', { view_distance: '4' }, ['/body/view_distance']],
  ['more players than the plan has slots', { max_players: 6 }, ['/body/max_players']],
  ['an unknown setting', { colour: 'red' }, ['/body/colour']],
  ['a creation-only setting', { seed: 7 }, ['/body/seed']],
  ['two problems at once, one of them good', { motd: 'ok', pvp: 'yes', gamemode: 1 }, ['/body/pvp', '/body/gamemode']],
];

test.each(refused)('PATCH with %s answers 400 with pointers and changes nothing', async (_name, body, pointers) => {
  const id = (await create({ settings: { motd: 'Before' } })).body.id;
  const res = await t.http.patch(`/v1/servers/${id}/settings`).set(auth()).send(body);
  expect(res.status).toBe(400);
  expect(res.body.code).toBe('validation_failed');
  expect(res.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual([...pointers].sort());
  const after = await t.http.get(`/v1/servers/${id}/settings`).set(auth());
  expect(after.body.values.motd).toBe('Before');
});

test('bad settings at create answer 400 under /body/settings and create nothing', async () => {
  const res = await create({ settings: { gamemode: 'god', max_players: 50 } });
  expect(res.status).toBe(400);
  expect(res.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/body/settings/gamemode', '/body/settings/max_players']);
  expect((await t.http.get('/v1/servers').set(auth())).body.data).toEqual([]);
});

test('an empty change, or a change of another user\'s server, is refused', async () => {
  const id = (await create()).body.id;
  expect((await t.http.patch(`/v1/servers/${id}/settings`).set(auth()).send({})).status).toBe(400);
  const other = t.token('mallory@example.com');
  const res = await t.http.patch(`/v1/servers/${id}/settings`).set({ Authorization: `Bearer ${other}` }).send({ motd: 'mine' });
  expect(res.status).toBe(404);
  expect((await t.http.get(`/v1/servers/${id}/settings`).set({ Authorization: `Bearer ${other}` })).status).toBe(404);
  const readOnly = t.token('alice@example.com', ['servers:read']);
  expect((await t.http.patch(`/v1/servers/${id}/settings`).set({ Authorization: `Bearer ${readOnly}` }).send({ motd: 'x' })).status).toBe(403);
});
