// openapi-backend as src/http/openapi.ts builds it from the real spec, and what our patch of it changes
// (patches/openapi-backend+5.20.1.patch, applied at install), each seen through the library's public interface:
// - routing: every operation of the spec is found by its own path (values filled in, a trailing slash), and unknown
//   paths and methods are refused as 404 and 405; the patched router builds its operation list and path patterns
//   once per definition (getOperations gives the same operations twice, a new list after a new definition),
//   still orders templates by specificity, and its faster parse gives what the parse gave;
// - validation: every operation's request validators compile (they are compiled on first use at run time, so a
//   schema Ajv cannot compile must fail here, not on a request), the answer carries the coerced query and the
//   decoded path, a single value of an array query parameter becomes a one-item array; the patched validator makes
//   one Ajv instance per validation context (customizeAjv is called once per context, not once per schema) and
//   compiles a schema with an `$id` for two operations;
// - `quick` mode dereferences the spec exactly as the default (json-schema-ref-parser) would.
import addFormats from 'ajv-formats';
import { OpenAPIBackend, OpenAPIRouter, OpenAPIValidator, type Operation, type Request as ApiRequest } from 'openapi-backend';
import { loadSpec } from '../../src/spec';
import { createOpenApi, type OpenApi } from '../../src/http/openapi';

let api: OpenApi;
let operations: Operation[];

beforeAll(async () => {
  api = await createOpenApi(loadSpec());
  operations = api.router.getOperations();
});

const request = (method: string, path: string, extra: Partial<ApiRequest> = {}): ApiRequest => ({ method, path, headers: {}, query: {}, ...extra });

/** The operationId a request routes to, or the router's error message. */
function outcome(router: OpenAPIRouter, req: ApiRequest): string {
  try {
    return router.matchOperation(req, true).operationId!;
  } catch (err) {
    return (err as Error).message;
  }
}

describe('routing', () => {
  test('every operation of the spec is found by its own path, with values filled in and with a trailing slash', () => {
    expect(operations.length).toBeGreaterThan(40);
    for (const op of operations) {
      const path = op.path.replace(/\{[^}]+\}/g, 'srv_01JABCDEF');
      expect([op.operationId, outcome(api.router, request(op.method.toUpperCase(), path))]).toEqual([op.operationId, op.operationId]);
      expect([op.operationId, outcome(api.router, request(op.method, `${path}/`))]).toEqual([op.operationId, op.operationId]);
    }
  });

  test.each([
    ['an unknown path', 'GET', '/v1/nothing/here', /^404-/],
    ['a path outside the API', 'GET', '/elsewhere', /^404-/],
    ['an empty segment', 'GET', '/v1/servers//actions', /^404-/],
    ['a known path with a method it lacks', 'PUT', '/v1/servers', /^405-/],
    ['a template path with a method it lacks', 'PUT', '/v1/servers/srv_1/actions', /^405-/],
  ])('%s is refused', (_name, method, path, want) => {
    expect(outcome(api.router, request(method, path))).toMatch(want);
  });

  test('the patched router builds its operations once per definition, and a new definition is read anew', () => {
    const router = new OpenAPIRouter({ definition: api.definition });
    const [first, second] = [router.getOperations(), router.getOperations()];
    expect(second).not.toBe(first); // a copy of the list each time, so a caller's changes never reach the router
    expect(second.map((op, i) => op === first[i])).toEqual(first.map(() => true)); // the same operations
    first.length = 0;
    expect(router.getOperations()).toHaveLength(second.length);
    router.definition = structuredClone(api.definition);
    expect(router.getOperations()[0]).not.toBe(second[0]);
    expect(router.getOperations().map((op) => op.operationId)).toEqual(second.map((op) => op.operationId));
  });

  test('templates are tried most specific first (the path without its {params}, longest first), as before the patch', () => {
    const op = (operationId: string) => ({ operationId, responses: {} });
    const definition = {
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      paths: {
        '/a/{x}/c': { get: op('anyThenC') },
        '/a/{x}': { get: op('any'), delete: op('deleteAny') },
        '/a/b': { post: op('postB') },
        '/a/bb/{y}': { get: op('bbThenAny') },
      },
    };
    const router = new OpenAPIRouter({ definition: definition as never });
    expect(outcome(router, request('GET', '/a/b'))).toBe('any'); // /a/b has no GET: the template answers
    expect(outcome(router, request('POST', '/a/b'))).toBe('postB');
    expect(outcome(router, request('GET', '/a/bb/c'))).toBe('bbThenAny'); // '/a/bb/' is longer than '/a//c'
    expect(outcome(router, request('GET', '/a/z/c'))).toBe('anyThenC');
    expect(outcome(router, request('PATCH', '/a/z'))).toMatch(/^405-/);
    expect(outcome(router, request('GET', '/b'))).toMatch(/^404-/);
  });

  test('the patched parse keeps what the parse gave: header names in lower case, own keys only, the other fields of the request, a copy of the query', () => {
    const get = api.router.getOperation('getServer')!;
    const query = { a: ['1', '2'] };
    const headers = JSON.parse('{"Content-Type":"application/json","__proto__":"x","Cookie":"k=v"}');
    const req = { ...request('GET', '/v1/servers/a%20b', { query, headers }), extra: 'kept' };
    const parsed = api.router.parseRequest(req, get) as unknown as Record<string, unknown> & { headers: object };
    expect(parsed).toMatchObject({ extra: 'kept', method: 'get', path: '/v1/servers/a%20b', params: { server_id: 'a b' }, query, cookies: { k: 'v' } });
    expect(parsed.query).not.toBe(query);
    expect(Object.getPrototypeOf(parsed.headers)).toBe(Object.prototype);
    expect(Object.entries(parsed.headers)).toEqual([['content-type', 'application/json'], ['__proto__', 'x'], ['cookie', 'k=v']]);
    const own = JSON.parse('{"__proto__":{"polluted":true},"method":"GET","path":"/v1/servers/x","headers":{}}');
    expect(Object.getPrototypeOf(api.router.parseRequest(own, get))).toBe(Object.prototype);
    expect(api.router.parseRequest(request('GET', '/v1/servers?limit=5', { query: undefined }), api.router.getOperation('listServers')).query).toEqual({ limit: '5' });
  });

  test.each([['/v1/servers', '/v1/servers'], ['/v1/servers/', '/v1/servers'], [' /v1/servers/// ', '/v1/servers'], ['/', '/']])(
    'the path %j is normalized to %j',
    (path, want) => {
      expect(api.router.normalizePath(path)).toBe(want);
    },
  );
});

describe('validation', () => {
  test("every operation's request validators compile", () => {
    for (const op of operations) expect([op.operationId, api.validator.getRequestValidatorsForOperation(op.operationId!)?.length]).toEqual([op.operationId, expect.any(Number)]);
  });

  test('a valid request answers with the query coerced and the path decoded; an invalid one with every error', () => {
    const list = api.router.getOperation('listServers')!;
    const valid = api.validator.validateRequest(request('GET', '/v1/servers', { query: { limit: '5', state: 'running' } }), list);
    expect(valid.errors).toBeNull();
    expect(valid.coerced?.query).toEqual({ limit: 5, state: 'running' });
    const invalid = api.validator.validateRequest(request('GET', '/v1/servers', { query: { limit: 'ten', state: 'flying' } }), list);
    expect(invalid.errors!.map((e) => e.instancePath).sort()).toEqual(['/query/limit', '/query/state']);
    const get = api.router.getOperation('getServer')!;
    expect(api.validator.validateRequest(request('GET', '/v1/servers/%73rv_01JABCDEF'), get).coerced?.params).toEqual({ server_id: 'srv_01JABCDEF' });
  });

  test('a single value of an array query parameter becomes a one-item array', async () => {
    // No operation of the spec has one today: listServers' `state` becomes one in a copy of it.
    const spec = loadSpec();
    type Paths = Record<string, { get: { parameters: Array<Record<string, unknown>> } }>;
    const parameters = (spec.document.paths as Paths)['/v1/servers'].get.parameters;
    const i = parameters.findIndex((p) => p.name === 'state');
    expect(i).toBeGreaterThanOrEqual(0);
    parameters[i] = { name: 'state', in: 'query', schema: { type: 'array', items: { type: 'string', enum: ['running', 'stopped'] } } };
    const edited = await createOpenApi(spec);
    const list = edited.router.getOperation('listServers')!;
    for (const [state, want] of [['running', ['running']], [['running', 'stopped'], ['running', 'stopped']]] as const) {
      const result = edited.validator.validateRequest(request('GET', '/v1/servers', { query: { state: state as string | string[] } }), list);
      expect([result.errors, (result.coerced?.query as Record<string, unknown>).state]).toEqual([null, want]);
    }
  });

  test('the patched validator makes one Ajv instance per validation context, not one per schema it compiles', () => {
    const contexts: string[] = [];
    const validator = new OpenAPIValidator({
      definition: api.definition,
      lazyCompileValidators: true,
      customizeAjv: (ajv, _opts, context) => (contexts.push(String(context)), addFormats(ajv)),
    });
    validator.preCompileRequestValidators();
    validator.validateResponse({}, 'getServer', 200);
    validator.validateResponse({}, 'listServers', 200);
    expect(contexts.sort()).toEqual(['paramsValidator', 'requestBodyValidator', 'responseValidator']);
  });

  test('a schema with an $id used by two operations compiles for both in the shared instance', () => {
    const thing = { $id: 'https://example.com/thing', type: 'object', properties: { a: { type: 'string' } } };
    const answer = { 200: { description: 'ok', content: { 'application/json': { schema: thing } } } };
    const definition = {
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      paths: { '/one': { get: { operationId: 'one', responses: answer } }, '/two': { get: { operationId: 'two', responses: answer } } },
    };
    const validator = new OpenAPIValidator({ definition: definition as never });
    expect(validator.validateResponse({ a: 'x' }, 'two', 200).errors).toBeNull();
    expect(validator.validateResponse({ a: 1 }, 'one', 200).errors).toHaveLength(1);
  });
});

test('quick mode dereferences the spec exactly as the default mode does', async () => {
  const full = new OpenAPIBackend({ definition: structuredClone(loadSpec().document) as never, validate: false });
  // The default mode also checks the document against the OpenAPI 3.0 meta-schema, which refuses 3.1: not this test.
  Object.assign(full, { validateDefinition: () => undefined });
  await full.init();
  expect(JSON.stringify(api.definition)).toBe(JSON.stringify(full.definition));
});
