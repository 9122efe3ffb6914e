#!/usr/bin/env node
// The operator CLI (`npx gsh …`). Builds the service first if dist/ is missing, like `npm start`.
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.join(__dirname, '..');
// Run as `node bin/gsh.js` on an older system Node (the service's native database module needs Node 24 or 26:
// README "Node versions"), the CLI hands itself to the Node the project brings, as `npx gsh` does by its PATH.
if (Number(process.versions.node.split('.')[0]) < 24) {
  const own = path.join(root, 'node_modules', '.bin', 'node');
  if (!fs.existsSync(own)) {
    console.error(`gsh: needs Node 24 or 26, and this is ${process.version}; run \`npm install\`, then \`npx gsh …\`.`);
    process.exit(1);
  }
  const { status, signal } = require('node:child_process').spawnSync(own, [__filename, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(status ?? (signal ? 1 : 0));
}
const entry = path.join(root, 'dist', 'src', 'cli.js');
if (!fs.existsSync(entry)) {
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b'], { cwd: root, stdio: 'inherit' });
}
const { runCli } = require(entry);
// `image build` answers a promise of the exit code; every other command the code itself.
Promise.resolve(runCli(process.argv.slice(2), process.env, (s) => console.log(s), (s) => console.error(s))).then((code) => {
  process.exitCode = code;
});
