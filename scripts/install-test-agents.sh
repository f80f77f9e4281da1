#!/usr/bin/env bash
# Installs the real Claude Code and Codex CLIs that the compatibility tests run
# inside the sandbox (test/integration/real-agents.test.ts), from npm, into a
# cache folder of their own: they are no dependency of stashbase. Pinned (in
# scripts/test-agent-versions), so that a test failure is ours and not a new
# release's. Idempotent.
set -euo pipefail
dir=${STASHBASE_TEST_AGENTS:-/var/cache/stashbase-test-agents}
. "$(dirname "$0")/test-agent-versions"
log() { printf '[test-agents] %s\n' "$*" >&2; }

have() { [ -x "$dir/node_modules/.bin/claude" ] && [ -x "$dir/node_modules/.bin/codex" ] &&
  "$dir/node_modules/.bin/claude" --version 2>/dev/null | grep -q "^$claude " &&
  "$dir/node_modules/.bin/codex" --version 2>/dev/null | grep -q " $codex$"; }

if have; then
  log "Claude Code $claude and Codex $codex present in $dir"
  exit 0
fi
mkdir -p "$dir"
log "npm install @anthropic-ai/claude-code@$claude @openai/codex@$codex into $dir"
npm install --prefix "$dir" --no-audit --no-fund --no-save "@anthropic-ai/claude-code@$claude" "@openai/codex@$codex" >&2
# Claude Code's package puts its native binary in place at postinstall, which npm may not have run.
if ! "$dir/node_modules/.bin/claude" --version >/dev/null 2>&1; then
  (cd "$dir/node_modules/@anthropic-ai/claude-code" && node install.cjs >&2)
fi
have || { log "the agents do not start from $dir"; exit 1; }
log "installed"
