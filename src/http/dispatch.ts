import type { NextFunction, Request, Response } from 'express';
import type { OpenAPIBackend, Operation, Request as ApiRequest } from 'openapi-backend';
import { AppError } from '../errors';
import { bearerAuth, type Authenticator } from './auth';
import { checkPercentEncoding } from './middleware';
import { validateOnce } from './routing';
import { fieldErrors } from './problem';
import type { FileReply, Handlers, ServerRead, StreamReply } from './types';

/** What the dispatcher does with the answers that are not plain JSON. */
export interface DispatchOutlets {
  sendFile(res: Response, reply: FileReply): Promise<void>;
  stream(req: Request, res: Response, reply: StreamReply, principal: { userId: string; tokenId: string }): void;
}

/** A JSON answer; `json` is a body already serialized (a repository's SQL-built view), sent as it is. */
export interface JsonReply {
  status: number;
  body?: unknown;
  json?: string;
  headers?: Record<string, string>;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * The `/v1` request path after express's layers (docs/architecture.md "The request path"): openapi-backend's
 * router matches the operation and parses the request, the `bearerAuth` security requirement is checked, its
 * Ajv validators check the request, and the handler registered under the operationId answers. openapi-backend
 * stays the router and validator of record; what this leaves out is `handleRequest`'s pipeline around them (a
 * context built through several awaits, a `Promise.all` over security handlers, lodash on every request), so a
 * synchronous handler's answer is written in the same tick the request arrived (issue 18, BENCHMARKS.md §1).
 * The order, and so which problem a bad request gets, is openapi-backend's: 404/405, then 401/403 (before
 * validation: an anonymous caller learns nothing about a request's shape), then 400.
 */
export function createDispatcher(api: OpenAPIBackend, handlers: Handlers, authn: Authenticator, outlets: DispatchOutlets) {
  const byId = new Map(Object.entries(handlers)) as Map<string, (call: unknown) => unknown>;
  const validate = validateOnce(api.validator, api.router); // openapi-backend's validateRequest (routing.ts)

  function answer(req: Request, res: Response, operation: Operation, request: ApiRequest) {
    res.locals.operationId = operation.operationId; // the metrics' label (src/prometheus.ts)
    const auth = bearerAuth(operation, req, res, authn);
    if ('error' in auth) throw auth.error;
    const invalid = validate(request, operation);
    if (invalid) {
      const errors = fieldErrors(invalid);
      const n = errors.length;
      throw new AppError('validation_failed', `The request has ${n} problem${n === 1 ? '' : 's'}; see errors.`, errors);
    }
    const parsed = api.router.parseRequest(request, operation); // the parse validation just made (routing.ts)
    const handler = byId.get(operation.operationId!);
    if (!handler) throw new Error(`no handler for ${operation.operationId}`);
    return handler({
      principal: auth.principal,
      path: parsed.params,
      query: parsed.query,
      body: parsed.requestBody,
      headers: parsed.headers,
      serverRead: res.locals.serverRead as ServerRead | undefined,
    });
  }

  function reply(req: Request, res: Response, result: unknown, principal: { userId: string; tokenId: string }) {
    if (result && typeof result === 'object' && 'file' in result) return outlets.sendFile(res, result as FileReply);
    if (result && typeof result === 'object' && 'stream' in result) return outlets.stream(req, res, result as StreamReply, principal);
    sendJson(res, result as JsonReply);
  }

  return (req: Request, res: Response, next: NextFunction) => {
    try {
      checkPercentEncoding(req.path);
      const { request, operation, error } = routed(api, req, res);
      if (error) throw error;
      const result = answer(req, res, operation!, request);
      const principal = res.locals.principal as { userId: string; tokenId: string };
      if (result instanceof Promise) {
        result.then((r) => reply(req, res, r, principal)).then(undefined, next);
        return;
      }
      const sent = reply(req, res, result, principal);
      if (sent instanceof Promise) sent.then(undefined, next);
    } catch (err) {
      next(err);
    }
  };
}

/** The request as openapi-backend takes it, and the operation its router matched or the 404/405 it gives. */
interface Routed {
  request: ApiRequest;
  operation?: Operation;
  error?: AppError;
}

/**
 * Routes a request once (`res.locals.routed`): serverReadOf does it early for a GET, and the dispatcher then uses
 * the same request object, whose parse routing.ts keeps. Only a GET is routed before its body would be parsed,
 * and no GET takes a body (middleware.ts jsonBody).
 */
function routed(api: OpenAPIBackend, req: Request, res: Response): Routed {
  if (res.locals.routed) return res.locals.routed as Routed;
  const request: ApiRequest = {
    method: req.method,
    path: req.baseUrl + req.path,
    query: req.query as ApiRequest['query'], // express 5 parses the query string on every read of req.query
    headers: req.headers as ApiRequest['headers'],
    body: req.body,
  };
  let result: Routed;
  try {
    result = { request, operation: api.router.matchOperation(request, true) as Operation };
  } catch (err) {
    if (!String((err as Error).message).startsWith('405')) {
      result = { request, error: new AppError('not_found', `Nothing is served at ${request.path}.`) };
    } else {
      const allow = METHODS.filter((m) => api.router.matchOperation({ method: m, path: request.path, headers: {} }));
      const detail = `${request.method.toUpperCase()} is not allowed here.`;
      result = { request, error: new AppError('method_not_allowed', detail, undefined, { Allow: allow.join(', ') }) };
    }
  }
  res.locals.routed = result;
  return result;
}

/**
 * The server a GET reads and answers with, when openapi-backend routes it to getServer: its `server_id` as the
 * dispatcher will parse it. The token's lookup reads that server in the same statement (auth.ts resolveCaller);
 * the handler uses that read only for the same id. For any other request, or a path that does not parse, it is
 * undefined, and the dispatcher routes, refuses or answers the request as before.
 */
export function serverReadOf(api: OpenAPIBackend): (req: Request, res: Response) => string | undefined {
  return (req, res) => {
    if (req.method !== 'GET') return undefined;
    const { request, operation } = routed(api, req, res);
    if (operation?.operationId !== 'getServer') return undefined;
    try {
      const id = api.router.parseRequest(request, operation).params.server_id;
      return typeof id === 'string' ? id : undefined;
    } catch {
      return undefined; // a malformed percent-encoding: the dispatcher answers it (checkPercentEncoding)
    }
  };
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
