#!/usr/bin/env node
// Builds the API docs from openapi/v1.yaml with Redocly, Redoc's bundle inlined (no CDN), into dist/docs/.
// Redoc's bundle also fetches its "API docs by" logo and icon sets from Redocly's CDN at run time; those URLs are
// replaced with an empty inline SVG so the page never asks another host for anything.
// Skips the work when the page is newer than the spec, so `npm start` can always call it. Quiet: Redocly's banners
// and notices are shown only when the build fails, so they never bury `npm start`'s own lines.
// `--spec FILE --out FILE` build another spec to another page (test/e2e/first-run.test.ts).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const arg = (name) => (process.argv.includes(name) ? path.resolve(process.argv[process.argv.indexOf(name) + 1]) : undefined);
const spec = arg('--spec') ?? path.join(root, 'openapi', 'v1.yaml');
const out = arg('--out') ?? path.join(root, 'dist', 'docs', 'index.html');
const force = process.argv.includes('--force');

if (!force && fs.existsSync(out) && fs.statSync(out).mtimeMs >= fs.statSync(spec).mtimeMs) process.exit(0);
fs.mkdirSync(path.dirname(out), { recursive: true });
const built = spawnSync(
  process.execPath,
  [require.resolve('@redocly/cli/bin/cli.js'), 'build-docs', spec, '--inlineBundle', '--title', 'Game Server Hosting API', '-o', out],
  { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
);
if (built.status !== 0) {
  process.stderr.write(`${built.stdout ?? ''}${built.stderr ?? ''}${built.error ? `${built.error.message}\n` : ''}`);
  process.stderr.write(`build-docs: Redocly failed (exit ${built.status ?? built.signal}) building ${spec}\n`);
  process.exit(built.status || 1);
}
const EMPTY_SVG = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E";
const html = fs.readFileSync(out, 'utf8').replace(/https:\/\/cdn\.redoc(ly\.com|\.ly)\/[A-Za-z0-9/._-]*/g, EMPTY_SVG);
fs.writeFileSync(out, html);
