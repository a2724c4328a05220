#!/usr/bin/env bash
# `npm test`: prepares a fresh machine for the suite, then runs vitest with any arguments passed through
# (`npm test -- test/run --reporter=json` → `vitest run test/run --reporter=json`).
#
# Set-up it does, only when missing:
#   - node_modules (a fresh clone): `npm ci`, which also builds dist/ through the prepare script;
#   - dist/ older than a source file: `npm run build` (CLI tests start the built CLI: INFERBENCH_TEST_CLI=dist);
#   - /usr/bin/chromium, which test/report/html.test.ts drives through playwright-core: Debian's package,
#     installed non-interactively with apt-get (as root, or through `sudo -n`). Where that is impossible it
#     says so in one line and the HTML test fails with its own message (it never skips silently).
set -uo pipefail
cd "$(dirname "$0")/.."

if [ ! -x node_modules/.bin/vitest ]; then
  echo "test setup: node_modules is missing; running npm ci" >&2
  npm ci --no-audit --no-fund || { echo "test setup: npm ci failed" >&2; exit 1; }
fi

CHROMIUM=/usr/bin/chromium
if [ ! -x "$CHROMIUM" ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
  log="$(mktemp -t inferbench-apt.XXXXXX)"
  if ! command -v apt-get >/dev/null; then
    echo "test setup: $CHROMIUM is missing and there is no apt-get here; install Chromium at $CHROMIUM or test/report/html.test.ts will fail" >&2
  elif [ -n "$sudo" ] && ! sudo -n true 2>/dev/null; then
    echo "test setup: $CHROMIUM is missing and installing it needs root; run: sudo apt-get install -y chromium (else test/report/html.test.ts fails)" >&2
  else
    echo "test setup: installing Debian's chromium for the HTML report test (apt-get, log in $log)" >&2
    if { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } >"$log" 2>&1 \
      && [ -x "$CHROMIUM" ]; then
      rm -f "$log"
    else
      echo "test setup: could not install chromium (apt-get failed, see $log); test/report/html.test.ts will fail" >&2
    fi
  fi
fi

# CLI tests start the built CLI (test/helpers/cli.ts): rebuild dist/ first when any source is newer than it, so
# the build is always what src/ says (tsc rewrites every output, so main.js dates the last build).
stamp=dist/cli/main.js
if [ ! -f "$stamp" ] || [ -n "$(find src -newer "$stamp" -type f -print -quit)" ]; then
  echo "test setup: building dist/ (sources changed since the last build)" >&2
  npm run --silent build || { echo "test setup: npm run build failed" >&2; exit 1; }
fi
export INFERBENCH_TEST_CLI=dist

exec node_modules/.bin/vitest run "$@"
