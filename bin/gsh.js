#!/usr/bin/env node
// The operator CLI (`npx gsh …`). Builds the service first if dist/ is missing, like `npm start`.
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.join(__dirname, '..');
const entry = path.join(root, 'dist', 'src', 'cli.js');
if (!fs.existsSync(entry)) {
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b'], { cwd: root, stdio: 'inherit' });
}
const { runCli } = require(entry);
// `image build` answers a promise of the exit code; every other command the code itself.
Promise.resolve(runCli(process.argv.slice(2), process.env, (s) => console.log(s), (s) => console.error(s))).then((code) => {
  process.exitCode = code;
});
