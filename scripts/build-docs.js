#!/usr/bin/env node
// Builds the API docs from openapi/v1.yaml with Redocly, Redoc's bundle inlined (no CDN), into dist/docs/.
// Redoc's bundle also fetches its "API docs by" logo and icon sets from Redocly's CDN at run time; those URLs are
// replaced with an empty inline SVG so the page never asks another host for anything.
// Skips the work when the page is newer than the spec, so `npm start` can always call it.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const spec = path.join(root, 'openapi', 'v1.yaml');
const out = path.join(root, 'dist', 'docs', 'index.html');
const force = process.argv.includes('--force');

if (!force && fs.existsSync(out) && fs.statSync(out).mtimeMs >= fs.statSync(spec).mtimeMs) process.exit(0);
fs.mkdirSync(path.dirname(out), { recursive: true });
execFileSync(
  process.execPath,
  [require.resolve('@redocly/cli/bin/cli.js'), 'build-docs', spec, '--inlineBundle', '--title', 'Game Server Hosting API', '-o', out],
  { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
);
const EMPTY_SVG = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E";
const html = fs.readFileSync(out, 'utf8').replace(/https:\/\/cdn\.redoc(ly\.com|\.ly)\/[A-Za-z0-9/._-]*/g, EMPTY_SVG);
fs.writeFileSync(out, html);
