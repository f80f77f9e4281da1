#!/usr/bin/env bash
# Installs Go (Debian's golang-go), the toolchain `npm run build` builds the
# sealed network's relay with (relay/, scripts/build-relay.mjs). Idempotent.
set -euo pipefail
if command -v go >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends golang-go >/dev/null
else
  echo "install Go first (Debian/Ubuntu: sudo apt-get install golang-go): npm run build builds the sealed network's relay with it" >&2
  exit 1
fi
