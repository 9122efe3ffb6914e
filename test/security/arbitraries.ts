import fc from 'fast-check';
import type { Json } from './helpers';

/**
 * fast-check arbitraries built from the spec's own JSON Schemas (the subset openapi/v1.yaml uses: type and type
 * lists, enum, const, oneOf/anyOf, pattern, min/maxLength, minimum/maximum, format date-time, items, min/maxItems,
 * uniqueItems, properties, additionalProperties, required, minProperties), and the hostile values the fuzzer mutates them with.
 */

/** Values to prefer for a property of this name (plan and version ids the catalog really has); `*key`: a map's keys. */
export type Hints = Record<string, readonly unknown[]>;

/** Ajv (which openapi-backend validates with) counts string length in code points and compiles patterns with `u`. */
export const codePoints = (s: string) => [...s].length;

export function validArb(schema: Json, hints: Hints = {}, name?: string): fc.Arbitrary<unknown> {
  const base = baseValid(schema ?? {}, hints);
  const hinted = name !== undefined ? hints[name] : undefined;
  if (!hinted || hinted.length === 0) return base;
  return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...hinted) }, { weight: 1, arbitrary: base });
}

/**
 * `arb.filter(keep)` that fails loudly when `keep` refuses 10,000 values in a row. fast-check retries a filter
 * without end, synchronously, so a schema no value can satisfy would block the event loop: no time limit and no
 * jest timeout fires, and the run hangs until CI kills it.
 */
function filterOrFail<T>(arb: fc.Arbitrary<T>, keep: (v: T) => boolean, what: string): fc.Arbitrary<T> {
  let misses = 0;
  return arb.filter((v) => {
    if (keep(v)) {
      misses = 0;
      return true;
    }
    if (++misses >= 10_000) throw new Error(`fuzz generator: 10,000 values in a row failed ${what}; fix the arbitrary for this schema`);
    return false;
  });
}

function baseValid(schema: Json, hints: Hints): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const alternatives = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(alternatives)) return fc.oneof(...alternatives.map((s: Json) => validArb(s, hints)));
  if (Array.isArray(schema.type)) return fc.oneof(...schema.type.map((type: string) => baseValid({ ...schema, type }, hints)));
  const type = schema.type ?? (schema.properties ? 'object' : undefined);
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -(2 ** 31), max: schema.maximum ?? 2 ** 31 });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e9, max: schema.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true });
    case 'string':
      return stringArb(schema);
    case 'array': {
      const items = validArb(schema.items ?? {}, hints);
      const c = { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 5, 5) };
      return schema.uniqueItems ? fc.uniqueArray(items, { ...c, selector: (v) => JSON.stringify(v) }) : fc.array(items, c);
    }
    case 'object': {
      const props = Object.entries<Json>(schema.properties ?? {});
      const model = Object.fromEntries(props.map(([k, s]) => [k, validArb(s, hints, k)]));
      const required: string[] = schema.required ?? [];
      const record = fc.record(model, { requiredKeys: required as never[] }) as fc.Arbitrary<Record<string, unknown>>;
      const min = schema.minProperties ?? 0;
      if (typeof schema.additionalProperties === 'object') {
        // A map (SettingsChange): names the hints prefer (`*key`, the catalog's setting names) or any, and enough
        // of them for minProperties. Without this a map with no `properties` could never reach minProperties, and
        // the filter below would spin forever in generation, where no time limit or jest timeout can stop it.
        const keys = hints['*key']?.length ? fc.oneof(fc.constantFrom(...(hints['*key'] as string[])), fc.string({ maxLength: 40 })) : fc.string({ maxLength: 40 });
        const extra = fc.dictionary(keys, validArb(schema.additionalProperties, hints), { minKeys: Math.max(0, min - required.length), maxKeys: Math.max(3, min) });
        const merged = fc.tuple(extra, record).map(([e, r]) => ({ ...e, ...r }));
        return min > 0 ? filterOrFail(merged, (o) => Object.keys(o).length >= min, 'minProperties') : merged;
      }
      if (min > props.length) throw new Error(`minProperties ${min} with ${props.length} properties and no additionalProperties: no value can be generated`);
      return min > 0 ? filterOrFail(record, (o) => Object.keys(o).length >= min, 'minProperties') : record;
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function stringArb(schema: Json): fc.Arbitrary<string> {
  const min: number = schema.minLength ?? 0;
  const max: number = Math.min(schema.maxLength ?? 64, 200);
  const fits = (s: string) => codePoints(s) >= min && codePoints(s) <= max;
  if (schema.format === 'date-time') {
    return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
  }
  if (schema.pattern) {
    const strict = new RegExp(schema.pattern, 'u');
    let gen: fc.Arbitrary<string>;
    try {
      gen = fc.stringMatching(new RegExp(schema.pattern), { maxLength: max });
    } catch {
      gen = fc.string({ unit: 'grapheme', minLength: min, maxLength: max });
    }
    return filterOrFail(gen, (s) => fits(s) && strict.test(s), `pattern ${schema.pattern}`);
  }
  return fc.string({ unit: 'grapheme', minLength: min, maxLength: max });
}

// --- hostile values ---------------------------------------------------------------------------------------------

/** Strings that have broken services before: traversal, SQL, injection, prototype keys, odd unicode. */
export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  '../../../../etc/passwd',
  '..\\..\\windows\\win.ini',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  '..%2F..%2F',
  '....//....//',
  '/',
  '\\',
  "' OR '1'='1",
  "'; DROP TABLE servers; --",
  '" OR 1=1 --',
  "srv_1' UNION SELECT hash FROM tokens --",
  '%',
  '%00',
  '%zz',
  '\u0000',
  'a\u0000b',
  '\r\nX-Injected: 1',
  '\u202Egnp.exe',
  '\u200F\u05E9\u05DC\u05D5\u05DD',
  'e\u0301\u0301\u0301\u0301',
  '😀𝕏\u{10FFFF}',
  '\uD800',
  '\uDFFF\uD800',
  '\uFEFF',
  '\u2028\u2029',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '$(reboot)',
  '`id`',
  '{{7*7}}',
  '${jndi:ldap://x/a}',
  '<script>alert(1)</script>',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-1',
  '1e400',
  'srv_' + 'A'.repeat(41),
  'tok_0',
  'act_0',
  'gsh_' + 'A'.repeat(43),
];

const ODD_UNITS = fc.constantFrom(
  '\u0000', '\u0001', '\u001B', '\u007F', '\u0085', '\u00A0', '\u2028', '\u202E', '\u200F', '\u0301', '\uFEFF', '\uD800',
  '\uDFFF', '😀', '𝕏', '\u{10FFFF}', '\u05D0', '\u0627', 'a', '/', '.', '%', '"', '\\', "'", ' ',
);

export function hostileString(maxHuge = 100): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme-composite', maxLength: 20 }) },
    { weight: 2, arbitrary: fc.string({ unit: ODD_UNITS, minLength: 1, maxLength: 16 }) },
    // 1 KB to maxHuge KB: past every maxLength, and past the 64 KiB body limit at the top of the range.
    { weight: 1, arbitrary: fc.integer({ min: 1, max: maxHuge }).map((k) => 'A'.repeat(k * 1000)) },
  );
}

/** A JSON value nested `depth` levels deep. */
export function deep(depth: number, leaf: unknown = 1): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

/** JSON numbers JavaScript cannot hold exactly, or that are not what a schema wants; as raw JSON text. */
export const RAW_NUMBERS = ['1e400', '-1e400', '1e-400', '-0', '0.5', '-1', '9007199254740993', '123456789012345678901234567890', '1E2', '0'];

/** A hostile JSON value; `{ raw }` stands for JSON text inserted as is (numbers JSON.stringify cannot write). */
export const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: hostileString() },
  { weight: 2, arbitrary: fc.constantFrom(...RAW_NUMBERS).map((raw) => ({ raw })) },
  { weight: 1, arbitrary: fc.constantFrom(true, false, null, 0, -1, 1.5, 2 ** 31, 2 ** 53 + 2, [], {}, [null], { '': '' }) },
  { weight: 1, arbitrary: fc.constantFrom(100, 1000).map((d) => deep(d)) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

/** Whole bodies that are not valid JSON, or JSON of the wrong shape, or too deep, or too big. */
export const BAD_BODY_TEXTS: readonly string[] = [
  '',
  ' ',
  '{',
  '}',
  '{"a":1',
  '{"a":1,}',
  "{'a':1}",
  '{"a":NaN}',
  '{"a":undefined}',
  '{a:1}',
  'null',
  'true',
  '"a string"',
  '123',
  '[]',
  '[{}]',
  '\uFEFF{}',
  '{"a":1}garbage',
  '{"a":1}{"b":2}',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  '{"a":"\u0000"}',
  '\u0000',
  '{"__proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"__proto__":null}',
  '{"a":1,"a":2}',
  '{"a":' + '9'.repeat(5000) + '}',
  '{"a":' .repeat(1000) + '1' + '}'.repeat(1000),
  '['.repeat(1000) + ']'.repeat(1000),
  // As deep as 64 KiB allows: deeper than any recursive walker's stack is comfortable with.
  '['.repeat(32_000) + ']'.repeat(32_000),
  '{"a":' .repeat(10_000) + '1' + '}'.repeat(10_000),
];

export const CONTENT_TYPES: readonly (string | null)[] = [
  null,
  '',
  'text/plain',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/xml',
  'application/octet-stream',
  'application/json; charset=utf-16',
  'application/json; charset=utf-16le',
  'application/json; charset=latin1',
  'application/json; charset=utf-7',
  'application/json; charset=ebcdic',
  'application/json; charset="utf-8"',
  'application/json;;;',
  'APPLICATION/JSON',
  'application/jsonx',
  'application/merge-patch+json',
  'application/problem+json',
  '*/*',
  'application/',
];

/** Query values a careless parser mishandles. */
export const HOSTILE_QUERY_VALUES: readonly string[] = [
  '',
  '-1',
  '0',
  '1.5',
  '1e400',
  '1e2',
  '99999999999999999999999',
  'NaN',
  'Infinity',
  '0x10',
  '%20%205',
  '+5',
  '5%20',
  '%EF%BC%91', // fullwidth 1
  'true',
  'null',
  '[]',
  '%',
  '%zz',
  '%E0%A4%A',
  '%00',
  '%2e%2e%2f',
  'a%26b%3Dc',
];

export const HOSTILE_QUERY_NAMES: readonly string[] = ['__proto__', 'constructor', 'prototype', 'limit[]', 'limit[0]', 'a[b]', 'LIMIT', '', '%00', 'toString'];

/** Path segments sent raw on the request line (already encoded where they need to be, or deliberately not). */
export const HOSTILE_SEGMENTS: readonly string[] = [
  '',
  '.',
  '..',
  '%2e%2e',
  '%2e%2e%2f%2e%2e%2f',
  '..%2F..%2Fetc%2Fpasswd',
  '%2F',
  '%5C',
  'srv_abc%2F..%2F..',
  'srv_abc%00',
  '%00',
  '%',
  '%zz',
  '%E0%A4%A',
  '%C0%AE%C0%AE',
  '%252e%252e',
  "srv_1'%20OR%20'1'='1",
  'srv_' + 'a'.repeat(41),
  'srv_' + 'a'.repeat(3000),
  '__proto__',
  'constructor',
];

/** Percent-encodes the UTF-8 of `s` (lone surrogates become U+FFFD, as a client would send them). */
export function pct(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** What an HTTP header can carry (RFC 9110 field-value: VCHAR, obs-text, SP, HTAB); the rest is dropped. */
export function headerSafe(s: string): string {
  return [...s].filter((c) => /[\t\x20-\x7E\x80-\xFF]/.test(c)).join('').trim();
}
