#!/usr/bin/env bash
# Installs the real MCP server the MCP tests run (test/integration/mcp-proxy.test.ts):
# the reference "everything" server from npm, into a cache folder of its own
# (it is no dependency of stashbase). Pinned in scripts/test-agent-versions,
# so that a test failure is ours and not a new release's. Idempotent.
set -euo pipefail
dir=${STASHBASE_TEST_MCP:-/var/cache/stashbase-test-mcp}
. "$(dirname "$0")/test-agent-versions"
log() { printf '[test-mcp] %s\n' "$*" >&2; }
pkg="$dir/node_modules/@modelcontextprotocol/server-everything/package.json"
if [ -f "$pkg" ] && grep -q "\"version\": \"$mcp_everything\"" "$pkg"; then
  log "server-everything $mcp_everything present in $dir"
  exit 0
fi
mkdir -p "$dir"
log "npm install @modelcontextprotocol/server-everything@$mcp_everything into $dir"
npm install --prefix "$dir" --no-audit --no-fund --no-save "@modelcontextprotocol/server-everything@$mcp_everything" >&2
[ -f "$dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ] || { log "not installed"; exit 1; }
log "installed"
