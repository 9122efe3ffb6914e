// src/http/routing.ts against openapi-backend itself: two routers built from the real spec, one as the library
// makes it and one after routeOnce, must route and parse every operation's requests alike (a table of requests
// per operation: path values that need decoding, queries with arrays, header names in other cases, bodies as
// objects, JSON text and not-JSON, a trailing slash, a Cookie header, unknown paths and methods). Validation too:
// validateOnce against openapi-backend's validateRequest, errors and coerced values, on valid and invalid requests.
import addFormats from 'ajv-formats';
import { OpenAPIBackend, OpenAPIValidator, type OpenAPIRouter, type Operation, type Request as ApiRequest } from 'openapi-backend';
import { loadSpec } from '../../src/spec';
import { compileParse, routeOnce, validateOnce } from '../../src/http/routing';

async function backend(edit: (spec: object) => void = () => undefined): Promise<OpenAPIBackend> {
  const definition = structuredClone(loadSpec().document);
  edit(definition);
  const api = new OpenAPIBackend({ definition: definition as never, strict: true, validate: false });
  (api as unknown as { validateDefinition: () => unknown }).validateDefinition = () => undefined; // as src/app.ts
  await api.init();
  return api;
}

async function router(): Promise<OpenAPIRouter> {
  return (await backend()).router as unknown as OpenAPIRouter;
}

/** openapi-backend's validator as src/app.ts builds it, on `api`'s router. */
function validator(api: OpenAPIBackend): OpenAPIValidator {
  const ajvOpts = { allErrors: true, strict: false };
  return new OpenAPIValidator({ definition: api.definition, router: api.router, ajvOpts, customizeAjv: (ajv) => (addFormats(ajv), ajv) });
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

// Bodies and queries that pass and that fail validation, on top of the shapes above: each operation's request
// gets every one, so every operation's validators run on valid and invalid input.
const VALIDATION_REQUESTS: Array<{ name: string; make: (op: Operation, value: string) => ApiRequest }> = [
  ...REQUESTS,
  {
    name: 'a create body',
    make: (op, v) => ({
      method: op.method, path: fill(op, v), query: {}, headers: { 'content-type': 'application/json' },
      body: { name: 'world', plan: 'micro', version: 'flying-squid-1.20' },
    }),
  },
  { name: 'an empty body', make: (op, v) => ({ method: op.method, path: fill(op, v), query: {}, headers: { 'content-type': 'application/json' }, body: {} }) },
  { name: 'a body with wrong types', make: (op, v) => ({ method: op.method, path: fill(op, v), query: {}, headers: { 'content-type': 'application/json' }, body: { name: 7, plan: [], extra: true } }) },
  { name: 'a JSON text body, no type', make: (op, v) => ({ method: op.method, path: fill(op, v), query: {}, headers: {}, body: '{"name":"x"' }) },
  { name: 'a bad limit and a state', make: (op, v) => ({ method: op.method, path: fill(op, v), query: { limit: 'abc', state: 'running', range: '1h' }, headers: {}, body: undefined }) },
  { name: 'query values in range', make: (op, v) => ({ method: op.method, path: fill(op, v), query: { limit: '5', starting_after: 'srv_1', keep_backups: 'true' }, headers: {}, body: undefined }) },
];

// Three of them: openapi-backend as the library makes it (the errors expected), openapi-backend's validator on a
// routeOnce router (the query and path objects it leaves coerced, which the handler gets), and validateOnce.
let plain: { api: OpenAPIBackend; validator: OpenAPIValidator };
let library: { api: OpenAPIBackend; validator: OpenAPIValidator };
let fast: { api: OpenAPIBackend; validate: ReturnType<typeof validateOnce> };

beforeAll(async () => {
  const a = await backend();
  plain = { api: a, validator: validator(a) };
  const b = await backend();
  routeOnce(b.router as unknown as OpenAPIRouter);
  library = { api: b, validator: validator(b) };
  const c = await backend();
  routeOnce(c.router as unknown as OpenAPIRouter);
  fast = { api: c, validate: validateOnce(validator(c), c.router as unknown as OpenAPIRouter) };
});

// Which requests pass and which fail is the next test's concern.
test.each(VALIDATION_REQUESTS.map((r) => [r.name, r] as const))('every operation validates alike: %s', (_name, { make }) => {
  for (const op of plain.api.router.getOperations()) {
    for (const value of VALUES) {
      const request = make(op, value);
      const expected = plain.validator.validateRequest(structuredClone(request), op).errors ?? null;
      const [libOp, fastOp] = [library.api.router.getOperation(op.operationId!)!, fast.api.router.getOperation(op.operationId!)!];
      const [libRequest, fastRequest] = [structuredClone(request), structuredClone(request)];
      expect(library.validator.validateRequest(libRequest, libOp).errors ?? null).toEqual(expected);
      expect(fast.validate(fastRequest, fastOp)).toEqual(expected);
      // Ajv's coercion lands on the parse the handler gets, as with openapi-backend's validator.
      const given = fast.api.router.parseRequest(fastRequest, fastOp);
      const libGiven = library.api.router.parseRequest(libRequest, libOp);
      expect([given.query, given.params]).toEqual([libGiven.query, libGiven.params]);
    }
  }
});

test('the table has requests that pass validation and requests that fail it', () => {
  const outcomes = new Set<boolean>();
  for (const { make } of VALIDATION_REQUESTS) {
    for (const op of plain.api.router.getOperations()) outcomes.add(plain.validator.validateRequest(make(op, 'srv_1'), op).errors === null);
  }
  expect([...outcomes].sort()).toEqual([false, true]);
});

test('a query parameter whose schema is an array gets a single value as a one-item array, as openapi-backend does', async () => {
  // No operation of the spec has one today: listServers' `state` is made one in a copy of it.
  const arrayState = (spec: object) => {
    type Paths = Record<string, { get?: { parameters?: Array<Record<string, unknown>> } }>;
    const parameters = (spec as { paths: Paths }).paths['/v1/servers'].get!.parameters!;
    const i = parameters.findIndex((p) => p.name === 'state');
    expect(i).toBeGreaterThanOrEqual(0);
    parameters[i] = { name: 'state', in: 'query', schema: { type: 'array', items: { type: 'string', enum: ['running', 'stopped'] } } };
  };
  const [lib, ours] = [await backend(arrayState), await backend(arrayState)];
  routeOnce(lib.router as unknown as OpenAPIRouter);
  routeOnce(ours.router as unknown as OpenAPIRouter);
  const validate = validateOnce(validator(ours), ours.router as unknown as OpenAPIRouter);
  const libValidator = validator(lib);
  for (const state of ['running', 'paused', ['running', 'stopped']]) {
    const request = { method: 'GET', path: '/v1/servers', query: { state }, headers: {}, body: undefined } as ApiRequest;
    const [libRequest, ourRequest] = [structuredClone(request), structuredClone(request)];
    const [libOp, ourOp] = [lib.router.getOperation('listServers')!, ours.router.getOperation('listServers')!];
    expect(validate(ourRequest, ourOp)).toEqual(libValidator.validateRequest(libRequest, libOp).errors ?? null);
    expect(ours.router.parseRequest(ourRequest, ourOp).query).toEqual(lib.router.parseRequest(libRequest, libOp).query);
    expect(ours.router.parseRequest(ourRequest, ourOp).query.state).toEqual(Array.isArray(state) ? state : [state]);
  }
});
