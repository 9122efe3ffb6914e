import zlib from 'node:zlib';
import fc from 'fast-check';
import {
  BAD_BODY_TEXTS, CONTENT_TYPES, HOSTILE_QUERY_NAMES, HOSTILE_QUERY_VALUES, HOSTILE_SEGMENTS, PROTO_KEYS,
  headerSafe, hostileJson, hostileString, pct, validArb, type Hints,
} from './arbitraries';
import type { UserFixture } from './fixtures';
import type { Json, RawRequest, SpecOperation } from './helpers';

/**
 * The fuzzer's cases: a request built from an operation's schemas (path ids as symbolic references to fixtures,
 * resolved when sent, so a case stays meaningful after a fixture was deleted and remade), plus up to three
 * mutations, all plain data so fast-check prints and shrinks them. `render` turns one into bytes.
 */

/** What `render` needs to know at send time: the users, and secrets of tokens that must be refused. */
export interface RenderContext {
  A: UserFixture; // the caller; has the `deleting` sink server
  B: UserFixture; // another user
  expiredSecret: string;
  revokedSecret: string;
}

export type AuthKind = 'caller' | 'none' | 'expired' | 'revoked' | 'foreign' | 'readonly' | 'manageOnly' | 'lowercase' | 'basic' | 'long';
export type Mutation =
  | { k: 'auth'; as: AuthKind }
  | { k: 'authGarbage'; value: string }
  | { k: 'method'; to: string }
  | { k: 'segment'; at: number; raw: string }
  | { k: 'param'; at: number; value: string }
  | { k: 'query'; name: string; value: string; raw: boolean }
  | { k: 'queryRepeat'; at: number }
  | { k: 'header'; name: string; value: string }
  | { k: 'bodySet'; at: number; value: unknown }
  | { k: 'bodyDrop'; at: number }
  | { k: 'bodyAdd'; at: number; key: string; value: unknown }
  | { k: 'bodyText'; text: string }
  | { k: 'bodyPad'; bytes: number }
  | { k: 'contentType'; value: string | null }
  | { k: 'contentEncoding'; value: string };

export interface Case {
  params: Record<string, string>; // '@ref' (resolved at send time) or a schema-valid value
  query: Array<[string, string]>;
  headers: Record<string, string>;
  body: unknown;
  mutations: Mutation[];
}

const REFS = ['@own', '@foreign', '@other'] as const;
export const paramsIn = (op: SpecOperation, where: string) => op.parameters.filter((p) => p.in === where);
const jsonBodySchema = (op: SpecOperation): Json | undefined => op.requestBody?.content['application/json']?.schema;
const isIdSchema = (schema: Json) => typeof schema?.pattern === 'string' && /^\^(srv|tok|act|mem|sch|run)_/.test(schema.pattern);

export function caseArb(op: SpecOperation, hints: Hints): fc.Arbitrary<Case> {
  const idOrRef = (schema: Json) =>
    isIdSchema(schema) ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...REFS) }, { weight: 1, arbitrary: validArb(schema) as fc.Arbitrary<string> }) : validArb(schema).map(String);
  const params = fc.record(Object.fromEntries(paramsIn(op, 'path').map((p) => [p.name, idOrRef(p.schema)])));
  const query = fc.tuple(...paramsIn(op, 'query').map((p) => fc.option(idOrRef(p.schema).map((v) => [p.name, String(v)] as [string, string]))))
    .map((pairs) => pairs.filter((x): x is [string, string] => x !== null));
  const headers = fc.tuple(...paramsIn(op, 'header').map((p) => fc.option(validArb(p.schema, hints, p.name).map((v) => [p.name, String(v)] as const))))
    .map((pairs) => Object.fromEntries(pairs.filter((x) => x !== null) as [string, string][]));
  const schema = jsonBodySchema(op);
  const body = schema ? (op.requestBody?.required ? validArb(schema, hints) : fc.option(validArb(schema, hints), { nil: undefined })) : fc.constant(undefined);
  const mutations = fc.oneof({ weight: 1, arbitrary: fc.constant([]) }, { weight: 4, arbitrary: fc.array(mutationArb(op), { minLength: 1, maxLength: 3 }) });
  return fc.record({ params, query, headers, body, mutations }) as fc.Arbitrary<Case>;
}

function mutationArb(op: SpecOperation): fc.Arbitrary<Mutation> {
  const hasBody = Boolean(op.requestBody);
  const nPath = paramsIn(op, 'path').length;
  const queryNames = paramsIn(op, 'query').map((p) => p.name);
  const headerNames = paramsIn(op, 'header').map((p) => p.name);
  const small = hostileString(2).map((s) => s.slice(0, 2000)); // keeps URLs under Node's 16 KiB header limit
  const w = (weight: number, arbitrary: fc.Arbitrary<Mutation>) => ({ weight, arbitrary });
  const options = [
    w(3, fc.constantFrom<AuthKind>('none', 'expired', 'revoked', 'foreign', 'readonly', 'manageOnly', 'lowercase', 'basic', 'long').map((as) => ({ k: 'auth', as }) as Mutation)),
    w(1, fc.oneof(hostileString(1), fc.string({ unit: 'binary-ascii', maxLength: 60 })).map((s) => ({ k: 'authGarbage', value: headerSafe(s) }) as Mutation)),
    w(1, fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD').map((to) => ({ k: 'method', to }) as Mutation)),
    w(2, fc.record({ k: fc.constant('query' as const), name: fc.constantFrom(...queryNames, ...HOSTILE_QUERY_NAMES), value: fc.constantFrom(...HOSTILE_QUERY_VALUES), raw: fc.constant(true) })),
    w(1, fc.record({ k: fc.constant('query' as const), name: fc.constantFrom(...queryNames, ...HOSTILE_QUERY_NAMES), value: small, raw: fc.constant(false) })),
    w(1, fc.record({ k: fc.constant('queryRepeat' as const), at: fc.nat() })),
    w(1, fc.record({ k: fc.constant('bodyText' as const), text: fc.constantFrom(...BAD_BODY_TEXTS) })),
    w(1, fc.record({ k: fc.constant('contentType' as const), value: fc.constantFrom(...CONTENT_TYPES) })),
    w(1, fc.record({ k: fc.constant('contentEncoding' as const), value: fc.constantFrom('gzip-valid', 'gzip', 'deflate', 'br', 'identity', 'compress', 'gzip, gzip', 'x-unknown') })),
  ];
  if (nPath > 0) {
    options.push(w(3, fc.record({ k: fc.constant('segment' as const), at: fc.nat(), raw: fc.constantFrom(...HOSTILE_SEGMENTS) })));
    options.push(w(2, fc.record({ k: fc.constant('param' as const), at: fc.nat(), value: small })));
  }
  if (headerNames.length > 0) {
    options.push(w(2, fc.record({ k: fc.constant('header' as const), name: fc.constantFrom(...headerNames), value: hostileString(4).map(headerSafe) })));
  }
  if (hasBody) {
    options.push(
      w(5, fc.record({ k: fc.constant('bodySet' as const), at: fc.nat(), value: hostileJson })),
      w(2, fc.record({ k: fc.constant('bodyDrop' as const), at: fc.nat() })),
      w(3, fc.record({ k: fc.constant('bodyAdd' as const), at: fc.nat(), key: fc.oneof(fc.constantFrom(...PROTO_KEYS), hostileString(1)), value: hostileJson })),
      w(2, fc.record({ k: fc.constant('bodyText' as const), text: fc.constantFrom(...BAD_BODY_TEXTS) })),
      w(1, fc.record({ k: fc.constant('bodyPad' as const), bytes: fc.integer({ min: 64 * 1024, max: 100 * 1024 }) })),
      w(2, fc.record({ k: fc.constant('contentType' as const), value: fc.constantFrom(...CONTENT_TYPES) })),
    );
  }
  return fc.oneof(...options);
}

// --- turning a case into bytes ----------------------------------------------------------------------------------

type PathKey = Array<string | number>;

/** Every node of a JSON value, as paths from the root (the root is []). */
function nodes(v: unknown, at: PathKey = []): PathKey[] {
  const out: PathKey[] = [at];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...nodes(x, [...at, i])));
  else if (v && typeof v === 'object') for (const k of Object.keys(v)) out.push(...nodes((v as Json)[k], [...at, k]));
  return out;
}

function getAt(v: Json, p: PathKey): Json {
  return p.reduce((x, k) => x?.[k], v);
}

/** Sets an own property, even `__proto__`, so JSON.stringify writes it as any other key. */
function setOwn(target: Json, key: string | number, value: unknown) {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

export function render(op: SpecOperation, c: Case, ctx: RenderContext): { req: RawRequest; note: string } {
  const { A, B, expiredSecret, revokedSecret } = ctx;
  let body: Json = c.body === undefined ? undefined : structuredClone(c.body);
  let text: string | undefined;
  let method = op.method.toUpperCase();
  let auth: AuthKind | { garbage: string } = 'caller';
  let contentType: string | null | undefined;
  let contentEncoding: string | undefined;
  let pad = 0;
  const segments: Record<string, string> = {};
  const pathParams = paramsIn(op, 'path');
  const query: Array<[string, string, boolean]> = c.query.map(([k, v]) => [k, v, false]);
  const headers: Record<string, string> = { ...c.headers };
  const copy = (v: unknown) => (v === undefined ? v : structuredClone(v));

  for (const m of c.mutations) {
    switch (m.k) {
      case 'auth': auth = m.as; break;
      case 'authGarbage': auth = { garbage: m.value }; break;
      case 'method': method = m.to; break;
      case 'segment': if (pathParams.length) segments[pathParams[m.at % pathParams.length].name] = m.raw; break;
      case 'param': if (pathParams.length) segments[pathParams[m.at % pathParams.length].name] = pct(m.value); break;
      case 'query': query.push([m.name, m.value, m.raw]); break;
      case 'queryRepeat': if (query.length) query.push(query[m.at % query.length]); break;
      case 'header': headers[m.name] = m.value; break;
      case 'bodySet': {
        const all = nodes(body);
        const p = all[m.at % all.length];
        if (p.length === 0) body = copy(m.value);
        else setOwn(getAt(body, p.slice(0, -1)), p[p.length - 1], copy(m.value));
        break;
      }
      case 'bodyDrop': {
        const keyed = nodes(body).filter((p) => p.length > 0 && typeof p[p.length - 1] === 'string');
        if (keyed.length) {
          const p = keyed[m.at % keyed.length];
          delete getAt(body, p.slice(0, -1))[p[p.length - 1]];
        }
        break;
      }
      case 'bodyAdd': {
        if (body === undefined || body === null || typeof body !== 'object') body = {};
        const objects = nodes(body).filter((p) => { const x = getAt(body, p); return x && typeof x === 'object' && !Array.isArray(x); });
        const target = objects.length ? getAt(body, objects[m.at % objects.length]) : body;
        setOwn(target, m.key, copy(m.value));
        break;
      }
      case 'bodyText': text = m.text; break;
      case 'bodyPad': pad = m.bytes; break;
      case 'contentType': contentType = m.value; break;
      case 'contentEncoding': contentEncoding = m.value; break;
    }
  }

  // Body text: raw numbers ({ raw }) go in as written, which JSON.stringify cannot do.
  if (text === undefined && body !== undefined) {
    const raws: string[] = [];
    text = JSON.stringify(body, (_k, v) => {
      if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && typeof v.raw === 'string') {
        raws.push(v.raw);
        return `@@RAW${raws.length - 1}@@`;
      }
      return v;
    });
    text = text.replace(/"@@RAW(\d+)@@"/g, (_m, i) => raws[Number(i)]);
  }
  if (text !== undefined && pad) text += ' '.repeat(pad);

  // Resolve ids. The start guard (see fuzz.test.ts): a body that might parse as start/restart goes to the sink.
  const mightStart =
    ['createServerAction', 'createServerSchedule', 'updateServerSchedule'].includes(op.operationId) &&
    text !== undefined &&
    (/tart|\\u|\\/.test(text) || /utf-7/i.test(contentType ?? ''));
  const resolve = (name: string, value: string, schema: Json): string => {
    const kind = /^\^(srv|tok|act|whk|mem|sch|run)_/.exec(schema.pattern ?? '')?.[1];
    if (kind === 'srv' && mightStart && name === 'server_id') return A.sink!;
    if (!value.startsWith('@')) return pct(value);
    if (kind === 'srv') return value === '@own' ? A.server : value === '@foreign' ? B.server : A.sink!;
    if (kind === 'act') return value === '@foreign' ? B.action : A.action;
    if (kind === 'whk') return value === '@foreign' ? B.webhook : A.webhook;
    if (kind === 'mem') return value === '@foreign' ? B.member : A.member;
    if (kind === 'sch') return value === '@foreign' ? B.schedule : A.schedule;
    if (kind === 'run') return value === '@foreign' ? B.run : A.run;
    if (kind === 'tok') return value === '@own' ? A.tokens.spare.id : value === '@foreign' ? B.tokens.caller.id : A.tokens.caller.id;
    return pct(value);
  };
  for (const p of pathParams) {
    const given = segments[p.name];
    segments[p.name] = mightStart && p.name === 'server_id' ? A.sink! : given ?? resolve(p.name, c.params[p.name], p.schema);
  }
  const qs = query
    .map(([k, v, raw]) => {
      const schema = paramsIn(op, 'query').find((p) => p.name === k)?.schema;
      const value = !raw && schema && v.startsWith('@') ? resolve(k, v, schema) : raw ? v : pct(v);
      return `${raw ? k : pct(k)}=${value}`;
    })
    .join('&');
  const path = op.path.replace(/\{([^}]+)\}/g, (_m, n: string) => segments[n]) + (qs ? `?${qs}` : '');

  const secret =
    typeof auth === 'object' ? auth.garbage
    : auth === 'none' || auth === 'basic' ? ''
    : auth === 'expired' ? expiredSecret
    : auth === 'revoked' ? revokedSecret
    : auth === 'foreign' ? B.tokens.caller.secret
    : auth === 'readonly' ? A.tokens.readonly.secret
    : auth === 'manageOnly' ? A.tokens.manageOnly.secret
    : auth === 'long' ? 'gsh_' + 'A'.repeat(300)
    : A.tokens.caller.secret;
  const out: Record<string, string> = {};
  if (auth === 'basic') out.Authorization = `Basic ${Buffer.from('alice:secret').toString('base64')}`;
  else if (auth === 'lowercase') out.Authorization = `bearer ${secret}`;
  else if (auth !== 'none') out.Authorization = `Bearer ${secret}`;
  for (const [k, v] of Object.entries(headers)) out[k] = headerSafe(v);

  let bytes: Buffer | undefined = text === undefined ? undefined : Buffer.from(text, 'utf8');
  if (bytes !== undefined) {
    const type = contentType === undefined ? 'application/json' : contentType;
    if (type !== null) out['Content-Type'] = type;
    if (contentEncoding === 'gzip-valid') {
      bytes = zlib.gzipSync(bytes);
      out['Content-Encoding'] = 'gzip';
    } else if (contentEncoding !== undefined) out['Content-Encoding'] = contentEncoding;
  }
  const note = `auth=${typeof auth === 'object' ? 'garbage' : auth}${mightStart ? ' (start guard: aimed at the deleting server)' : ''}`;
  return { req: { method, path, headers: out, body: bytes }, note };
}
