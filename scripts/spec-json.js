#!/usr/bin/env node
// generated/v1.json: openapi/v1.yaml as parsed, with the SHA-256 of the YAML it was parsed from. Parsing the YAML
// takes half a second to a second of CPU, which every start of the service, every CLI run and every test file
// paid; reading this JSON takes milliseconds. src/spec.ts uses it only while its hash is that of the YAML it reads,
// so an edited spec is never served stale (docs/conventions.md "Code layout").
//   node scripts/spec-json.js          writes generated/v1.json (part of `npm run generate`)
// scripts/test.js compares the file with parsedSpecJson(), as it does generated/v1.ts.
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');

const root = path.join(__dirname, '..');
const source = path.join(root, 'openapi', 'v1.yaml');
const target = path.join(root, 'generated', 'v1.json');

/** The file's text for this YAML text: `source_sha256` (hex) and `document`, the keys src/spec.ts reads. */
function parsedSpecJson(yaml) {
  const sourceSha256 = crypto.createHash('sha256').update(yaml).digest('hex');
  return `${JSON.stringify({ source_sha256: sourceSha256, document: YAML.parse(yaml) }, null, 1)}\n`;
}

module.exports = { parsedSpecJson, source, target };

if (require.main === module) fs.writeFileSync(target, parsedSpecJson(fs.readFileSync(source, 'utf8')));
