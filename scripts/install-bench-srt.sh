#!/usr/bin/env bash
# Installs Anthropic's sandbox runtime (srt) for bench/native.mjs only, into a
# cache folder: it is no dependency of stashbase. srt needs ripgrep and socat
# (installed from Debian's packages when root). Idempotent.
set -euo pipefail
dir=${STASHBASE_BENCH_SRT:-/var/cache/stashbase-bench-srt}
version=0.0.83
log() { printf '[bench-srt] %s\n' "$*" >&2; }
if [ "$(id -u)" = 0 ] && { ! command -v rg >/dev/null || ! command -v socat >/dev/null; }; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep socat >/dev/null
fi
if [ -x "$dir/node_modules/.bin/srt" ] && grep -q "\"version\": \"$version\"" "$dir/node_modules/@anthropic-ai/sandbox-runtime/package.json" 2>/dev/null; then
  log "srt $version present in $dir"
  exit 0
fi
mkdir -p "$dir"
npm install --prefix "$dir" --no-audit --no-fund --no-save "@anthropic-ai/sandbox-runtime@$version" >&2
log "installed srt $version in $dir"
