import type { Response } from 'express';
import type { ErrorObject } from 'ajv';
import { AppError, errorRegistry, schemaRule, type FieldError } from '../errors';
import type { components } from '../../generated/v1';

/** The problem type base when no public URL is known (a request the HTTP parser refused, unit tests). */
export const PROBLEM_BASE = 'https://gsh.example.com/problems/';

/** Retry-After of a 503 whose throw site names no time: a shutdown or restart is over in seconds. */
export const RETRY_AFTER_503_S = 5;

export type ProblemDocument = components['schemas']['Problem'];

/**
 * The one place a problem document is built (RFC 9457 §3: type, title, status, detail, instance; plus our `code`,
 * `errors` and the extension members of §3.2, such as a quota's `limit`). Status and title come from the error
 * registry, never from the caller. `instance` is the request path; it is left out when there is none, as for a
 * request the HTTP parser refused (src/http/client-errors.ts).
 */
export function problemDocument(err: AppError, instance?: string, requestId?: string, base = PROBLEM_BASE): ProblemDocument {
  const entry = errorRegistry[err.code];
  return {
    type: base + err.code,
    title: entry.title,
    status: entry.status,
    // The spec bounds both (maxLength 2000); a long request path must not make the answer break the contract.
    detail: err.detail.slice(0, 2000),
    ...(instance !== undefined ? { instance: instance.slice(0, 2000) } : {}),
    code: err.code,
    ...(requestId !== undefined ? { request_id: requestId } : {}),
    ...(err.errors ? { errors: err.errors } : {}),
    ...err.extensions, // RFC 9457 §3.2 extension members (quota_exceeded: quota, limit, used)
  };
}

/**
 * `<PUBLIC_URL>/problems/`, where this service serves a page per code (src/http/problem-pages.ts), so a problem's
 * `type` resolves (RFC 9457 §3.1.1). createApp keeps it in the app's locals: the one app's setting, not a global.
 */
function problemBase(res: Response): string {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a stand-in Response without express's `app` (test/unit/errors.test.ts) gets the default
  const base = (res.app?.locals as { problemBase?: string } | undefined)?.problemBase;
  return typeof base === 'string' ? base : PROBLEM_BASE;
}

/** Answers with the problem document of `err`, its registered status and any headers it carries. */
export function sendProblem(res: Response, err: AppError, instance: string): void {
  for (const [name, value] of Object.entries(err.headers ?? {})) res.setHeader(name, value);
  res.locals.problemCode = err.code; // the operator's metrics count rate_limited answers (src/prometheus.ts)
  // Every 503 says when to come back (RFC 9110 §10.2.3; docs/conventions.md "Errors"); a throw site may say more.
  if (errorRegistry[err.code].status === 503 && !res.hasHeader('Retry-After')) res.setHeader('Retry-After', String(RETRY_AFTER_503_S));
  res
    .status(errorRegistry[err.code].status)
    .type('application/problem+json')
    .send(JSON.stringify(problemDocument(err, instance, res.getHeader('Request-Id') as string | undefined, problemBase(res))));
}

/**
 * Turns Ajv errors from openapi-backend into JSON Pointers into the request. openapi-backend validates one object
 * `{ path, query, header, requestBody }`; we root pointers at `/path`, `/query`, `/header` and `/body`, and point
 * `required` / `additionalProperties` errors at the property itself rather than its parent (RFC 6901).
 */
export function fieldErrors(errors: ErrorObject[]): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of meantBranches(errors)) {
    // oneOf/anyOf wrappers repeat what their branches already said.
    if (e.keyword === 'oneOf' || e.keyword === 'anyOf' || e.keyword === 'if') continue;
    let pointer = e.instancePath;
    const params = e.params as Record<string, unknown>;
    if (e.keyword === 'required') pointer += `/${escape(String(params.missingProperty))}`;
    if (e.keyword === 'additionalProperties') pointer += `/${escape(String(params.additionalProperty))}`;
    if (e.keyword === 'parse' || pointer === '') pointer = '/body';
    pointer = pointer.replace(/^\/requestBody/, '/body');
    const detail = describe(e);
    const key = `${pointer} ${detail}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ pointer: pointer.slice(0, 300), detail: detail.slice(0, 500), ...schemaRule(e) });
  }
  return out.slice(0, 100);
}


/**
 * The errors of a oneOf's branches the request was not meant for are left out. A oneOf of the spec's request schemas
 * (an alert rule by `kind`, an action by `type`, a backup schedule or `null`) fails with the errors of every branch,
 * and draft-07 Ajv cannot read the OpenAPI discriminator that says which branch a value meant. A branch whose own
 * `type` the value does not have, or whose tag property (an `enum` or `const` on one of its properties) the value
 * does not match, was not meant: its errors go, unless no branch of that oneOf is left.
 */
function meantBranches(errors: ErrorObject[]): ErrorObject[] {
  // schemaPath "…/oneOf/<n>/<rest>" for each oneOf an error is under, outermost first.
  const branchesOf = (e: ErrorObject) => [...e.schemaPath.matchAll(/\/oneOf\/(\d+)(?=\/|$)/g)].map((m) => ({
    oneOf: e.schemaPath.slice(0, m.index + '/oneOf'.length),
    branch: e.schemaPath.slice(0, m.index + m[0].length),
    rest: e.schemaPath.slice(m.index + m[0].length),
  }));
  const at = new Map(errors.filter((e) => e.keyword === 'oneOf').map((e) => [e.schemaPath, e.instancePath]));
  const mismatched = new Set<string>();
  const branches = new Map<string, Set<string>>();
  for (const e of errors) {
    for (const { oneOf, branch, rest } of branchesOf(e)) {
      branches.set(oneOf, (branches.get(oneOf) ?? new Set()).add(branch));
      const base = at.get(oneOf);
      const tag = /^\/properties\/([^/]+)\/(enum|const)$/.exec(rest);
      if ((rest === '/type' && e.instancePath === base) || (tag && e.instancePath === `${base}/${tag[1]}`)) mismatched.add(branch);
    }
  }
  const dropped = new Set<string>();
  for (const all of branches.values()) {
    const meant = [...all].filter((b) => !mismatched.has(b));
    if (meant.length > 0) for (const b of all) if (mismatched.has(b)) dropped.add(b);
  }
  return errors.filter((e) => !branchesOf(e).some(({ branch }) => dropped.has(branch)));
}

function escape(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function describe(e: ErrorObject): string {
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known property';
    case 'enum':
      return `must be one of: ${(params.allowedValues as unknown[]).join(', ')}`;
    case 'parse':
      return 'is not valid JSON';
    default:
      return e.message ?? 'is not valid';
  }
}
