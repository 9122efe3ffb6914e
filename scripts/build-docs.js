#!/usr/bin/env node
// Builds the API docs from openapi/v1.yaml with Redocly, Redoc's bundle inlined (no CDN), into dist/docs/.
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
