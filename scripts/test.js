#!/usr/bin/env node
// `npm test`: every check the project promises, in two lanes that run side by side (docs/conventions.md "Tests"):
//   checks  1. generated/ matches the spec (openapi-typescript's types and the parsed spec, scripts/spec-json.js,
//              are compared; never hand-edited)
//           2. redocly lint (recommended-strict) passes with no warnings, and Spectral's OWASP ruleset
//              (.spectral.yaml) with no error
//           3. types check across src/, test/ and generated/
//           4. ESLint (eslint.config.mjs: typescript-eslint's type-checked rules over src/) reports no error
//   tests   5. the service builds (dist/ is what `npm start` and `npx gsh` run, and what some tests start) and the
//              docs build
//           6. jest runs every test; extra arguments are passed to jest (`npm test -- test/unit`)
// jest only transpiles (jest.config.js), so it need not wait for the type check; the suite spends most of its time
// waiting on games, browsers and timers, which leaves the CPU to the checks. A check's output is printed whole when
// it ends, so it never interleaves with jest's; a failed check fails the run but does not stop jest.
// GSH_TEST_ONLY_NODE_DEPENDENT=1 runs the tests lane alone: the checks read files and give the same answer on every
// Node version, so the second Node version of CI (scripts/test-node.sh) skips them.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..');
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
const onlyNodeDependent = process.env.GSH_TEST_ONLY_NODE_DEPENDENT === '1';
const started = Date.now();
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
const failed = [];

/**
 * Runs a package's bin or one of our scripts under this Node. `show: 'live'` streams its output as it comes (jest,
 * the build); otherwise the output is kept and printed whole once it ends, or only if it failed (`show: 'failure'`).
 * `yieldCpu` runs it at the lowest CPU priority (nice 19, setpriority(2)). Resolves with the exit status.
 */
function run(title, file, args, { show = 'whole', yieldCpu = false } = {}) {
  const since = Date.now();
  if (show === 'live') process.stdout.write(`\n▶ ${title}\n`);
  // Package bins by path: some packages' `exports` hide their bin from require.resolve.
  const script = file.startsWith('./') ? path.join(root, file) : path.join(root, 'node_modules', file);
  const child = spawn(process.execPath, [script, ...args], { cwd: root, env, stdio: show === 'live' ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
  if (yieldCpu && child.pid) {
    try {
      os.setPriority(child.pid, 19);
    } catch {
      // not allowed here: it runs at the priority it has, which changes its speed, not its answer
    }
  }
  const output = [];
  child.stdout?.on('data', (d) => output.push(d));
  child.stderr?.on('data', (d) => output.push(d));
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      const status = code ?? 1;
      const text = Buffer.concat(output).toString();
      if (show !== 'live') {
        process.stdout.write(`\n▶ ${title} (${seconds(since)})\n`);
        if (show === 'whole' || status !== 0) process.stdout.write(text.endsWith('\n') || !text ? text : `${text}\n`);
      }
      if (status !== 0) {
        process.stderr.write(`✗ ${title} failed${signal ? ` (${signal})` : ''}\n`);
        failed.push(title);
      } else if (show === 'live') {
        process.stdout.write(`✓ ${title} (${seconds(since)})\n`);
      }
      resolve(status);
    });
  });
}

/**
 * Steps 1–4, one after another (together they take a fraction of jest's time), each at the lowest CPU priority: the
 * suite keeps the machine's cores busy but for the moments when most files wait on games, browsers and timers, and
 * the checks take those moments instead of slowing the tests (docs/conventions.md "Tests").
 */
async function checks() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-gen-'));
  const fresh = path.join(dir, 'v1.ts');
  const title = 'generated/ is up to date with openapi/v1.yaml';
  if ((await run(title, 'openapi-typescript/bin/cli.js', ['openapi/v1.yaml', '-o', fresh], { show: 'failure', yieldCpu: true })) === 0) {
    const stale = fs.readFileSync(fresh, 'utf8') !== fs.readFileSync(path.join(root, 'generated', 'v1.ts'), 'utf8');
    if (stale) {
      process.stderr.write('✗ generated/v1.ts is stale: run `npm run generate` and commit the result.\n');
      failed.push(title);
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  const { parsedSpecJson, source, target } = require('./spec-json');
  if (!fs.existsSync(target) || fs.readFileSync(target, 'utf8') !== parsedSpecJson(fs.readFileSync(source, 'utf8'))) {
    process.stderr.write('✗ generated/v1.json is stale: run `npm run generate` and commit the result.\n');
    failed.push('generated/v1.json is up to date with openapi/v1.yaml');
  }
  await run('redocly lint openapi/v1.yaml', '@redocly/cli/bin/cli.js', ['lint', 'openapi/v1.yaml', '--format', 'stylish'], { yieldCpu: true });
  await run('spectral lint openapi/v1.yaml (OWASP API Security Top 10, .spectral.yaml)', '@stoplight/spectral-cli/dist/index.js', ['lint', 'openapi/v1.yaml', '--ruleset', '.spectral.yaml', '--fail-severity', 'error', '--display-only-failures', '--format', 'text'], { yieldCpu: true });
  await run('type check', 'typescript/bin/tsc', ['-p', 'tsconfig.test.json'], { yieldCpu: true });
  await run('eslint src/', 'eslint/bin/eslint.js', ['src', '--max-warnings', '0'], { yieldCpu: true });
}

/** Steps 5–6; resolves with jest's results (undefined when it did not run or report). */
async function tests() {
  if ((await run('build', 'typescript/bin/tsc', ['-b'], { show: 'failure' })) !== 0) return undefined;
  if ((await run('docs', './scripts/build-docs.js', [], { show: 'failure' })) !== 0) return undefined;
  // jest's own summary is not a format CI reads, so the last line is the plain "N passed, N failed" from its JSON.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsh-jest-'));
  const results = path.join(dir, 'results.json');
  await run('jest', 'jest/bin/jest.js', ['--json', `--outputFile=${results}`, ...process.argv.slice(2)], { show: 'live' });
  const r = fs.existsSync(results) ? JSON.parse(fs.readFileSync(results, 'utf8')) : undefined;
  fs.rmSync(dir, { recursive: true, force: true });
  if (r && process.env.GSH_WRITE_DURATIONS === '1') writeDurations(r);
  return r;
}

/**
 * test/helpers/durations.json from a whole run: each file's seconds, longest first, for the order jest starts files
 * in where it has no times of its own (test/helpers/sequencer.js).
 */
function writeDurations(r) {
  const file = path.join(root, 'test', 'helpers', 'durations.json');
  const before = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
  const now = Object.fromEntries(r.testResults.map((t) => [path.relative(root, t.name), Math.round((t.endTime - t.startTime) / 1000)]));
  // A run of some files keeps the others' figures, as long as those files still exist.
  const seconds = Object.entries({ ...before, ...now })
    .filter(([name]) => fs.existsSync(path.join(root, name)))
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  fs.writeFileSync(file, `${JSON.stringify(Object.fromEntries(seconds), null, 2)}\n`);
}

(async () => {
  if (onlyNodeDependent) {
    process.stdout.write(`Node ${process.version}: build, docs and jest only (GSH_TEST_ONLY_NODE_DEPENDENT=1). The generated/ check, the lints and the type check do not depend on Node's version and are left to the first run.\n`);
  }
  const [, r] = await Promise.all([onlyNodeDependent ? undefined : checks(), tests()]);
  if (failed.length) process.stderr.write(`\n✗ failed: ${failed.join('; ')}\n`);
  if (!r) {
    process.stderr.write('✗ jest did not run, or did not report results\n');
    process.exit(1);
  }
  process.stdout.write(`\nnpm test on Node ${process.version}: ${seconds(started)}\n`);
  process.stdout.write(`jest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped\n`);
  process.exit(failed.length ? 1 : 0);
})();
