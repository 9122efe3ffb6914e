import type { ErrorObject } from 'ajv';
import type { OpenAPIRouter, OpenAPIValidator, Operation, ParsedRequest, Request as ApiRequest } from 'openapi-backend';

/**
 * openapi-backend stays the router and validator of record: the spec drives which operation a request is, and
 * its Ajv validators check it. What this changes is only how often the same work is done per request
 * (BENCHMARKS.md §1, issue 18):
 * - `getOperations()` rebuilt the operation list (a lodash chain copying every operation) on every call, twice per
 *   request; the definition never changes after init(), so the list is computed once.
 * - `matchOperation()` filtered every operation and compiled one RegExp per operation per request; here exact
 *   paths are one Map lookup and templates are regexes compiled once, tried in the same order (specificity: the
 *   path's length without its {params}, longest first; a stable sort, like lodash's orderBy) with the same 404 and
 *   405 outcomes. A {param} matches one segment (`[^/]+`), so only templates with the path's number of segments
 *   can match: they are kept apart by that number.
 * - `parseRequest()` ran three times per request (before routing, after it, and inside validation), each time
 *   lower-casing the headers, parsing cookies and deep-cloning the query. With its operation it now runs once: the
 *   answer for one request object and operation is kept and given again (the validator and the dispatcher,
 *   dispatch.ts, pass the same object). Without one (a request not yet routed) it is the request as it came, its
 *   path normalized: nothing reads more than its method and path then.
 * - The parse itself is compiled per operation (`compileParse`) where that gives openapi-backend's answer.
 * - `normalizePath()` built a RegExp from `apiRoot` on every call (twice per request); it is built once.
 */
export function routeOnce(router: OpenAPIRouter): void {
  const rootPrefix = new RegExp(`^${router.apiRoot}/?`); // unescaped, as openapi-backend builds it
  const trimSlashes = (router as unknown as { ignoreTrailingSlashes: boolean }).ignoreTrailingSlashes;
  router.normalizePath = (pathInput: string): string => {
    let path = pathInput.trim();
    if (path.startsWith(router.apiRoot)) path = path.replace(rootPrefix, '/');
    while (trimSlashes && path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    return path;
  };
  const operations = router.getOperations();
  const exact = new Map<string, Operation>();
  for (const op of operations) if (!exact.has(`${op.method} ${op.path}`)) exact.set(`${op.method} ${op.path}`, op);
  // Like the original, every path is also a template (one without {params} matches only itself), so a known path
  // with an unknown method is a 405, not a 404.
  const templates = new Map<number, Array<{ op: Operation; re: RegExp }>>();
  const sorted = operations
    .map((op) => ({ op, re: new RegExp(`^${op.path.replace(/\{.*?\}/g, '[^/]+')}$`), specificity: op.path.replace(/\{.*?\}/g, '').length }))
    .sort((a, b) => b.specificity - a.specificity);
  for (const t of sorted) {
    const n = segments(t.op.path);
    if (!templates.has(n)) templates.set(n, []);
    templates.get(n)!.push(t);
  }

  router.getOperations = () => operations;
  router.matchOperation = ((req: ApiRequest, strict?: boolean): Operation | undefined => {
    const normal = methodAndPath(req);
    const fail = (message: string) => {
      if (strict) throw Error(message);
      return undefined;
    };
    if (!normal.path.startsWith(router.apiRoot)) return fail('404-notFound: no route matches request');
    const path = router.normalizePath(normal.path);
    const found = exact.get(`${normal.method} ${path}`);
    if (found) return found;
    let pathMatched = false;
    for (const t of templates.get(segments(path)) ?? []) {
      if (!t.re.test(path)) continue;
      pathMatched = true;
      if (t.op.method === normal.method) return t.op;
    }
    return fail(pathMatched ? '405-methodNotAllowed: this method is not registered for the route' : '404-notFound: no route matches request');
  }) as OpenAPIRouter['matchOperation'];

  const parse = router.parseRequest.bind(router);
  const parsed = new WeakMap<object, { operation: Operation; result: ParsedRequest }>();
  const compiled = new Map(operations.map((op) => [op, compileParse(router, op)]));
  router.parseRequest = ((req: ApiRequest, operation?: Operation): ParsedRequest => {
    if (!operation) {
      const { path, method } = router.normalizeRequest(req);
      return { ...req, path, method, params: {}, query: {}, headers: {}, cookies: {}, requestBody: req.body } as ParsedRequest;
    }
    const seen = parsed.get(req);
    if (seen?.operation === operation) return seen.result;
    const fast = compiled.get(operation);
    const result = (fast && fast(req)) || parse(req, operation);
    parsed.set(req, { operation, result });
    return result;
  }) as OpenAPIRouter['parseRequest'];
}

/**
 * openapi-backend's `parseRequest(req, operation)` (router.js) for one operation, with the work that does not
 * depend on the request done once: the path template's regex (bath-es5's: `{name}` is `([^/]*)`, each value
 * percent-decoded) and the check that no query parameter needs its special forms (`content: application/json`,
 * `explode: false`). Per request it copies the headers with lower-cased names and the query (strings and arrays
 * of strings, express's `simple` parser) without lodash. `undefined` where it would not give openapi-backend's
 * answer, which then parses: an operation with such query parameters or a repeated path parameter, or a request
 * with a Cookie header or a query string instead of an object. test/unit/routing.test.ts checks the two agree.
 */
export function compileParse(router: OpenAPIRouter, operation: Operation): ((req: ApiRequest) => ParsedRequest | undefined) | undefined {
  const parameters = (operation.parameters ?? []) as Array<{ in?: string; content?: object; explode?: boolean }>;
  if (parameters.some((p) => p.in === 'query' && (p.content !== undefined || p.explode === false))) return undefined;
  const names = [...operation.path.matchAll(/\{([A-Za-z0-9_-]+)\}/g)].map((m) => m[1]);
  if (new Set(names).size !== names.length) return undefined;
  const pattern = new RegExp(`^${operation.path.replace(/\{[A-Za-z0-9_-]+\}/g, '([^\\/]*)')}$`);
  return (req) => {
    if (typeof req.query !== 'object') return undefined;
    // Without a prototype, so a key such as `__proto__` is kept as an own key, as lodash's copies keep it.
    const headers: Record<string, string | string[]> = Object.create(null);
    for (const name in req.headers) headers[name.toLowerCase()] = req.headers[name];
    if (headers.cookie !== undefined) return undefined;
    const query: Record<string, string | string[]> = Object.create(null);
    for (const name in req.query) {
      const value = req.query[name];
      query[name] = Array.isArray(value) ? value.slice() : value;
    }
    let requestBody = req.body;
    if (req.body && typeof req.body !== 'object') {
      try {
        requestBody = JSON.parse(String(req.body));
      } catch {
        // as openapi-backend: validation reports the body if the operation needs one
      }
    }
    const { method, path } = methodAndPath(req);
    const values = pattern.exec(router.normalizePath(path));
    const params: Record<string, string> = {};
    if (values) for (let i = 0; i < names.length; i++) params[names[i]] = decodeURIComponent(values[i + 1]);
    // The fields of openapi-backend's Request and ParsedRequest, named: a spread of the request costs more than
    // the rest of this function together.
    return { method, path, query, headers, body: req.body, params, cookies: {}, requestBody };
  };
}

/**
 * openapi-backend's `validateRequest(req, operation)` (validation.js) as the dispatcher uses it: its `errors`, or
 * null when the request is valid. The same Ajv validators (compiled once per operation by openapi-backend) run on
 * a parameter object built the same way, from the same parse, so Ajv coerces the very query and path objects the
 * handler then gets. Left out: lodash (`entries`, `find`, `omitBy`, `isEmpty`) and the copy of the request made for
 * `coerced`, which nothing here reads (BENCHMARKS.md §1). test/unit/routing.test.ts compares the two.
 */
export function validateOnce(validator: OpenAPIValidator, router: OpenAPIRouter) {
  type Parameter = { name?: string; in?: string; schema?: { type?: unknown } };
  // Per operation: which query parameters are arrays, by the first parameter of each name (as `_.find` picks).
  const arrayQueries = new Map<Operation, Set<string>>();
  const arraysOf = (operation: Operation): Set<string> => {
    let arrays = arrayQueries.get(operation);
    if (!arrays) {
      const first = new Map<string, Parameter>();
      for (const p of (operation.parameters ?? []) as Parameter[]) {
        if (p.in === 'query' && p.name !== undefined && !first.has(p.name)) first.set(p.name, p);
      }
      arrays = new Set([...first].filter(([, p]) => p.schema?.type === 'array').map(([name]) => name));
      arrayQueries.set(operation, arrays);
    }
    return arrays;
  };
  return (req: ApiRequest, operation: Operation): ErrorObject[] | null => {
    const validators = validator.getRequestValidatorsForOperation(operation.operationId!) || [];
    const { params, query, headers, cookies, requestBody } = router.parseRequest(req, operation);
    if (query) {
      const arrays = arraysOf(operation);
      for (const name of Object.keys(query)) if (typeof query[name] === 'string' && arrays.has(name)) query[name] = [query[name] as string];
    }
    const parameters: Record<string, unknown> = {};
    if (params != null) parameters.path = params;
    if (query != null) parameters.query = query;
    if (headers != null) parameters.header = headers;
    if (cookies != null) parameters.cookie = cookies;
    const errors: ErrorObject[] = [];
    if (typeof req.body !== 'object' && req.body !== undefined) {
      const formats = Object.keys((operation.requestBody as { content?: object } | undefined)?.content ?? {});
      if (formats.length === 1 && formats[0] === 'application/json') {
        try {
          JSON.parse(`${req.body}`);
        } catch (err) {
          if (err instanceof Error) {
            errors.push({ keyword: 'parse', instancePath: '', schemaPath: '#/requestBody', params: [], message: err.message } as never);
          }
        }
      }
    }
    if (typeof requestBody === 'object' || headers['content-type'] === 'application/json') parameters.requestBody = requestBody;
    for (const validate of validators) {
      validate(parameters);
      if (validate.errors) errors.push(...validate.errors);
    }
    return errors.length === 0 ? null : errors;
  };
}

/** openapi-backend's `normalizeRequest(req)` without the copy of the request: only the two fields it changes. */
function methodAndPath(req: ApiRequest): { method: string; path: string } {
  let path = req.path?.trim() || '';
  if (!path.startsWith('/')) path = `/${path}`;
  return { method: req.method.trim().toLowerCase(), path: path.split('?')[0] };
}

/** How many `/` a path has: the number of its segments. */
function segments(path: string): number {
  let n = 0;
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === 47) n++;
  return n;
}
