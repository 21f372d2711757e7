#!/usr/bin/env bash
# Makes sure a Chromium for the browser tests is there: $CHROMIUM if set, else Debian's
# /usr/bin/chromium, installed with apt-get when missing (needs root). Prints its path; exits
# non-zero with the reason otherwise. Used by site/test.sh and modules/client-js/test.sh.
set -euo pipefail
fail() { echo "$*" >&2; exit 1; }
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
  [ "$CHROMIUM" = /usr/bin/chromium ] || fail "CHROMIUM=$CHROMIUM is not an executable."
  command -v apt-get >/dev/null 2>&1 || fail "$CHROMIUM is missing and apt-get is not available to install Debian's chromium: install Chromium, or set CHROMIUM to its path."
  [ "$(id -u)" -eq 0 ] || fail "$CHROMIUM is missing; installing it needs root: run 'apt-get install -y chromium' as root, or set CHROMIUM."
  echo "installing Debian's chromium (apt-get install -y chromium)..." >&2
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/tmp/chromium-apt.log 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get update -q >>/tmp/chromium-apt.log 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >>/tmp/chromium-apt.log 2>&1 \
      || fail "could not install chromium with apt-get (log: /tmp/chromium-apt.log)."
  fi
  [ -x "$CHROMIUM" ] || fail "apt-get installed chromium but $CHROMIUM is still missing."
fi
echo "$CHROMIUM"
