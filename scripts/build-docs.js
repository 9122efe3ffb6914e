#!/usr/bin/env node
// Builds the API docs from openapi/v1.yaml with Redocly, Redoc's bundle inlined (no CDN), into dist/docs/.
// Redoc's bundle also fetches its "API docs by" logo and icon sets from Redocly's CDN at run time; those URLs are
// replaced with an empty inline SVG so the page never asks another host for anything.
// Every operation gets code samples (curl, TypeScript with openapi-fetch, Python with requests) made from the spec by
// scripts/spec-samples.js and injected as `x-codeSamples` into the copy Redocly builds from, never into v1.yaml, so
// they cannot drift (test/contract/code-samples.test.ts runs each against a service). The page's own CSS is amended
// so that code in tables (scope names, states) wraps only where it may.
// Skips the work when the page is newer than the spec, so `npm start` can always call it. Quiet: Redocly's banners
// and notices are shown only when the build fails, so they never bury `npm start`'s own lines.
// `--spec FILE --out FILE` build another spec to another page (test/e2e/first-run.test.ts).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const YAML = require('yaml');
const { codeSamples, operations } = require('./spec-samples');

const root = path.join(__dirname, '..');
const arg = (name) => (process.argv.includes(name) ? path.resolve(process.argv[process.argv.indexOf(name) + 1]) : undefined);
const spec = arg('--spec') ?? path.join(root, 'openapi', 'v1.yaml');
const out = arg('--out') ?? path.join(root, 'dist', 'docs', 'index.html');
const force = process.argv.includes('--force');

const newest = Math.max(...[spec, __filename, path.join(__dirname, 'spec-samples.js')].map((f) => fs.statSync(f).mtimeMs));
if (!force && fs.existsSync(out) && fs.statSync(out).mtimeMs >= newest) process.exit(0);
fs.mkdirSync(path.dirname(out), { recursive: true });

// The copy with samples. Their base URL is the spec's servers[0].url; the service shows its PUBLIC_URL there
// (src/http/docs.ts), so the samples name the host a reader's page came from.
// A spec that does not parse is built as it is, so that Redocly's own report names the file and the fault.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-docs-'));
let withSamples = spec;
try {
  const document = YAML.parse(fs.readFileSync(spec, 'utf8'));
  const base = document.servers?.[0]?.url ?? 'https://gsh.example.com';
  for (const operation of operations(document)) operation.op['x-codeSamples'] = codeSamples(document, operation, base);
  withSamples = path.join(tmp, 'openapi.json');
  fs.writeFileSync(withSamples, JSON.stringify(document));
} catch {
  // Redocly below says what is wrong.
}

const built = spawnSync(
  process.execPath,
  [require.resolve('@redocly/cli/bin/cli.js'), 'build-docs', withSamples, '--inlineBundle', '--title', 'Game Server Hosting API', '-o', out],
  { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
);
fs.rmSync(tmp, { recursive: true, force: true });
if (built.status !== 0) {
  process.stderr.write(`${built.stdout ?? ''}${built.stderr ?? ''}${built.error ? `${built.error.message}\n` : ''}`);
  process.stderr.write(`build-docs: Redocly failed (exit ${built.status ?? built.signal}) building ${spec}\n`);
  process.exit(built.status || 1);
}
const EMPTY_SVG = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E";
// Inline code in a table cell (a scope name, a state) breaks only at its own punctuation, never inside a word:
// Redoc's default lets `servers:read` become `servers:re` / `ad`.
// Its "API docs by" badge links out and, its logo being off the CDN, shows as three loose words: hidden.
const CSS = '<style>td code { word-break: normal !important; overflow-wrap: normal !important; white-space: nowrap !important; } a[href^="https://redocly.com/redoc"] { display: none !important; }</style>';
const html = fs
  .readFileSync(out, 'utf8')
  .replace(/https:\/\/cdn\.redoc(ly\.com|\.ly)\/[A-Za-z0-9/._-]*/g, EMPTY_SVG)
  .replace('</head>', `${CSS}</head>`);
fs.writeFileSync(out, html);
