// src/http/routing.ts against openapi-backend itself: two routers built from the real spec, one as the library
// makes it and one after routeOnce, must route and parse every operation's requests alike (a table of requests
// per operation: path values that need decoding, queries with arrays, header names in other cases, bodies as
// objects, JSON text and not-JSON, a trailing slash, a Cookie header, unknown paths and methods).
import { OpenAPIBackend, type OpenAPIRouter, type Operation, type Request as ApiRequest } from 'openapi-backend';
import { loadSpec } from '../../src/spec';
import { compileParse, routeOnce } from '../../src/http/routing';

async function router(): Promise<OpenAPIRouter> {
  const api = new OpenAPIBackend({ definition: structuredClone(loadSpec().document) as never, strict: true, validate: false });
  (api as unknown as { validateDefinition: () => unknown }).validateDefinition = () => undefined; // as src/app.ts
  await api.init();
  return api.router as unknown as OpenAPIRouter;
}

let reference: OpenAPIRouter;
let ours: OpenAPIRouter;
let operations: Operation[];

beforeAll(async () => {
  reference = await router();
  ours = await router();
  routeOnce(ours);
  operations = reference.getOperations();
});

/** The operation's path with each {param} replaced by `value`. */
const fill = (op: Operation, value: string) => op.path.replace(/\{[^}]+\}/g, value);

const VALUES = ['srv_01JABCDEF', 'a%20b', '%E2%9C%93%2F', "x.y~z-_!*'()"];

const REQUESTS: Array<{ name: string; make: (op: Operation, value: string) => ApiRequest }> = [
  { name: 'bare', make: (op, v) => ({ method: op.method.toUpperCase(), path: fill(op, v), query: {}, headers: {}, body: undefined }) },
  {
    name: 'query with an array, a JSON body',
    make: (op, v) => ({
      method: op.method.toUpperCase(), path: fill(op, v),
      query: { limit: '20', starting_after: 'srv_1', state: ['running', 'stopped'] },
      headers: { authorization: 'Bearer gsh_x', 'content-type': 'application/json' }, body: { name: 'x', plan: 'micro' },
    }),
  },
  {
    name: 'header names in capitals, a body as JSON text',
    make: (op, v) => ({ method: op.method, path: fill(op, v), query: {}, headers: { 'Idempotency-Key': 'k1', ACCEPT: 'application/json' }, body: '{"a":[1,2]}' }),
  },
  { name: 'a body that is not JSON', make: (op, v) => ({ method: op.method, path: fill(op, v), query: {}, headers: {}, body: 'not json' }) },
  { name: 'a trailing slash', make: (op, v) => ({ method: op.method, path: `${fill(op, v)}/`, query: { a: '' }, headers: {}, body: undefined }) },
  {
    name: 'keys named like Object.prototype members',
    make: (op, v) => ({
      method: op.method, path: fill(op, v), query: JSON.parse('{"__proto__":"x","constructor":"y","limit":"1"}'),
      headers: JSON.parse('{"__proto__":"x","toString":"y"}'), body: undefined,
    }),
  },
  { name: 'a Cookie header', make: (op, v) => ({ method: op.method, path: fill(op, v), query: {}, headers: { cookie: 'a=1; b=2' }, body: undefined }) },
  { name: 'a query string', make: (op, v) => ({ method: op.method, path: fill(op, v), query: 'limit=5&state=running', headers: {}, body: undefined }) },
];

test.each(REQUESTS.map((r) => [r.name, r] as const))('every operation parses alike: %s', (_name, { make }) => {
  let compared = 0;
  for (const op of operations) {
    for (const value of VALUES) {
      const request = make(op, value);
      const expected = reference.matchOperation(structuredClone(request), true) as Operation;
      expect((ours.matchOperation(structuredClone(request), true) as Operation).operationId).toBe(expected.operationId);
      expect(ours.parseRequest(structuredClone(request), expected)).toEqual(reference.parseRequest(structuredClone(request), expected));
      compared++;
    }
  }
  expect(compared).toBe(operations.length * VALUES.length);
});

test('the fast parse answers for every operation of the spec (none has a query parameter in a special form), and leaves a Cookie or a query string to openapi-backend', () => {
  for (const op of operations) {
    const parse = compileParse(ours, op);
    expect(parse).toBeDefined();
    const path = fill(op, 'v');
    expect(parse!({ method: op.method, path, query: {}, headers: {}, body: undefined })).toBeDefined();
    expect(parse!({ method: op.method, path, query: {}, headers: { Cookie: 'a=1' }, body: undefined })).toBeUndefined();
    expect(parse!({ method: op.method, path, query: 'a=1', headers: {}, body: undefined })).toBeUndefined();
  }
});

test.each([
  ['an unknown path', { method: 'GET', path: '/v1/nothing/here' }],
  ['a path outside the API', { method: 'GET', path: '/elsewhere' }],
  ['a known path with a method it lacks', { method: 'PUT', path: '/v1/servers' }],
  ['a template path with a method it lacks', { method: 'PUT', path: '/v1/servers/srv_1/actions' }],
  ['an empty segment', { method: 'GET', path: '/v1/servers//actions' }],
])('routing refuses %s as openapi-backend does', (_name, r) => {
  const request = { ...r, query: {}, headers: {} } as ApiRequest;
  const outcome = (router: OpenAPIRouter) => {
    try {
      return (router.matchOperation(structuredClone(request), true) as Operation).operationId;
    } catch (err) {
      return (err as Error).message;
    }
  };
  expect(outcome(ours)).toBe(outcome(reference));
  expect(outcome(ours)).toMatch(/^40[45]-/);
});

test.each([['/v1/servers'], ['/v1/servers/'], [' /v1/servers/// '], ['/v1'], ['/v1/'], ['/'], [''], ['/elsewhere/'], ['/v1x/servers'], ['/v1//servers']])(
  'the path %j is normalized as openapi-backend does',
  (path) => {
    expect(ours.normalizePath(path)).toBe(reference.normalizePath(path));
  },
);
