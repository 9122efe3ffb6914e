import type { NextFunction, Request, Response } from 'express';
import type { Operation, Request as ApiRequest, ValidationResult } from 'openapi-backend';
import { AppError, messageOf } from '../errors';
import type { TokensRepo } from '../store/tokens-repo';
import { userActor, type Actors } from '../actors';
import { readPermissionRules, type AccessCheck, type Need } from './access';
import { bearerAuth } from './auth';
import { checkPercentEncoding } from './middleware';
import { fieldErrors } from './problem';
import type { OpenApi } from './openapi';
import { sendContent } from './send-content';
import type { ContentReply, FileReply, Handlers, StreamReply } from './types';

/** What the dispatcher does with the answers that are not plain JSON. */
export interface DispatchOutlets {
  sendFile(res: Response, reply: FileReply): Promise<void>;
  /** `need`: what the caller must keep holding on the stream's server (its operation's x-permission). */
  stream(req: Request, res: Response, reply: StreamReply, principal: { userId: string; tokenId: string }, need?: Need): void;
}

/** Who answers for what, beside the handlers: the token lookup, the access check and the actors (src/actors.ts). */
export interface DispatchDeps {
  tokens: TokensRepo;
  access: AccessCheck;
  actors: Pick<Actors, 'run'>;
}

/** A JSON answer; `json` is a body already serialized (a repository's SQL-built view), sent as it is. */
export interface JsonReply {
  status: number;
  body?: unknown;
  json?: string;
  headers?: Record<string, string>;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** What a call leaves for its answer: what its caller must keep holding for a stream, a member's first use. */
interface Pending {
  need?: Need;
  accepted?: () => void;
}

/** What a valid request's `coerced` holds for the handler. */
type Coerced = { params: unknown; query: unknown };

/**
 * The `/v1` request path after express's layers (docs/architecture.md "The request path"), through
 * openapi-backend's public interface: `router.matchOperation` finds the operation (404/405), the `bearerAuth`
 * security requirement is checked (401/403), `validator.validateRequest` checks the request against the
 * operation's Ajv validators (400), and the handler registered under the operationId answers with the coerced
 * query and path. That is openapi-backend's own order, so an anonymous caller learns nothing about a request's
 * shape; what this leaves out is `handleRequest`'s pipeline around those calls (a context built through several
 * awaits, a `Promise.all` over security handlers), so a synchronous handler's answer is written in the same tick
 * the request arrived (BENCHMARKS.md §1). An operation on a server then passes the one access check (access.ts:
 * owner or member, and what its `x-permission` needs), and the handler runs as its caller (src/actors.ts).
 * (Named for what it dispatches, operations to their handlers: the webhook dispatcher is src/webhooks/dispatcher.ts.)
 */
export function createOperationDispatch(api: OpenApi, handlers: Handlers, deps: DispatchDeps, outlets: DispatchOutlets) {
  const byId = new Map(Object.entries(handlers)) as Map<string, (call: unknown) => unknown>;
  const rules = readPermissionRules(api.router.getOperations()); // throws at start for a server operation without one

  function answer(req: Request, res: Response, operation: Operation, request: ApiRequest, pending: Pending) {
    res.locals.operationId = operation.operationId; // the metrics' label (src/prometheus.ts)
    const auth = bearerAuth(operation, req, res, deps.tokens);
    if ('error' in auth) throw auth.error;
    // validateRequest always answers `coerced`; with coerceTypes (openapi.ts) it holds the query and the path values
    // Ajv checked and coerced (validation.js).
    const validation = api.validator.validateRequest(knownQuery(request, operation), operation) as Required<ValidationResult<Coerced>>;
    if (validation.errors) {
      const errors = fieldErrors(validation.errors);
      const n = errors.length;
      throw new AppError('validation_failed', `The request has ${n} problem${n === 1 ? '' : 's'}; see errors.`, errors);
    }
    const id = operation.operationId;
    const handler = id === undefined ? undefined : byId.get(id);
    if (id === undefined || !handler) throw new Error(`no handler for ${id}`);
    const path = validation.coerced.params as Record<string, unknown>; // percent-decoded by the router
    const rule = rules.get(id);
    const checked = rule === undefined ? undefined : deps.access.check(rule, auth.principal, path, req.body);
    pending.accepted = checked?.accepted;
    pending.need = typeof rule === 'string' ? rule : undefined;
    const call = {
      principal: auth.principal,
      path,
      query: validation.coerced.query,
      body: req.body as unknown, // express's JSON parse (middleware.ts jsonBody), the object validated
      headers: req.headers, // Node gives header names in lower case
      raw: req, // a body that is not JSON, as it streams in (tag Files: uploads)
      server: checked?.server,
    };
    return deps.actors.run(userActor(auth.principal.userId, auth.principal.tokenId), () => handler(call));
  }

  function reply(req: Request, res: Response, result: unknown, principal: { userId: string; tokenId: string }, pending: Pending) {
    pending.accepted?.(); // the call succeeded: a member's first use of the server (access.ts)
    if (result && typeof result === 'object' && 'file' in result) return outlets.sendFile(res, result as FileReply);
    if (result && typeof result === 'object' && 'content' in result) { sendContent(res, result as ContentReply); return; }
    if (result && typeof result === 'object' && 'stream' in result) { outlets.stream(req, res, result as StreamReply, principal, pending.need); return; }
    sendJson(res, result as JsonReply);
  }

  return (req: Request, res: Response, next: NextFunction) => {
    try {
      checkPercentEncoding(req.path);
      const request: ApiRequest = {
        method: req.method,
        path: req.baseUrl + req.path,
        query: req.query as ApiRequest['query'], // read once: express 5 parses the query string on every read
        headers: req.headers as ApiRequest['headers'],
        body: req.body as unknown,
      };
      const pending: Pending = {};
      const result = answer(req, res, route(api, request), request, pending);
      const principal = res.locals.principal as { userId: string; tokenId: string };
      if (result instanceof Promise) {
        result.then((r) => reply(req, res, r, principal, pending)).then(undefined, next);
        return;
      }
      const sent = reply(req, res, result, principal, pending);
      if (sent instanceof Promise) sent.then(undefined, next);
    } catch (err) {
      next(err);
    }
  };
}

/** Each operation's query parameter names, read once from its (dereferenced) parameters. */
const queryNames = new WeakMap<Operation, ReadonlySet<string>>();

/**
 * The request with only the query parameters its operation declares: an unknown one (a cache buster such as
 * `?_=1699999`) is ignored, not refused (openapi/v1.yaml info "Evolution", docs/conventions.md "Collections").
 * A declared one given twice is still a 400 (it arrives as an array).
 */
function knownQuery(request: ApiRequest, operation: Operation): ApiRequest {
  let names = queryNames.get(operation);
  if (!names) {
    names = new Set((operation.parameters ?? []).flatMap((p) => ('in' in p && p.in === 'query' ? [p.name] : [])));
    queryNames.set(operation, names);
  }
  const query = (request.query ?? {}) as Record<string, string | string[]>;
  const keys = Object.keys(query);
  if (keys.every((k) => names.has(k))) return request;
  return { ...request, query: Object.fromEntries(keys.filter((k) => names.has(k)).map((k) => [k, query[k]])) };
}

/**
 * The operation openapi-backend's router matches, or the problem it answers: 404 for a path no operation has, 405
 * (with `Allow`, RFC 9110 §15.5.6) for a path whose operations take other methods. The router says which by its
 * error's prefix (`404-notFound`, `405-methodNotAllowed`), the library's documented outcomes of a strict match.
 */
function route(api: OpenApi, request: ApiRequest): Operation {
  try {
    return api.router.matchOperation(request, true);
  } catch (err) {
    // openapi-backend's router throws an Error (router.js matchOperation).
    if (!messageOf(err).startsWith('405')) throw new AppError('not_found', `Nothing is served at ${request.path}.`);
    const allow = METHODS.filter((m) => api.router.matchOperation({ method: m, path: request.path, headers: {} }));
    const detail = `${request.method.toUpperCase()} is not allowed here.`;
    throw new AppError('method_not_allowed', detail, undefined, { Allow: allow.join(', ') });
  }
}

/**
 * What res.json() sends, without the work express's send() does for cases an API answer never is (ETags,
 * freshness, a string's charset); a HEAD request still gets no body (Node's http drops it).
 */
export function sendJson(res: Response, reply: JsonReply) {
  if (reply.headers) for (const name in reply.headers) res.setHeader(name, reply.headers[name]);
  res.statusCode = reply.status;
  if (reply.status === 204 || (reply.body === undefined && reply.json === undefined)) {
    res.end();
    return;
  }
  const body = reply.json ?? JSON.stringify(reply.body);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
