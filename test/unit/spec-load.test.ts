import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { loadSpec } from '../../src/spec';
import { tempDirsOfFile } from '../helpers/app';

// src/spec.ts reads the document from generated/v1.json (scripts/spec-json.js) only while that file was made from
// the very YAML it reads; any other YAML is parsed as it stands.
const root = path.join(__dirname, '..', '..');
const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');
const layoutDir = tempDirsOfFile('spec-load');

/** A copy of the layout loadSpec expects (openapi/ beside generated/), with this YAML and this generated file. */
function layout(yaml: string, generated?: string): string {
  const dir = layoutDir();
  fs.mkdirSync(path.join(dir, 'openapi'));
  fs.mkdirSync(path.join(dir, 'generated'));
  fs.writeFileSync(path.join(dir, 'openapi', 'v1.yaml'), yaml);
  if (generated !== undefined) fs.writeFileSync(path.join(dir, 'generated', 'v1.json'), generated);
  return path.join(dir, 'openapi', 'v1.yaml');
}

const yaml = 'openapi: 3.1.0\ninfo:\n  title: T\n  version: 1.0.0\npaths: {}\n';

test('the repository\'s spec loads as its YAML parses', () => {
  const text = fs.readFileSync(path.join(root, 'openapi', 'v1.yaml'), 'utf8');
  const spec = loadSpec();
  expect(spec.yaml).toBe(text);
  expect(spec.document).toEqual(YAML.parse(text));
  expect(JSON.parse(spec.json)).toEqual(spec.document);
});

test.each([
  ['made from this YAML: read', sha256(yaml), 'from generated'],
  ['made from other YAML: the YAML is parsed', sha256(`${yaml}# edited\n`), 'T'],
])('a generated file %s', (_name, hash, title) => {
  const file = layout(yaml, JSON.stringify({ source_sha256: hash, document: { openapi: '3.1.0', info: { title: 'from generated', version: '1.0.0' }, paths: {} } }));
  expect((loadSpec(file).document.info as { title: string }).title).toBe(title);
});

test.each([['missing', undefined], ['cut short', '{"source_sha256": "']])('a generated file %s: the YAML is parsed', (_name, generated) => {
  expect((loadSpec(layout(yaml, generated)).document.info as { title: string }).title).toBe('T');
});
