#!/usr/bin/env bash
# Installs stashbase from this checkout for the native backend: bubblewrap (on
# Debian/Ubuntu, when run as root; Go too, for the Docker backend's relay) and the npm dependencies, builds, and puts
# `stashbase` on PATH: a link to this checkout's bin/stashbase.cjs in the first
# of npm's global bin folder, ~/.local/bin and ~/bin that is on PATH and
# writable (never a package from a registry: `npx stashbase` outside this
# checkout would fetch someone else's). Idempotent; any folder, /tmp included.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$(pwd)
if [ "$(uname -s)" = Linux ] && ! command -v bwrap >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
  else
    echo "install bubblewrap first (Debian/Ubuntu: sudo apt-get install bubblewrap)" >&2
    exit 1
  fi
fi
# Go builds the sealed network's relay for the Docker backend (relay/); the native backend does not need it.
if [ "$(uname -s)" = Linux ] && ! command -v go >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  bash scripts/install-go.sh
fi
# npm says what it does on stderr: standard output is the command's own.
npm ci --no-audit --no-fund --loglevel=error >&2

on_path() { case ":$PATH:" in *":$1:"*) return 0 ;; *) return 1 ;; esac; }
candidates=("$(npm prefix -g)/bin" "$HOME/.local/bin" "$HOME/bin")
for dir in "${candidates[@]}"; do
  if on_path "$dir" && mkdir -p "$dir" 2>/dev/null && [ -w "$dir" ]; then
    ln -sfn "$here/bin/stashbase.cjs" "$dir/stashbase"
    echo "stashbase: $dir/stashbase -> $here/bin/stashbase.cjs" >&2
    exit 0
  fi
done
echo "stashbase is built, but none of ${candidates[*]} is both on PATH and writable: add $here/bin to PATH, or link $here/bin/stashbase.cjs as stashbase into a folder on it" >&2
exit 1
