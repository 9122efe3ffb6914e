'use strict';
/**
 * What-if for the API bench (not used by the service): openapi-backend's router with its per-request work done
 * once. Loaded into the `full-cached-routing` child before the service is built, to measure the proposed change
 * to src/app.ts before anyone makes it.
 *
 * openapi-backend 5.x rebuilds its operation list on every call of getOperations() (a lodash chain over every
 * path, spreading every operation object) and matchOperation() calls it twice per request and compiles one
 * RegExp per operation per request. The definition does not change after init(), so here:
 * - getOperations() is computed once per definition object and then returned as is;
 * - matchOperation() looks exact paths up in a Map and tries precompiled template regexes, ordered by the same
 *   specificity rule (path length without {params}, longest first), with the same 404/405 errors.
 */
const path = require('node:path');
const { ROOT } = require('./lib');
const { OpenAPIRouter } = require(path.join(ROOT, 'node_modules', 'openapi-backend', 'router'));

const cache = new WeakMap();
const original = OpenAPIRouter.prototype.getOperations;

function compiled(router) {
  let c = cache.get(router);
  if (c && c.definition === router.definition) return c;
  const ops = original.call(router);
  const exact = new Map();
  for (const op of ops) if (!exact.has(`${op.method} ${op.path}`)) exact.set(`${op.method} ${op.path}`, op);
  // Like the original, every path is a "template" here (one without {params} matches only itself), so a known
  // path with an unknown method is a 405, not a 404.
  const templates = ops
    .map((op) => ({ op, re: new RegExp(`^${op.path.replace(/\{.*?\}/g, '[^/]+')}$`), specificity: op.path.replace(/\{.*?\}/g, '').length }))
    .sort((a, b) => b.specificity - a.specificity); // Array.prototype.sort is stable, like lodash orderBy
  c = { definition: router.definition, ops, exact, templates };
  cache.set(router, c);
  return c;
}

OpenAPIRouter.prototype.getOperations = function getOperations() {
  return compiled(this).ops;
};

OpenAPIRouter.prototype.matchOperation = function matchOperation(req, strict) {
  const c = compiled(this);
  req = this.normalizeRequest(req);
  const fail = (message) => {
    if (strict) throw Error(message);
    return undefined;
  };
  if (!req.path.startsWith(this.apiRoot)) return fail('404-notFound: no route matches request');
  const p = this.normalizePath(req.path);
  const exact = c.exact.get(`${req.method} ${p}`);
  if (exact) return exact;
  let pathMatched = false;
  for (const t of c.templates) {
    if (!t.re.test(p)) continue;
    pathMatched = true;
    if (t.op.method === req.method) return t.op;
  }
  if (!pathMatched) return fail('404-notFound: no route matches request');
  return fail('405-methodNotAllowed: this method is not registered for the route');
};
