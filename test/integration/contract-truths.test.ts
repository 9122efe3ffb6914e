// The "smaller truths" of issue 42 §4, through the API as a client sends them: unknown query parameters ignored,
// bodies that are JSON but not an object, merge-patch refused, a cursor naming nothing, a PATCH that changes
// nothing, membership events, the cron `W` and a webhook of every event type (openapi/v1.yaml info "Errors",
// "Pagination", "Evolution"; docs/conventions.md "Collections" and "Writes"). Read-only cases share one app.
import { createTestApp, type TestApp } from '../helpers/app';
import { loadSpec } from '../../src/spec';

let t: TestApp;
let token: string;
const auth = () => ({ Authorization: `Bearer ${token}` });
const eventTypes: string[] = (loadSpec().document as { components: { schemas: Record<string, { enum: string[] }> } }).components.schemas.EventType.enum;

beforeAll(async () => {
  // A webhook on loopback (nothing listens: creating one sends nothing but what `testWebhook` asks for).
  t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  token = t.token('truths@example.com');
});
afterAll(() => t.close());
afterEach(() => t.expectContract());

async function server(name = 'Truths'): Promise<string> {
  const res = await t.http.post('/v1/servers').set(auth()).send({ name, plan: 'small', version: 'flying-squid-1.20' });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** The caller's events of `type`, oldest first. */
async function events(type: string, who = auth()): Promise<Array<{ type: string; data: Record<string, unknown> }>> {
  const res = await t.http.get(`/v1/events?type=${type}&limit=100`).set(who);
  expect(res.status).toBe(200);
  return res.body.data;
}

describe('a query parameter an operation does not declare is ignored; a declared one is still checked', () => {
  test.each([
    ['a cache buster on listServers', '/v1/servers?_=1699999', 200],
    ['a made-up filter on listServers', '/v1/servers?sort=name', 200],
    ['limit on listPlans, which is not paged', '/v1/plans?limit=1', 200],
    ['a prototype key on listVersions', '/v1/versions?__proto__=1', 200],
    ['a cache buster beside a declared limit', '/v1/tokens?limit=1&_=1', 200],
    ['a declared parameter out of range beside an unknown one', '/v1/servers?limit=0&_=1', 400],
    ['a declared parameter given twice', '/v1/servers?limit=1&limit=2', 400],
  ])('%s: %s → %s', async (_name, path, status) => {
    const res = await t.http.get(path).set(auth());
    expect(res.status).toBe(status);
    if (status === 400) expect(res.body.errors).toEqual([expect.objectContaining({ pointer: '/query/limit' })]);
  });
});

describe('a body that is JSON but not an object says so; merge-patch is refused', () => {
  test.each([
    ['null', 'null', /is null; send a JSON object/],
    ['a string', '"Survival"', /is a JSON string; send a JSON object/],
    ['a number', '5', /is a JSON number; send a JSON object/],
    ['a boolean', 'true', /is a JSON boolean; send a JSON object/],
  ])('%s body → 400 validation_failed at /body', async (_name, raw, detail) => {
    const res = await t.http.post('/v1/servers').set(auth()).set('Content-Type', 'application/json').send(raw);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'validation_failed', detail: expect.stringMatching(detail) });
    expect(res.body.errors).toEqual([{ pointer: '/body', detail: 'must be a JSON object' }]);
  });

  test('broken JSON is still malformed_body', async () => {
    const res = await t.http.post('/v1/servers').set(auth()).set('Content-Type', 'application/json').send('nul');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('malformed_body');
  });

  test.each(['application/merge-patch+json', 'application/vnd.api+json'])('a PATCH sent as %s → 415, and changes nothing', async (type) => {
    const id = await server('Patched');
    const res = await t.http.patch(`/v1/servers/${id}`).set(auth()).set('Content-Type', type).send(JSON.stringify({ name: 'Merged' }));
    expect(res.status).toBe(415);
    expect(res.body.code).toBe('unsupported_media_type');
    expect((await t.http.get(`/v1/servers/${id}`).set(auth())).body.name).toBe('Patched');
  });
});

describe('a starting_after that names nothing is a page from where that id sorts, not an error', () => {
  test.each([
    ['listServers', '/v1/servers?starting_after=srv_zzzzzzzzzzzzzzzzzzzz'],
    ['listTokens', '/v1/tokens?starting_after=tok_zzzzzzzzzzzzzzzzzzzz'],
    ['listWebhooks', '/v1/webhooks?starting_after=whk_zzzzzzzzzzzzzzzzzzzz'],
    ['listEvents', '/v1/events?starting_after=evt_zzzzzzzzzzzzzzzzzzzz'],
  ])('%s', async (_name, path) => {
    const res = await t.http.get(path).set(auth());
    expect(res.status).toBe(200);
    // listServers' page also says where names go (ServerList.dns_zone): null here, the service publishes none.
    expect(res.body).toEqual({ data: [], has_more: false, next_cursor: null, ...(path.startsWith('/v1/servers') ? { dns_zone: null } : {}) });
  });
});

test('a PATCH with the values the server already has raises no server.updated; a real change raises one', async () => {
  const id = await server('Unchanged');
  for (const body of [{ name: 'Unchanged' }, { plan: 'small' }, { name: 'Unchanged', plan: 'small' }]) {
    const res = await t.http.patch(`/v1/servers/${id}`).set(auth()).send(body);
    expect([body, res.status, res.body.name]).toEqual([body, 200, 'Unchanged']);
  }
  const mine = async () => (await events('server.updated')).filter((e) => (e.data.server as { id: string }).id === id);
  expect(await mine()).toEqual([]);
  expect((await t.http.patch(`/v1/servers/${id}`).set(auth()).send({ name: 'Changed' })).status).toBe(200);
  expect((await mine()).map((e) => (e.data.server as { name: string }).name)).toEqual(['Changed']);
});

test('sharing raises member.added, member.updated and member.removed, for the owner alone', async () => {
  const id = await server('Shared');
  const added = await t.http.post(`/v1/servers/${id}/members`).set(auth()).send({ email: 'friend@example.com', permissions: ['console'] });
  expect(added.status).toBe(201);
  const member = `/v1/servers/${id}/members/${added.body.id}`;
  const friend = { Authorization: `Bearer ${t.token('friend@example.com')}` };
  // The same permissions again change nothing: no event.
  expect((await t.http.patch(member).set(auth()).send({ permissions: ['console'] })).status).toBe(200);
  expect((await t.http.patch(member).set(auth()).send({ permissions: ['console', 'players'] })).status).toBe(200);
  expect((await t.http.delete(member).set(auth())).status).toBe(204);

  const seen = async (type: string) => (await events(type)).filter((e) => (e.data.member as { id: string }).id === added.body.id);
  expect((await seen('member.added')).map((e) => (e.data.member as { permissions: string[] }).permissions)).toEqual([['console']]);
  expect((await seen('member.updated')).map((e) => (e.data.member as { permissions: string[] }).permissions)).toEqual([['console', 'players']]);
  expect((await seen('member.removed')).map((e) => (e.data.member as { email: string }).email)).toEqual(['friend@example.com']);
  for (const type of ['member.added', 'member.updated', 'member.removed']) expect(await events(type, friend)).toEqual([]);
});

test("a schedule's cron takes W (the nearest weekday) through the API, as its pattern says", async () => {
  const times = await t.http.get('/v1/schedule-times?cron=0%204%2015W%20*%20*&count=3').set(auth());
  expect(times.status).toBe(200);
  expect(times.body.data).toHaveLength(3);
  for (const at of times.body.data as string[]) {
    const day = new Date(at);
    expect([1, 2, 3, 4, 5]).toContain(day.getUTCDay()); // a weekday
    expect(Math.abs(day.getUTCDate() - 15)).toBeLessThanOrEqual(2); // the nearest to the 15th
  }
  const id = await server('Weekday');
  const made = await t.http.post(`/v1/servers/${id}/schedules`).set(auth()).send({ name: 'mid-month', cron: '0 4 15W * *', tasks: [{ type: 'command', command: 'say hi' }] });
  expect(made.status).toBe(201);
  expect(made.body.cron).toBe('0 4 15W * *');
});

test('a webhook can be sent every event type the spec lists', async () => {
  expect(eventTypes).toEqual(expect.arrayContaining(['member.added', 'member.updated', 'member.removed']));
  const res = await t.http.post('/v1/webhooks').set(auth()).send({ url: 'http://127.0.0.1:9/all', event_types: eventTypes });
  expect([res.status, res.body.errors]).toEqual([201, undefined]);
  expect(res.body.event_types).toEqual(eventTypes);
});
