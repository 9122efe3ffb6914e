import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { loadSpec, type Spec } from '../../src/spec';
import type { SentResponse } from '../../src/app';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The failures of one answer against the spec; none when it keeps to it. */
export type ContractChecker = (sent: SentResponse) => string[];

/**
 * Checks answers against openapi/v1.yaml: the status is one the operation documents, the content type is one it
 * documents for that status, the body matches the schema, and /v1 answers carry the rate-limit headers. Every
 * test app runs it on every response (docs/conventions.md "Tests": code and contract cannot drift).
 */
export async function createContractChecker(spec: Spec = loadSpec()): Promise<ContractChecker> {
  const definition = closedResponses(structuredClone(spec.document) as Json);
  // quick: dereferenced synchronously, as src/http/openapi.ts does (test/unit/openapi.test.ts: the same document).
  // Loaded here, not at the top: a jest worker builds one checker for all its files (test/helpers/app.ts).
  const { OpenAPIBackend } = await import('openapi-backend');
  const api = new OpenAPIBackend({ definition: definition as never, validate: false, strict: true, quick: true });
  await api.init();
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  const compiled = new Map<string, ValidateFunction>();
  const problemSchema = (api.definition as Json).components.schemas.Problem;

  function validator(key: string, schema: unknown): ValidateFunction {
    let v = compiled.get(key);
    if (!v) compiled.set(key, (v = ajv.compile(schema as object)));
    return v;
  }

  return function check(sent: SentResponse): string[] {
    const failures: string[] = [];
    const where = `${sent.method} ${sent.path} → ${sent.status}`;
    const type = sent.contentType.split(';')[0].trim();
    const isJson = /^application\/(.+\+)?json$/.test(type);
    let body: unknown;
    try {
      body = sent.body && isJson ? JSON.parse(sent.body) : undefined;
    } catch {
      return [`${where}: a ${type} body that is not JSON`];
    }
    // docs/conventions.md "Request ids": every answer has one, and a problem document repeats it.
    if (typeof sent.headers['request-id'] !== 'string') failures.push(`${where}: no request-id header`);
    if (type === 'application/problem+json' && (body as Json | undefined)?.request_id !== sent.headers['request-id']) {
      failures.push(`${where}: the problem's request_id is not the Request-Id header`);
    }
    // A CORS preflight is the browser's question, not an operation (docs/conventions.md "Browsers").
    if (sent.method === 'OPTIONS' && sent.status === 204 && !sent.body) return failures;
    if (!sent.path.startsWith('/v1')) {
      if (sent.status >= 400 && !(type === 'application/problem+json' && validator('problem', problemSchema)(body))) {
        failures.push(`${where}: an error outside /v1 that is not a problem document`);
      }
      return failures;
    }
    for (const h of ['ratelimit', 'ratelimit-policy']) {
      if (sent.headers[h] === undefined) failures.push(`${where}: no ${h} header`);
    }
    const operation = api.matchOperation({ method: sent.method, path: sent.path, headers: {} }) as Json | undefined;
    if (!operation) {
      // Unknown routes and methods are not operations; their answer must still be a problem document.
      if (!(type === 'application/problem+json' && validator('problem', problemSchema)(body))) {
        failures.push(`${where}: not a problem document`);
      }
      return failures;
    }
    const response = operation.responses?.[String(sent.status)];
    if (!response) return [...failures, `${where}: status not documented for ${operation.operationId}`];
    if (!response.content) {
      if (sent.body) failures.push(`${where}: a body where the spec documents none`);
      return failures;
    }
    const media = response.content[type];
    if (!media) return [...failures, `${where}: content type "${type}" not documented (${Object.keys(response.content)})`];
    const validate = validator(`${operation.operationId} ${sent.status} ${type}`, media.schema);
    if (isJson && !validate(body)) failures.push(`${where}: body does not match the spec: ${ajv.errorsText(validate.errors)}`);
    return failures;
  };
}

/**
 * The spec lets response objects grow within v1 (openapi/v1.yaml "Evolution": no response schema forbids extra
 * properties), but this service must still send only what it documents. So the checker closes every object
 * schema that lists properties, Problem excepted (RFC 9457 §3.2: extension members are open by design).
 */
function closedResponses(spec: Json): Json {
  const close = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(close);
    if (!node || typeof node !== 'object') return;
    const o = node as Json;
    if (o.properties && o.additionalProperties === undefined) o.additionalProperties = false;
    Object.values(o).forEach(close);
  };
  for (const [name, schema] of Object.entries(spec.components.schemas as Json)) if (name !== 'Problem') close(schema);
  // An open enum's last branch takes what a later version adds (x-open-enum, docs/conventions.md "Evolution"), for
  // clients; this service sends only what it lists: the branches before it, exactly one of them.
  const known = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(known);
    if (!node || typeof node !== 'object') return;
    const o = node as Json;
    if (o['x-open-enum'] === true) {
      const branches = (o.anyOf ?? o.oneOf) as unknown[];
      delete o.anyOf;
      o.oneOf = branches.slice(0, -1);
    }
    Object.values(o).forEach(known);
  };
  known(spec.components.schemas);
  return spec;
}

/** The failures of one webhook delivery (its headers and raw body) against the spec; none when it keeps to it. */
export type WebhookChecker = (delivery: { headers: Record<string, string | string[] | undefined>; body: string }) => string[];

/**
 * Checks webhook deliveries against openapi/v1.yaml's top-level `webhooks` (OpenAPI 3.1 §4.8.1): the entry named
 * by the body's `type`, its required headers present and matching their schemas (the Standard Webhooks headers),
 * the content type one its request body documents, and the body matching that schema, closed as answers are
 * (closedResponses: the service sends only what it documents). `entries` lists every `webhooks` entry, so a test
 * can require that each one was checked.
 */
export async function createWebhookChecker(spec: Spec = loadSpec()): Promise<{ check: WebhookChecker; entries: string[] }> {
  const { OpenAPIBackend } = await import('openapi-backend');
  // Dereferenced as createContractChecker's document is (quick: synchronously, the whole document, webhooks too).
  const api = new OpenAPIBackend({ definition: closedResponses(structuredClone(spec.document) as Json) as never, validate: false, strict: true, quick: true });
  await api.init();
  const webhooks = (api.definition as Json).webhooks as Record<string, Json>;
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  const compiled = new Map<string, ValidateFunction>();
  const validator = (key: string, schema: unknown): ValidateFunction => {
    let v = compiled.get(key);
    if (!v) compiled.set(key, (v = ajv.compile(schema as object)));
    return v;
  };

  function check({ headers, body: raw }: Parameters<WebhookChecker>[0]): string[] {
    let body: Json;
    try {
      body = JSON.parse(raw) as Json;
    } catch {
      return ['a webhook body that is not JSON'];
    }
    const where = `webhook ${String(body?.type)} ${String(body?.id)}`;
    const operation = webhooks[body?.type]?.post as Json | undefined;
    if (!operation) return [`${where}: no entry in the spec's webhooks for this type`];
    const failures: string[] = [];
    for (const p of (operation.parameters ?? []) as Json[]) {
      if (p.in !== 'header') continue;
      const value = headers[String(p.name).toLowerCase()];
      if (value === undefined) {
        if (p.required) failures.push(`${where}: no ${p.name} header`);
        continue;
      }
      const v = validator(`${body.type} header ${p.name}`, p.schema);
      if (!v(value)) failures.push(`${where}: header ${p.name} "${String(value)}" does not match the spec: ${ajv.errorsText(v.errors)}`);
    }
    const type = String(headers['content-type'] ?? '').split(';')[0].trim();
    const media = operation.requestBody?.content?.[type] as Json | undefined;
    if (!media) return [...failures, `${where}: content type "${type}" not documented (${Object.keys(operation.requestBody?.content ?? {})})`];
    const v = validator(`${body.type} body ${type}`, media.schema);
    if (!v(body)) failures.push(`${where}: body does not match the spec: ${ajv.errorsText(v.errors)}`);
    return failures;
  }

  return { check, entries: Object.keys(webhooks) };
}
