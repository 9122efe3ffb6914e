import { createTestApp, type TestApp } from '../helpers/app';

let t: TestApp;
let token: string;

async function startApp() {
  t = await createTestApp();
  token = t.token();
}

const good = { name: 'Survival', plan: 'small', version: 'flying-squid-1.20' };

// Each case: what is sent → the exact status, code and (where the problem is in the request) the pointer.
const cases: Array<[string, { method?: 'post' | 'get' | 'patch'; path?: string; body?: unknown; raw?: string; type?: string; headers?: Record<string, string>; want: { status: number; code: string; pointer?: string } }]> = [
  ['missing name', { body: { plan: 'small', version: good.version }, want: { status: 400, code: 'validation_failed', pointer: '/body/name' } }],
  ['empty name', { body: { ...good, name: '' }, want: { status: 400, code: 'validation_failed', pointer: '/body/name' } }],
  ['name too long', { body: { ...good, name: 'x'.repeat(65) }, want: { status: 400, code: 'validation_failed', pointer: '/body/name' } }],
  ['name with control character', { body: { ...good, name: 'a\u0007b' }, want: { status: 400, code: 'validation_failed', pointer: '/body/name' } }],
  ['name with trailing space', { body: { ...good, name: 'abc ' }, want: { status: 400, code: 'validation_failed', pointer: '/body/name' } }],
  ['name is a number', { body: { ...good, name: 5 }, want: { status: 400, code: 'validation_failed', pointer: '/body/name' } }],
  ['unknown field', { body: { ...good, owner: 'x' }, want: { status: 400, code: 'validation_failed', pointer: '/body/owner' } }],
  ['prototype pollution key', { raw: JSON.stringify(good).replace('{', '{"__proto__":{"admin":true},'), want: { status: 400, code: 'validation_failed', pointer: '/body/__proto__' } }],
  ['missing plan', { body: { name: 'a', version: good.version }, want: { status: 400, code: 'validation_failed', pointer: '/body/plan' } }],
  ['plan with bad characters', { body: { ...good, plan: '../etc' }, want: { status: 400, code: 'validation_failed', pointer: '/body/plan' } }],
  ['unknown plan', { body: { ...good, plan: 'huge' }, want: { status: 422, code: 'unknown_plan', pointer: '/body/plan' } }],
  ['unknown version', { body: { ...good, version: 'flying-squid-0.0.1' }, want: { status: 422, code: 'unknown_version', pointer: '/body/version' } }],
  ['unknown software', { body: { ...good, version: 'paper-1.20.4' }, want: { status: 422, code: 'unknown_version', pointer: '/body/version' } }],
  ['version naming no game version', { body: { ...good, version: 'flying-squid' }, want: { status: 422, code: 'unknown_version', pointer: '/body/version' } }],
  ['version without a dash', { body: { ...good, version: 'vanilla' }, want: { status: 400, code: 'validation_failed', pointer: '/body/version' } }],
  ['body is an array', { body: [good], want: { status: 400, code: 'validation_failed', pointer: '/body' } }],
  ['malformed JSON', { raw: '{"name": "a",', want: { status: 400, code: 'malformed_body', pointer: '/body' } }],
  ['empty body', { raw: '', want: { status: 400, code: 'validation_failed', pointer: '/body/name' } }],
  ['text/plain body', { raw: JSON.stringify(good), type: 'text/plain', want: { status: 415, code: 'unsupported_media_type' } }],
  ['form body', { raw: 'name=a&plan=small', type: 'application/x-www-form-urlencoded', want: { status: 415, code: 'unsupported_media_type' } }],
  ['body over 64 KiB', { body: { ...good, name: 'x'.repeat(70_000) }, want: { status: 413, code: 'payload_too_large' } }],
  ['idempotency key too long', { body: good, headers: { 'Idempotency-Key': 'k'.repeat(256) }, want: { status: 400, code: 'validation_failed', pointer: '/header/idempotency-key' } }],
  ['limit zero', { method: 'get', path: '/v1/servers?limit=0', want: { status: 400, code: 'validation_failed', pointer: '/query/limit' } }],
  ['limit over 100', { method: 'get', path: '/v1/servers?limit=101', want: { status: 400, code: 'validation_failed', pointer: '/query/limit' } }],
  ['limit not a number', { method: 'get', path: '/v1/servers?limit=ten', want: { status: 400, code: 'validation_failed', pointer: '/query/limit' } }],
  ['limit twice', { method: 'get', path: '/v1/servers?limit=1&limit=2', want: { status: 400, code: 'validation_failed', pointer: '/query/limit' } }],
  ['unknown state filter', { method: 'get', path: '/v1/servers?state=flying', want: { status: 400, code: 'validation_failed', pointer: '/query/state' } }],
  ['cursor of the wrong kind', { method: 'get', path: '/v1/servers?starting_after=tok_abc', want: { status: 400, code: 'validation_failed', pointer: '/query/starting_after' } }],
  ['server id with traversal', { method: 'get', path: '/v1/servers/..%2F..%2Fetc', want: { status: 400, code: 'validation_failed', pointer: '/path/server_id' } }],
  ['server id of the wrong kind', { method: 'get', path: '/v1/servers/tok_abc', want: { status: 400, code: 'validation_failed', pointer: '/path/server_id' } }],
  ['SQL-looking server id', { method: 'get', path: "/v1/servers/srv_1'%20OR%20'1'='1", want: { status: 400, code: 'validation_failed', pointer: '/path/server_id' } }],
  ['empty patch', { method: 'patch', path: '/v1/servers/srv_abc', body: {}, want: { status: 400, code: 'validation_failed', pointer: '/body' } }],
  ['unknown route', { method: 'get', path: '/v1/nothing', want: { status: 404, code: 'not_found' } }],
  ['malformed percent-encoding in the path', { method: 'get', path: '/v1/servers/srv_%E0%A4%A', want: { status: 400, code: 'validation_failed', pointer: '/path' } }],
  // A console command is one line of text: any control character could drive a terminal that shows the console.
  ...([
    ['ESC (an OSC title)', '\u001b]0;pwned\u0007'],
    ['BEL', 'say \u0007'],
    ['NUL', 'say a\u0000b'],
    ['tab', 'say\ta'],
    ['DEL', 'say \u007f'],
    ['C1 CSI', 'say \u009b31m'],
    ['line separator', 'say a\u2028stop'],
  ] as const).map(([what, command]): (typeof cases)[number] => [
    `command with ${what}`,
    { path: '/v1/servers/srv_abc/console', body: { command }, want: { status: 400, code: 'validation_failed', pointer: '/body/command' } },
  ]),
  ['name with an unpaired surrogate', { raw: '{"name":"a\\ud800b","plan":"small","version":"flying-squid-1.20"}', want: { status: 400, code: 'validation_failed', pointer: '/body/name' } }],
];

describe('bad input gets a problem document with a pointer and changes nothing', () => {
  // Read-only: every request here is refused and writes nothing (the table checks the list stays empty): one app.
  beforeAll(startApp);
  afterAll(() => t.close());
  afterEach(() => t.expectContract());

  test.each(cases)('%s', async (_name, { method = 'post', path = '/v1/servers', body, raw, type, headers, want }) => {
    let req = t.http[method](path).set('Authorization', `Bearer ${token}`);
    for (const [k, v] of Object.entries(headers ?? {})) req = req.set(k, v);
    if (raw !== undefined) req = req.set('Content-Type', type ?? 'application/json').send(raw);
    else if (body !== undefined) req = req.send(body as object);
    const res = await req;
    expect(res.status).toBe(want.status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: want.status, code: want.code, type: expect.stringContaining(want.code) });
    expect(res.text).not.toMatch(/\bat .+\.(ts|js):\d+/); // never a stack trace
    if (want.pointer) expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(want.pointer);
    const list = await t.http.get('/v1/servers').set('Authorization', `Bearer ${token}`);
    expect(list.body.data).toEqual([]);
  });

  test('every problem in a request is reported at once', async () => {
    const res = await t.http
      .post('/v1/servers')
      .set('Authorization', `Bearer ${token}`)
      .send({ name: '', plan: 'A B', extra: 1 });
    expect(res.status).toBe(400);
    const pointers = [...new Set(res.body.errors.map((e: { pointer: string }) => e.pointer))].sort();
    expect(pointers).toEqual(['/body/extra', '/body/name', '/body/plan', '/body/version']);
  });

  test('headers over 16 KiB get a problem document from the HTTP parser', async () => {
    const server = await t.listen();
    try {
      const res = await fetch(`${server.base}/v1/servers?x=${'a'.repeat(20_000)}`, { headers: { Authorization: `Bearer ${token}` } });
      expect(res.status).toBe(431);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(((await res.json()) as { code: string }).code).toBe('request_header_fields_too_large');
    } finally {
      await server.close();
    }
  });

  test('wrong method answers 405 with Allow', async () => {
    const res = await t.http.put('/v1/servers').set('Authorization', `Bearer ${token}`).send(good);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, POST');
    expect(res.body.code).toBe('method_not_allowed');
  });
});

describe('good input', () => {
  // Accepted, so it writes: its own app.
  beforeEach(startApp);
  afterEach(() => t.finish());

  test('a name with a valid astral character (a surrogate pair) is fine', async () => {
    const res = await t.http.post('/v1/servers').set('Authorization', `Bearer ${token}`).send({ ...good, name: 'Creeper 🧨 world' });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('Creeper 🧨 world');
  });
});
