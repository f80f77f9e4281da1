#!/usr/bin/env bash
# Installs stashbase from this checkout for the native backend: bubblewrap (on
# Debian/Ubuntu, when run as root) and the npm dependencies, then builds.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(uname -s)" = Linux ] && ! command -v bwrap >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
  else
    echo "install bubblewrap first (Debian/Ubuntu: sudo apt-get install bubblewrap)" >&2
    exit 1
  fi
fi
npm ci --no-audit --no-fund
