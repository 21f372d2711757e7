#!/usr/bin/env bash
# Builds the operator's console into the server jar (run by modules/runtime's Maven build, phase
# generate-resources): the console's ES modules and the TypeScript client's sources
# (modules/client-js/src), bundled by esbuild into one module, beside index.html and the CSS, in
# $1 (target/classes/hypha-console). Needs Node.js 20+; esbuild comes from modules/client-js's
# committed lock file (npm ci, once: later builds work offline). -Dconsole.skip builds a jar without
# the console. See docs/DECISIONS.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cjs=$(cd "$here/../../../../client-js" && pwd)
out=${1:?usage: build.sh OUTPUT_DIR}
fail() { echo "[console] $*" >&2; exit 1; }
command -v node >/dev/null 2>&1 \
  || fail "building the console needs Node.js 20+ on the PATH, and there is no 'node' here. Install Node.js 20+ (and npm), or build without the console: mvn ... -Dconsole.skip"
[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ] \
  || fail "building the console needs Node.js 20+; 'node' here is $(node --version). Or build without the console: -Dconsole.skip"
if [ ! -f "$cjs/node_modules/esbuild/package.json" ]; then
  command -v npm >/dev/null 2>&1 || fail "building the console needs npm (with Node.js 20+) to install esbuild in $cjs."
  echo "[console] npm ci in modules/client-js (esbuild, from its lock file; once)" >&2
  (cd "$cjs" && npm ci --no-audit --no-fund --loglevel=error) >&2 \
    || fail "npm ci in $cjs failed (is the npm registry reachable? Run it once online; later builds work offline)."
fi
exec node "$here/build.mjs" "$out"
