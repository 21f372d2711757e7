#!/usr/bin/env bash
# Builds the benchmark pages: bench/results/*.json -> site/out/*.html (see site/README.md).
# The build uses Node.js (18+) and nothing from npm; only the browser test needs node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null 2>&1; then
  echo "site: Node.js 18+ is needed to build the pages ('apt-get install nodejs', or from nodejs.org)." >&2
  exit 1
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
  echo "site: Node.js $(node --version) is too old; 18 or newer is needed." >&2
  exit 1
fi
exec node site/build.mjs "$@"
