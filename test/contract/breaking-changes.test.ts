// A breaking-change gate (issue 42 §2; docs/conventions.md "Evolution"): openapi/v1.yaml against the last released
// spec kept in openapi/released/. A change a v1 client could break on (an operation or its id gone, an enum value
// or a response property gone, a request made stricter: a parameter or body field newly required, a pattern or
// bound changed) fails unless the major version moved or CHANGELOG.md's entry for this version lists it, by name,
// under a "Breaking" heading with its reason. Not an outside tool: oasdiff is not on npm, openapi-diff cannot read
// 3.1, and @useoptic/optic was not added as a dependency here (see the CHANGELOG 1.5.0 entry); this reads the two
// documents itself, only for the kinds of change above.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const root = path.join(__dirname, '..', '..');
const current = YAML.parse(fs.readFileSync(path.join(root, 'openapi', 'v1.yaml'), 'utf8')) as Json;
const releasedDir = path.join(root, 'openapi', 'released');
const byVersion = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });
const lastReleased = fs.readdirSync(releasedDir).filter((f) => /^\d+\.\d+\.\d+\.yaml$/.test(f)).sort(byVersion).at(-1)!;
const released = YAML.parse(fs.readFileSync(path.join(releasedDir, lastReleased), 'utf8')) as Json;

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

/** One breaking change: `name` is what the CHANGELOG must name (an operationId or a component, in backticks). */
interface Finding { name: string; what: string }

/** The breaking changes from `before` to `after`, of the kinds this gate reads. */
export function breakingChanges(before: Json, after: Json): Finding[] {
  const out: Finding[] = [];
  for (const [p, item] of Object.entries<Json>(before.paths ?? {})) {
    for (const m of METHODS) {
      const op = item[m];
      if (!op) continue;
      const now = after.paths?.[p]?.[m];
      if (!now) { out.push({ name: op.operationId, what: `${m.toUpperCase()} ${p} removed` }); continue; }
      if (now.operationId !== op.operationId) out.push({ name: op.operationId, what: `renamed to ${now.operationId}` });
      const required = (o: Json) => new Set(((o.parameters ?? []) as Json[]).filter((x) => x.required && x.name).map((x) => `${x.in}:${x.name}`));
      const was = required(op);
      for (const r of required(now)) if (!was.has(r)) out.push({ name: now.operationId, what: `parameter ${r} newly required` });
    }
  }
  const schemasBefore: Json = before.components?.schemas ?? {};
  const schemasAfter: Json = after.components?.schemas ?? {};
  for (const [name, s] of Object.entries<Json>(schemasBefore)) {
    const t = schemasAfter[name];
    if (!t) continue; // a rename changes SDK names, never the wire: CHANGELOG lists it, it is not breaking
    compare(name, s, t, out, '');
  }
  return out;
}

/**
 * An open enum (x-open-enum, docs/conventions.md "Evolution") as its known values: its branches but the last, which
 * takes any value. Opening a response's closed enum is then no change (a client already treats a value it does not
 * know as other, and one made from the earlier spec never sees the later one), while dropping a known value is found.
 */
function known(x: Json): Json {
  if (!x || x['x-open-enum'] !== true) return x;
  const branches = ((x.anyOf ?? x.oneOf) as Json[]).slice(0, -1);
  return branches.length === 1 ? branches[0] : { oneOf: branches };
}

/** One schema against its next version, down its properties, items and branches by position. */
function compare(name: string, s0: Json, t0: Json, out: Finding[], at: string): void {
  const [s, t] = [known(s0), known(t0)];
  if (!s || !t || typeof s !== 'object' || typeof t !== 'object') return;
  if (Array.isArray(s.enum) && Array.isArray(t.enum)) {
    for (const v of s.enum) if (!t.enum.includes(v)) out.push({ name, what: `${at || '.'}: enum value ${JSON.stringify(v)} removed` });
  }
  if (s.pattern !== undefined && s.pattern !== t.pattern) out.push({ name, what: `${at || '.'}: pattern changed` });
  for (const k of ['maxLength', 'maximum', 'maxItems'] as const) if (typeof s[k] === 'number' && typeof t[k] === 'number' && t[k] < s[k]) out.push({ name, what: `${at || '.'}: ${k} lowered` });
  for (const k of ['minLength', 'minimum', 'minItems'] as const) if (typeof s[k] === 'number' && typeof t[k] === 'number' && t[k] > s[k]) out.push({ name, what: `${at || '.'}: ${k} raised` });
  const closed = t.additionalProperties === false; // a request body (docs/conventions.md "The contract")
  if (closed) for (const r of t.required ?? []) if (!(s.required ?? []).includes(r)) out.push({ name, what: `${at}/${r} newly required` });
  if (!closed && s.properties) for (const p of Object.keys(s.properties)) if (!t.properties?.[p]) out.push({ name, what: `${at}/${p} removed` });
  for (const [p, v] of Object.entries<Json>(s.properties ?? {})) compare(name, v, t.properties?.[p], out, `${at}/${p}`);
  compare(name, s.items, t.items, out, `${at}[]`);
  for (const k of ['oneOf', 'anyOf', 'allOf'] as const) (s[k] ?? []).forEach((b: Json, i: number) => compare(name, b, t[k]?.[i], out, `${at}/${k}/${i}`));
}

/** The "Breaking" blocks of `version`'s CHANGELOG entry, as one text. */
function declaredBreaking(version: string): string {
  const changelog = fs.readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8');
  const entry = changelog.split(/^## /m).find((e) => e.startsWith(`${version}\n`)) ?? '';
  return entry.split(/\n(?=\S)/).filter((block) => block.startsWith('Breaking')).join('\n');
}

test(`every breaking change since ${lastReleased} is declared in CHANGELOG.md under Breaking, or the major moved`, () => {
  const [majorBefore] = String(released.info.version).split('.');
  const [majorNow] = String(current.info.version).split('.');
  expect(byVersion(String(current.info.version), String(released.info.version))).toBeGreaterThan(0);
  if (majorNow !== majorBefore) return;
  const declared = declaredBreaking(String(current.info.version));
  const undeclared = breakingChanges(released, current).filter((f) => !declared.includes(`\`${f.name}\``));
  expect(undeclared.map((f) => `${f.name}: ${f.what}`)).toEqual([]);
});

// The gate can fail: each kind of break it reads, made in a copy of today's spec, is found.
test.each([
  ['an operation removed', (d: Json) => void delete d.paths['/v1/plans'].get, 'listPlans'],
  ['an enum value removed', (d: Json) => void d.components.schemas.EventType.enum.pop(), 'EventType'],
  ['a response property removed', (d: Json) => void delete d.components.schemas.Crash.properties.exit_code, 'Crash'],
  ['a name pattern narrowed (as 1.2.0 did)', (d: Json) => void (d.components.schemas.ServerName.pattern = '^[a-z]+$'), 'ServerName'],
  ['a request field newly required', (d: Json) => void d.components.schemas.CreateServerRequest.required.push('idle_stop_minutes'), 'CreateServerRequest'],
  ['a bound lowered', (d: Json) => void (d.components.schemas.WebhookEventTypes.maxItems = 20), 'WebhookEventTypes'],
  ['a known value dropped from an open enum', (d: Json) => void d.components.schemas.ActionReason.enum.pop(), 'ActionReason'],
])('finds %s', (_name, breakIt, name) => {
  const after = structuredClone(current);
  breakIt(after);
  expect(breakingChanges(current, current)).toEqual([]);
  expect(breakingChanges(current, after).map((f) => f.name)).toContain(name);
});

// Opening a response's enum (as 1.5.0 did, x-open-enum) is not breaking: the spec with each open enum closed again
// (its known values alone, as 1.4.0 had them) against today's shows nothing, and the open ones were found.
test('an enum opened in a response is not a breaking change', () => {
  const closed = structuredClone(current);
  const opened: string[] = [];
  const close = (node: unknown, at: string): void => {
    if (!node || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node as Json)) {
      if (v && typeof v === 'object' && (v as Json)['x-open-enum'] === true) {
        opened.push(`${at}/${k}`);
        const branches = ((v as Json).anyOf ?? (v as Json).oneOf) as Json[];
        (node as Json)[k] = branches.length === 2 ? branches[0] : { oneOf: branches.slice(0, -1) };
      }
      close((node as Json)[k], `${at}/${k}`);
    }
  };
  close(closed.components.schemas, '');
  expect(opened).toEqual(expect.arrayContaining(['/Server/properties/state', '/Action/properties/reason', '/Problem/properties/code', '/Event', '/Actor', '/ShownMemberPermissions/items', '/ConsoleLine/properties/stream']));
  expect(breakingChanges(closed, current)).toEqual([]);
  expect(breakingChanges(current, closed)).toEqual([]);
});
