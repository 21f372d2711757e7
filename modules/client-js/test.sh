#!/usr/bin/env bash
# Tests the TypeScript client: npm ci (from the committed lock file), the build (tsc, the browser
# bundle and its size budget), unit tests of its parts, integration tests in Node against the real
# server (the built jar, modules/runtime/target/hypha-mesh.jar, started per test file on a random
# port), then the same behaviours in real Chromium (Debian's chromium, installed as site/test.sh
# does) unless --no-browser. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")"
browser=1
for a in "$@"; do case "$a" in --no-browser) browser=0 ;; *) echo "client-js test: unknown option $a" >&2; exit 2 ;; esac; done
fail() { echo "client-js test: $*" >&2; exit 1; }

command -v node >/dev/null 2>&1 || fail "Node.js 20+ is needed."
[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ] || fail "Node.js $(node --version) is too old; 20 or newer is needed."
[ -f ../runtime/target/hypha-mesh.jar ] || [ -n "${HYPHA_JAR:-}" ] || fail "no server jar: build it first (./hypha build, or ./hypha test builds it)."

stamp=node_modules/.package-lock.json
if [ ! -d node_modules/typescript ] || [ package-lock.json -nt "$stamp" ]; then
  echo "client-js test: npm ci..."
  npm ci --no-audit --no-fund --loglevel=error || fail "npm ci failed (is the npm registry reachable?)."
fi

echo "client-js test: build"
node build.mjs

echo "client-js test: unit tests"
node --test test/unit/

echo "client-js test: Node integration tests against the server jar"
node --test --test-concurrency=2 --test-timeout=180000 test/node/

echo "client-js test: npm pack, and the tarball installed into an empty app (Node: the optional ws comes with it)"
app=$(mktemp -d)
trap 'rm -rf "$app"' EXIT
npm pack --silent --pack-destination "$app" >/dev/null
(cd "$app" && npm init -y >/dev/null && npm install --prefer-offline --no-audit --no-fund --loglevel=error ./hyphamesh-client-*.tgz >/dev/null) \
  || fail "the packed tarball did not install"
(cd "$app" && node --input-type=module -e "
  import { HyphaClient, HyphaError } from '@hyphamesh/client';
  import 'ws';
  if (typeof HyphaClient.connect !== 'function' || new HyphaError('limit', 'x').code !== 'limit') process.exit(1);
  console.log('client-js test: the installed package imports');") || fail "the installed package does not import"

if [ "$browser" -eq 1 ]; then
  CHROMIUM=$(bash ../../scripts/ensure-chromium.sh) || fail "no Chromium for the browser tests (see above)."
  export CHROMIUM
  echo "client-js test: Chromium ($("$CHROMIUM" --version 2>/dev/null || echo chromium))"
  timeout 600 node test/browser/run.mjs
  echo "client-js test: the operator's console (/console, from the server jar) in Chromium"
  timeout 900 node test/browser/console.mjs
  echo "client-js test: the console against a 3-server cluster (scripts/cluster.sh) in Chromium"
  timeout 900 node test/browser/console-cluster.mjs
fi
echo "client-js test: passed"
