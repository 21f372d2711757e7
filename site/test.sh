#!/usr/bin/env bash
# Tests the benchmark pages: unit tests of the build, then the pages built from the fixture
# results opened from disk in a real headless Chromium (Debian's /usr/bin/chromium, installed
# here when missing). Screenshots go to site/test-output/ (ignored by git). Exits non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")"
fail() { echo "site test: $*" >&2; exit 1; }

command -v node >/dev/null 2>&1 || fail "Node.js 20+ is needed ('apt-get install nodejs' gives too old a version on Debian 12; use nodejs.org or NodeSource)."
[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ] || fail "Node.js $(node --version) is too old; playwright-core needs 20 or newer."

CHROMIUM=$(bash ../scripts/ensure-chromium.sh) || fail "no Chromium for the browser test (see above)."
export CHROMIUM

# playwright-core only (it downloads no browser); reinstalled when the lock file changes.
stamp=node_modules/.package-lock.json
if [ ! -d node_modules/playwright-core ] || [ package-lock.json -nt "$stamp" ]; then
  echo "site test: npm ci (playwright-core)..."
  npm ci --no-audit --no-fund --loglevel=error || fail "npm ci failed (is the npm registry reachable?)."
fi

out=test-output
rm -rf "$out"
mkdir -p "$out/empty-results"

echo "site test: unit tests"
node --test test/unit/

echo "site test: building from test/fixtures/results"
node build.mjs --results test/fixtures/results --out "$out/site"
node build.mjs --results "$out/empty-results" --out "$out/empty-site"

echo "site test: browser ($("$CHROMIUM" --version 2>/dev/null || echo chromium))"
timeout 120 node test/browser.mjs --site "$out/site" --empty "$out/empty-site" \
  --results test/fixtures/results --shown fixture-full-20261128T100000Z.json --shots "$out"

echo "site test: passed; screenshots in site/$out/*.png"
