#!/usr/bin/env node
// `npm test`: every check the project promises, in the order that fails fastest.
//   1. generated/ matches the spec (openapi-typescript output is compared, never hand-edited)
//   2. redocly lint (recommended-strict) passes with no warnings, and Spectral's OWASP ruleset (.spectral.yaml) with
//      no error
//   3. types check across src/, test/ and generated/
//   4. the service builds (dist/ is what `npm start` and `npx gsh` run) and the docs build
//   5. jest runs every test; extra arguments are passed to jest (`npm test -- test/unit`)
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..');
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };

function step(title, file, args, options = {}) {
  process.stdout.write(`\n▶ ${title}\n`);
  // Package bins by path: some packages' `exports` hide their bin from require.resolve.
  const script = file.startsWith('./') ? path.join(root, file) : path.join(root, 'node_modules', file);
  const res = spawnSync(process.execPath, [script, ...args], { cwd: root, stdio: 'inherit', env, ...options });
  if (res.status !== 0) {
    process.stderr.write(`✗ ${title} failed\n`);
    process.exit(res.status ?? 1);
  }
}

const fresh = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-gen-')), 'v1.ts');
step('generated/ is up to date with openapi/v1.yaml', 'openapi-typescript/bin/cli.js', ['openapi/v1.yaml', '-o', fresh], { stdio: ['ignore', 'ignore', 'inherit'] });
const stale = fs.readFileSync(fresh, 'utf8') !== fs.readFileSync(path.join(root, 'generated', 'v1.ts'), 'utf8');
fs.rmSync(path.dirname(fresh), { recursive: true, force: true });
if (stale) {
  process.stderr.write('✗ generated/v1.ts is stale: run `npm run generate` and commit the result.\n');
  process.exit(1);
}
step('redocly lint openapi/v1.yaml', '@redocly/cli/bin/cli.js', ['lint', 'openapi/v1.yaml', '--format', 'stylish']);
step('spectral lint openapi/v1.yaml (OWASP API Security Top 10, .spectral.yaml)', '@stoplight/spectral-cli/dist/index.js', ['lint', 'openapi/v1.yaml', '--ruleset', '.spectral.yaml', '--fail-severity', 'error', '--display-only-failures', '--format', 'text']);
step('type check', 'typescript/bin/tsc', ['-p', 'tsconfig.test.json']);
step('build', 'typescript/bin/tsc', ['-b']);
step('docs', './scripts/build-docs.js', []);
// jest's own summary is not a format CI reads, so the last line is the plain "N passed, N failed" from its JSON.
const results = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-jest-')), 'results.json');
process.stdout.write('\n▶ jest\n');
const jest = spawnSync(process.execPath, [path.join(root, 'node_modules', 'jest', 'bin', 'jest.js'), '--json', `--outputFile=${results}`, ...process.argv.slice(2)], { cwd: root, stdio: 'inherit', env });
if (!fs.existsSync(results)) {
  process.stderr.write('✗ jest did not report results\n');
  process.exit(jest.status || 1);
}
const r = JSON.parse(fs.readFileSync(results, 'utf8'));
fs.rmSync(path.dirname(results), { recursive: true, force: true });
process.stdout.write(`\njest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped\n`);
process.exit(jest.status ?? 1);
