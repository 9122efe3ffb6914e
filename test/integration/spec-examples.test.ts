// The spec's examples are pasteable (docs/conventions.md "The contract"): `redocly lint` checks each against its
// schema (no-invalid-schema-examples, no-invalid-media-type-examples), and this test checks that the plan and
// version ids they name are ones the catalog really offers, so a pasted example is not a 422.
// One app for the file: it only reads.
import { createTestApp, type TestApp } from '../helpers/app';
import { loadSpec } from '../../src/spec';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Every example value in the document, with the path of the schema or media type it belongs to. */
function examples(node: unknown, at = '#', out: Array<{ at: string; value: unknown }> = []) {
  if (Array.isArray(node)) node.forEach((v, i) => examples(v, `${at}/${i}`, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node as Json)) {
      if (k === 'example') out.push({ at, value: v });
      else if (k === 'examples' && v && typeof v === 'object' && !Array.isArray(v)) {
        for (const [name, ex] of Object.entries(v as Json)) out.push({ at: `${at}/examples/${name}`, value: ex.value });
      } else examples(v, `${at}/${k}`, out);
    }
  }
  return out;
}

/** Every string inside a value, with the property name it sits under (if any). */
function strings(value: unknown, key = '', out: Array<{ key: string; text: string }> = []) {
  if (typeof value === 'string') out.push({ key, text: value });
  else if (Array.isArray(value)) value.forEach((v) => strings(v, key, out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) strings(v, k, out);
  return out;
}

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.finish());

test('every plan and version id in the spec\'s examples and text is in the catalog', async () => {
  const auth = { Authorization: `Bearer ${t.token()}` };
  const plans = new Set<string>((await t.http.get('/v1/plans').set(auth)).body.data.map((p: { id: string }) => p.id));
  const versions = new Set<string>((await t.http.get('/v1/versions').set(auth)).body.data.map((v: { id: string }) => v.id));
  const software = new Set([...versions].map((id) => id.replace(/-[0-9][^-]*$/, '')));
  const spec = loadSpec();
  const doc = spec.document as Json;
  const wrong: string[] = [];
  for (const { at, value } of examples(doc)) {
    for (const { key, text } of strings(value)) {
      if ((key === 'plan' || at.endsWith('/PlanId')) && !plans.has(text)) wrong.push(`${at}: plan ${text}`);
    }
  }
  // Version ids anywhere (examples, descriptions): `<software>-<version>` for software the catalog has.
  for (const m of spec.yaml.matchAll(/\b([a-z][a-z-]*[a-z])-(\d+(?:\.\d+)+)\b/g)) {
    if (software.has(m[1]) && !versions.has(m[0])) wrong.push(`version ${m[0]}`);
  }
  expect(wrong).toEqual([]);
  expect(doc.components.schemas.VersionId.example).toMatch(/^flying-squid-/);
});
