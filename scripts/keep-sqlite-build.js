#!/usr/bin/env node
// Keeps the better-sqlite3 binary that `npm install` compiled, where its installer looks first next time.
//
// better-sqlite3 installs with `prebuild-install || node-gyp rebuild --release`. prebuild-install downloads a
// prebuilt binary from GitHub; where GitHub cannot be reached (this project's CI machine reaches only the npm
// registry) node-gyp compiles SQLite's amalgamation, a minute of one core. Before any download prebuild-install
// looks in npm's cache, under `_prebuilds/`, for the archive it would have downloaded (prebuild-install's
// download.js, `cachedPrebuild`). This script puts the binary compiled here into that archive, under the name
// prebuild-install itself computes, so the next `npm install` on this machine unpacks it instead of compiling.
// prebuild-install loads what it unpacked before using it, and a Node with another ABI asks for another name.
//
//   npm_config_cache=$(npm config get cache) node scripts/keep-sqlite-build.js
//
// .ci/run calls it after `npm install`. It changes nothing when the archive is already kept or no build exists.
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');
const { pipeline } = require('node:stream/promises');
const tar = require('tar-stream');

const root = path.join(__dirname, '..');
const pkgDir = path.join(root, 'node_modules', 'better-sqlite3');
const binary = path.join(pkgDir, 'build', 'Release', 'better_sqlite3.node');

async function main() {
  const pkg = require(path.join(pkgDir, 'package.json'));
  // prebuild-install's own option parsing and URL template, so the name is the one it will look for.
  const util = require('prebuild-install/util');
  const opts = { ...require('prebuild-install/rc')(pkg), pkg };
  const archive = util.cachedPrebuild(util.getDownloadUrl(opts));
  if (fs.existsSync(archive)) return console.log(`better-sqlite3 ${pkg.version}: kept at ${archive}`);
  if (!fs.existsSync(binary)) return console.log(`better-sqlite3 ${pkg.version}: no build to keep`);
  const pack = tar.pack();
  const bytes = fs.readFileSync(binary);
  pack.entry({ name: 'build/Release/better_sqlite3.node', mode: 0o755 }, bytes);
  pack.finalize();
  fs.mkdirSync(path.dirname(archive), { recursive: true });
  const partial = `${archive}.${process.pid}.partial`;
  await pipeline(pack, zlib.createGzip(), fs.createWriteStream(partial));
  fs.renameSync(partial, archive);
  console.log(`better-sqlite3 ${pkg.version}: the build kept at ${archive}`);
}

main().catch((err) => {
  // A cache that could not be written costs the next run a compile, nothing more.
  console.log(`better-sqlite3: the build was not kept (${err.message})`);
});
