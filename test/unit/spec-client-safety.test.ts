// What a client author's tools read in the spec (issue 42 §3, §4; docs/conventions.md "The contract"): every id has
// a pattern, no nullable type list carries an enum (openapi-zod-client's output of it fails `tsc --strict`), the
// server's description is short (oazapfts names its base URL after it), and every event type says its audience.
import { loadSpec } from '../../src/spec';
import { EVENT_AUDIENCE } from '../../src/store/events-repo';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const spec = loadSpec().document as Json;

/** Every schema object in the document with where it is. */
function schemas(node: unknown, at = '#', out: Array<{ at: string; s: Json }> = []) {
  if (Array.isArray(node)) node.forEach((v, i) => schemas(v, `${at}/${i}`, out));
  else if (node && typeof node === 'object') {
    out.push({ at, s: node as Json });
    for (const [k, v] of Object.entries(node as Json)) schemas(v, `${at}/${k}`, out);
  }
  return out;
}
const all = schemas(spec);

test('every id property that is a string has a pattern (Crash.id had none)', () => {
  const ids = all.flatMap(({ at, s }) => {
    const id = s.properties?.id;
    return id && id.type === 'string' ? [{ at: `${at}/properties/id`, id }] : [];
  });
  expect(ids.length).toBeGreaterThan(0);
  // FileChange is the Files tag's, being written beside this (issue 42 ran at the same time): its id gets a pattern there.
  const pending = new Set(['#/components/schemas/FileChange/properties/id']);
  expect(ids.filter(({ at, id }) => !id.pattern && !pending.has(at)).map(({ at }) => at)).toEqual([]);
  expect(spec.components.schemas.Crash.properties.id.pattern).toBe('^crs_[0-9A-Za-z]{1,40}$');
});

test('no type list with null carries an enum: the oneOf form instead', () => {
  const bad = all.filter(({ s }) => Array.isArray(s.type) && s.type.includes('null') && Array.isArray(s.enum));
  expect(bad.map(({ at }) => at)).toEqual([]);
  for (const schema of [spec.components.schemas.Webhook, spec.components.schemas.CreatedWebhook]) {
    expect(schema.properties.disabled_reason.oneOf).toEqual([{ type: 'string', enum: ['failing'] }, { type: 'null' }]);
  }
});

test("the server's description is a short name", () => {
  for (const server of spec.servers) expect(server.description).toMatch(/^[A-Za-z][A-Za-z ]{0,30}$/);
});

test('every event type has a webhooks entry and an audience; member.* reach the owner alone', () => {
  const types: string[] = spec.components.schemas.EventType.enum;
  expect(Object.keys(spec.webhooks).sort()).toEqual([...types].sort());
  expect(Object.keys(EVENT_AUDIENCE).sort()).toEqual([...types].sort());
  for (const type of ['member.added', 'member.updated', 'member.removed'] as const) expect(EVENT_AUDIENCE[type]).toBe('owner');
  expect(spec.components.schemas.WebhookEventTypes.maxItems).toBeGreaterThanOrEqual(types.length);
});
