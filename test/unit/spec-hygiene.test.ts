import { loadSpec } from '../../src/spec';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

// What keeps openapi/v1.yaml safe for every SDK generator, not only the one we use (docs/conventions.md
// "The contract"): generators that meet a $ref into another schema's properties, or a parameter and a schema
// of the same name, emit code that does not compile or types the field as `any`. The checks are functions of
// a spec document, so each is also run on a broken copy to show that it fails.

/** Every $ref in the document, with where it was found. */
function refs(node: unknown, at = '#', out: Array<{ at: string; ref: string }> = []): Array<{ at: string; ref: string }> {
  if (Array.isArray(node)) node.forEach((v, i) => refs(v, `${at}/${i}`, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push({ at, ref: v });
      else refs(v, `${at}/${k}`, out);
    }
  }
  return out;
}

/** $refs that are not `#/components/<section>/<Name>` of an existing component. */
export function badRefs(spec: Json): string[] {
  return refs(spec)
    .filter(({ ref }) => {
      const m = /^#\/components\/([A-Za-z]+)\/([A-Za-z0-9_.-]+)$/.exec(ref);
      return !m || spec.components?.[m[1]]?.[m[2]] === undefined;
    })
    .map(({ at, ref }) => `${at}: ${ref}`);
}

/** Component names used in more than one section (schemas, parameters, responses, headers, …). */
export function duplicateNames(spec: Json): string[] {
  const sections = new Map<string, string[]>();
  for (const [section, entries] of Object.entries((spec.components ?? {}) as Json)) {
    for (const name of Object.keys(entries)) sections.set(name, [...(sections.get(name) ?? []), section]);
  }
  return [...sections].filter(([, s]) => s.length > 1).map(([name, s]) => `${name}: ${s.join(', ')}`);
}

/** The names of the schemas a request body reaches (through $refs); the rest are response-only. */
function requestSchemas(spec: Json): Set<string> {
  const seen = new Set<string>();
  const walk = (node: unknown): void => {
    for (const { ref } of refs(node)) {
      const name = ref.replace('#/components/schemas/', '');
      if (ref.startsWith('#/components/schemas/') && !seen.has(name)) {
        seen.add(name);
        walk(spec.components.schemas[name]);
      }
    }
  };
  for (const path of Object.values(spec.paths as Json)) {
    for (const op of Object.values(path as Json)) if (op?.requestBody) walk(op.requestBody);
  }
  return seen;
}

/** Schemas that only answers use but that forbid extra properties (openapi/v1.yaml "Evolution"). */
export function closedResponseSchemas(spec: Json): string[] {
  const requests = requestSchemas(spec);
  return Object.entries(spec.components.schemas as Json)
    .filter(([name, schema]) => !requests.has(name) && JSON.stringify(schema).includes('"additionalProperties":false'))
    .map(([name]) => name);
}

/**
 * Request body schemas that accept unknown fields (an unknown field in a request must be a 400). A map, whose
 * `additionalProperties` is a schema every value must match (SettingsChange), names its keys by design.
 */
export function openRequestSchemas(spec: Json): string[] {
  return [...requestSchemas(spec)].filter((name) => {
    const s = spec.components.schemas[name];
    return s.type === 'object' && (s.additionalProperties === undefined || s.additionalProperties === true);
  });
}

/**
 * text/event-stream answers not described as a named oneOf of the stream's text (EventStreamText, a string, which
 * tools that read a body whole validate: Prism's proxy, API testers) and a named event schema with `event` types,
 * a stream id (StreamEventId, or the events stream's own EventId) and a named `data` (what typed clients parse each
 * event into). openapi/v1.yaml ConsoleLineStream says why.
 */
export function untypedStreams(spec: Json): string[] {
  const named = (ref: unknown) => (typeof ref === 'string' && ref.startsWith('#/components/schemas/') ? spec.components.schemas[ref.replace('#/components/schemas/', '')] : undefined);
  const out: string[] = [];
  for (const [path, item] of Object.entries(spec.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      const media = op?.responses?.['200']?.content?.['text/event-stream'];
      if (!media) continue;
      const branches: Json[] = named(media.schema?.$ref)?.oneOf ?? [];
      const text = branches.some((b) => named(b.$ref)?.type === 'string');
      const event = branches.map((b) => named(b.$ref)).find((s) => s?.type === 'object');
      const ok =
        branches.length === 2 &&
        text &&
        (event?.properties?.event?.enum?.length > 0 || enumOf(spec, event?.properties?.event?.$ref ?? event?.properties?.event?.anyOf?.[0]?.$ref)) &&
        ['#/components/schemas/StreamEventId', '#/components/schemas/EventId'].includes(event.properties.id?.$ref) &&
        /^#\/components\/schemas\/\w+$/.test(event.properties.data?.$ref ?? '');
      if (!ok) out.push(`${method.toUpperCase()} ${path}`);
    }
  }
  return out;
}

/** True when `ref` names a schema with a non-empty enum (an event type list shared with other operations). */
function enumOf(spec: Json, ref: string | undefined): boolean {
  return (spec.components.schemas[(ref ?? '').replace('#/components/schemas/', '')]?.enum?.length ?? 0) > 0;
}

/**
 * Schemas whose `type` lists several non-null types (`[string, number, boolean]`): kubb recurses on them until its
 * stack runs out. A value of several types is a oneOf of one branch per type (SettingValue); `[x, 'null']` is fine.
 */
export function multiTypeLists(node: unknown, at = '#', out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((v, i) => multiTypeLists(v, `${at}/${i}`, out));
  else if (node && typeof node === 'object') {
    const o = node as Json;
    if (Array.isArray(o.type) && o.type.filter((t: string) => t !== 'null').length > 1) out.push(at);
    for (const [k, v] of Object.entries(o)) multiTypeLists(v, `${at}/${k}`, out);
  }
  return out;
}

/**
 * Discriminator mappings that name one schema under several tags: openapi-typescript-codegen then types that
 * schema's tag as the last of them alone (a `server.created` event typed `server.updated`). Such a oneOf goes
 * without a discriminator, each branch's tag an enum.
 */
export function sharedMappings(node: unknown, at = '#', out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((v, i) => sharedMappings(v, `${at}/${i}`, out));
  else if (node && typeof node === 'object') {
    const o = node as Json;
    const targets = Object.values((o.discriminator?.mapping ?? {}) as Record<string, string>);
    if (new Set(targets).size !== targets.length) out.push(at);
    for (const [k, v] of Object.entries(o)) sharedMappings(v, `${at}/${k}`, out);
  }
  return out;
}

/** Integer schemas without a `format` (int32, int64) and both bounds: generators then pick a type that fits. */
export function unboundedIntegers(node: unknown, at = '#', out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((v, i) => unboundedIntegers(v, `${at}/${i}`, out));
  else if (node && typeof node === 'object') {
    const o = node as Json;
    const integer = o.type === 'integer' || (Array.isArray(o.type) && o.type.includes('integer'));
    if (integer && !(['int32', 'int64'].includes(o.format) && o.minimum !== undefined && o.maximum !== undefined)) out.push(at);
    for (const [k, v] of Object.entries(o)) unboundedIntegers(v, `${at}/${k}`, out);
  }
  return out;
}

/**
 * POST, PUT and PATCH operations that do not document 400, 413 and 415: the service parses a body for these
 * methods whether or not the operation takes one (src/http/middleware.ts jsonBody and requireJson), so any of
 * them can answer malformed JSON, too large, or not JSON.
 */
export function undocumentedBodyErrors(spec: Json): string[] {
  const out: string[] = [];
  for (const item of Object.values(spec.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      if (!['post', 'put', 'patch'].includes(method)) continue;
      const missing = ['400', '413', '415'].filter((s) => op.responses?.[s] === undefined);
      if (missing.length) out.push(`${op.operationId}: ${missing.join(', ')}`);
    }
  }
  return out;
}

const spec = loadSpec().document as Json;

describe('openapi/v1.yaml is safe for any generator', () => {
  test('every $ref names a whole component (no refs into a schema\'s properties)', () => {
    expect(badRefs(spec)).toEqual([]);
  });
  test('no component name is used in two sections', () => {
    expect(duplicateNames(spec)).toEqual([]);
  });
  test('no response schema forbids extra properties; every request body schema does', () => {
    expect(closedResponseSchemas(spec)).toEqual([]);
    expect(openRequestSchemas(spec)).toEqual([]);
  });
  test('every integer has a format and both bounds', () => {
    expect(unboundedIntegers(spec)).toEqual([]);
  });
  test('no discriminator maps two tags to one schema', () => {
    expect(sharedMappings(spec)).toEqual([]);
    expect(sharedMappings({ a: { discriminator: { propertyName: 't', mapping: { x: '#/S', y: '#/S' } } } })).toEqual(['#/a']);
  });
  test('no type lists several non-null types', () => {
    expect(multiTypeLists(spec)).toEqual([]);
    expect(multiTypeLists({ a: { type: ['string', 'number'] }, b: { type: ['string', 'null'] } })).toEqual(['#/a']);
  });
  test('every event stream names its event schema, its event types, a stream id and a named data schema', () => {
    expect(untypedStreams(spec)).toEqual([]);
  });
  test('every operation whose method carries a body documents the body errors (400, 413, 415)', () => {
    expect(undocumentedBodyErrors(spec)).toEqual([]);
  });
});

describe('the checks fail on the spec mistakes they guard against', () => {
  const broken = (edit: (s: Json) => void): Json => {
    const copy = structuredClone(spec);
    edit(copy);
    return copy;
  };
  test('a property-path $ref', () => {
    const s = broken((c) => (c.components.schemas.CreatedToken.properties.name = { $ref: '#/components/schemas/Token/properties/name' }));
    expect(badRefs(s)).toEqual(['#/components/schemas/CreatedToken/properties/name: #/components/schemas/Token/properties/name']);
  });
  test('a parameter named like a schema', () => {
    const s = broken((c) => (c.components.parameters.ServerId = c.components.parameters.ServerIdParam));
    expect(duplicateNames(s)).toEqual(['ServerId: parameters, schemas']);
  });
  test('a closed response schema and an open request schema', () => {
    const s = broken((c) => {
      c.components.schemas.Server.additionalProperties = false;
      delete c.components.schemas.ConsoleCommand.additionalProperties;
    });
    expect(closedResponseSchemas(s)).toEqual(['Server']);
    expect(openRequestSchemas(s)).toEqual(['ConsoleCommand']);
  });
  test('an integer without a format or a bound', () => {
    expect(unboundedIntegers({ a: { type: 'integer', minimum: 0, maximum: 9 }, b: { type: ['integer', 'null'], format: 'int32', minimum: 0 } })).toEqual(['#/a', '#/b']);
  });
  test('a bodyless POST that does not document 415', () => {
    const s = broken((c) => delete c.paths['/v1/webhooks/{webhook_id}/test'].post.responses['415']);
    expect(undocumentedBodyErrors(s)).toEqual(['testWebhook: 415']);
  });
  test('a stream described as a plain string, or as its events alone', () => {
    const s = broken((c) => {
      c.paths['/v1/servers/{server_id}/console/stream'].get.responses['200'].content['text/event-stream'].schema = { type: 'string' };
    });
    expect(untypedStreams(s)).toEqual(['GET /v1/servers/{server_id}/console/stream']);
    const events = broken((c) => {
      c.paths['/v1/servers/{server_id}/metrics/stream'].get.responses['200'].content['text/event-stream'].schema = { $ref: '#/components/schemas/SampleEvent' };
    });
    expect(untypedStreams(events)).toEqual(['GET /v1/servers/{server_id}/metrics/stream']);
  });
});
