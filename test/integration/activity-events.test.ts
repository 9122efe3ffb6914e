// The activity log's events (issue 38 §4; openapi/v1.yaml PlayerListEvent and SettingsChangedEvent; docs/architecture.md
// "Events and webhooks", "Sharing" and "Who did it"): a player list change and a settings change each raise an
// event in the write's transaction, naming the account and token that made it; a write that changes nothing raises
// none; a member gets them only with the permission that shows what they are about; a secret setting's value is in
// no event. Without a game: test/e2e/webhook-bodies.test.ts causes both on a running flying-squid.
import fs from 'node:fs';
import path from 'node:path';
import { createTestApp, tempDirsOfFile, type TestApp } from '../helpers/app';

let t: TestApp;
let owner: string;
let server: string;
const as = (token: string) => ({ Authorization: `Bearer ${token}` });

interface Shown {
  id: string;
  type: string;
  server_id: string;
  actor: { type: string; user_id?: string; token_id?: string | null; cause?: string };
  data: Record<string, unknown>;
}

/** The reader's events of `type` on the server, oldest first. */
async function events(type: string, token = owner): Promise<Shown[]> {
  const res = await t.http.get(`/v1/events?type=${type}&server_id=${server}&limit=100`).set(as(token));
  expect(res.status).toBe(200);
  return res.body.data;
}

/** The operator's software: the fake game with settings, one of them secret (its schema `writeOnly`). */
const softwareDir = tempDirsOfFile('activity-events');
function software(): string {
  const dir = softwareDir();
  const fixtures = path.join(__dirname, '..', 'runtime', 'fixtures', 'software');
  fs.copyFileSync(path.join(fixtures, 'fake-game.cjs'), path.join(dir, 'fake-game.cjs'));
  const def = JSON.parse(fs.readFileSync(path.join(fixtures, 'fake-game.json'), 'utf8'));
  const userSettings = {
    motd: { schema: { type: 'string', maxLength: 100, default: 'Hello', description: 'The message of the day.' }, restart: true, via: { file: '/motd' } },
    rcon_password: {
      schema: { type: 'string', maxLength: 64, default: '', writeOnly: true, description: 'The remote console password.' },
      restart: true,
      via: { file: '/rcon_password' },
    },
  };
  fs.writeFileSync(path.join(dir, 'fake-game-secret.json'), JSON.stringify({ ...def, id: 'fake-game-secret', user_settings: userSettings }));
  return dir;
}

beforeEach(async () => {
  t = await createTestApp({ software: software() });
  owner = t.token('owner@example.com');
  const made = await t.http.post('/v1/servers').set(as(owner)).send({ name: 'activity', plan: 'micro', version: 'flying-squid-1.20' });
  expect(made.status).toBe(201);
  server = made.body.id;
});
afterEach(async () => {
  await t.runtime.idle();
  await t.finish();
});

/** Shares the server with `email` holding `permissions`; returns the member's token. */
async function member(email: string, permissions: string[]): Promise<string> {
  expect((await t.http.post(`/v1/servers/${server}/members`).set(as(owner)).send({ email, permissions })).status).toBe(201);
  return t.token(email);
}

test('a player list change raises player_list.changed as whoever made it; a change of nothing raises none', async () => {
  const players = await member('mod@example.com', ['players']);
  const reader = await member('reader@example.com', ['console']);
  const ownerId = t.store.users.ensure('owner@example.com').id;
  const modId = t.store.users.ensure('mod@example.com').id;

  const banned = await t.http.put(`/v1/servers/${server}/players/bans/Alex`).set(as(owner));
  expect(banned.status).toBe(200);
  expect((await t.http.put(`/v1/servers/${server}/players/bans/ALEX`).set(as(owner))).status).toBe(200); // already there
  expect((await t.http.delete(`/v1/servers/${server}/players/bans/alex`).set(as(players))).status).toBe(204);
  for (const enabled of [true, true, false]) {
    expect((await t.http.patch(`/v1/servers/${server}/players/whitelist`).set(as(players)).send({ enabled })).status).toBe(200);
  }
  expect((await t.http.put(`/v1/servers/${server}/players/operators/Steve`).set(as(players))).status).toBe(200);

  const seen = await events('player_list.changed');
  expect(seen.map((e) => e.data)).toEqual([
    { list: 'bans', change: 'added', entry: banned.body },
    { list: 'bans', change: 'removed', entry: banned.body }, // as it was: its name's case, its time
    { list: 'whitelist', change: 'enabled', entry: null },
    { list: 'whitelist', change: 'disabled', entry: null },
    { list: 'operators', change: 'added', entry: { name: 'Steve', added_at: expect.any(String) } },
  ]);
  // The owner's own token is shown to the owner; the member's is not (its token_id only to its account).
  expect(seen[0].actor).toEqual({ type: 'user', user_id: ownerId, token_id: expect.stringMatching(/^tok_/) });
  for (const e of seen.slice(1)) expect(e.actor).toEqual({ type: 'user', user_id: modId, token_id: null });
  // The member with `players` has a copy of each (their own token shown to them); one without has none.
  const theirs = await events('player_list.changed', players);
  expect(theirs.map((e) => e.data)).toEqual(seen.map((e) => e.data));
  expect(theirs[1].actor).toEqual({ type: 'user', user_id: modId, token_id: expect.stringMatching(/^tok_/) });
  expect(await events('player_list.changed', reader)).toEqual([]);
});

test('a settings change raises settings.changed with the new values, for the owner and members with `settings`', async () => {
  const settings = await member('admin@example.com', ['settings']);
  const reader = await member('reader@example.com', ['players']);
  const adminId = t.store.users.ensure('admin@example.com').id;
  const patch = (token: string, body: object) => t.http.patch(`/v1/servers/${server}/settings`).set(as(token)).send(body);

  expect((await patch(owner, { difficulty: 'hard', pvp: false })).status).toBe(200);
  expect((await patch(owner, { difficulty: 'hard', pvp: false })).status).toBe(200); // the same values: no event
  const back = await patch(settings, { difficulty: null }); // back to its default
  expect(back.status).toBe(200);

  const seen = await events('settings.changed');
  expect(seen.map((e) => e.data)).toEqual([
    { changed: ['difficulty', 'pvp'], values: { difficulty: 'hard', pvp: false } },
    { changed: ['difficulty'], values: { difficulty: back.body.values.difficulty } },
  ]);
  expect(back.body.values.difficulty).not.toBe('hard');
  expect(seen[0].actor).toMatchObject({ type: 'user', user_id: t.store.users.ensure('owner@example.com').id, token_id: expect.stringMatching(/^tok_/) });
  expect(seen[1].actor).toEqual({ type: 'user', user_id: adminId, token_id: null });
  expect((await events('settings.changed', settings)).map((e) => e.data)).toEqual(seen.map((e) => e.data));
  expect(await events('settings.changed', reader)).toEqual([]);
});

test("a secret setting's change is named in settings.changed, its value in no event", async () => {
  const made = await t.http.post('/v1/servers').set(as(owner)).send({ name: 'secret', plan: 'micro', version: 'fake-game-secret-1.0' });
  expect(made.status).toBe(201);
  server = made.body.id;
  const res = await t.http.patch(`/v1/servers/${server}/settings`).set(as(owner)).send({ motd: 'Welcome', rcon_password: 'hunter2-sekret' });
  expect(res.status).toBe(200);
  const seen = await events('settings.changed');
  expect(seen.map((e) => e.data)).toEqual([{ changed: ['motd', 'rcon_password'], values: { motd: 'Welcome' } }]);
  const all = await t.http.get(`/v1/events?server_id=${server}&limit=100`).set(as(owner));
  expect(JSON.stringify(all.body)).not.toContain('hunter2-sekret');
});
