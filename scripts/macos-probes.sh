#!/usr/bin/env bash
# On a Mac: runs every probe that decides a claim docs/sandboxing.md makes of
# the macOS (Seatbelt) backend, under the profile stashbase generates, and
# prints a table of expected against actual, each probe also run outside the
# sandbox (where it must succeed, or the probe proves nothing). Exits 1 when a
# probe differs, 2 when it cannot run. It does not run on Linux: there CI
# renders the same profile and decides it in test/unit/seatbelt-mac.test.ts.
# .github/workflows/macos-probes.yml runs it on a hosted macOS runner.
#
#   bash scripts/macos-probes.sh            the probes
#   bash scripts/macos-probes.sh --agents   and a real Claude Code and Codex
#                                           turn against the local API stubs
#                                           (test/integration/real-agents.test.ts;
#                                           scripts/install-test-agents.sh first)
#
# Traffic goes to loopback only. What the probes leave outside the sandbox (a
# Keychain item, a preference domain, a launchd job, processes) is removed.
set -uo pipefail
if [ "$(uname -s)" != Darwin ]; then echo "macos-probes.sh runs on macOS only (Linux CI checks the profile in test/unit/seatbelt-mac.test.ts)" >&2; exit 2; fi
cd "$(dirname "$0")/.."
REPO=$PWD
[ -f dist/bundle/cli.cjs ] || npm run build >&2 || exit 2
SB=(node "$REPO/bin/stashbase.cjs")
W=$(mktemp -d /tmp/sbprobe.XXXXXX) || exit 2
W=$(cd "$W" && pwd -P)   # /private/tmp/…: the form Seatbelt matches
REAL_HOME=$HOME
export HOME="$W/home" STASHBASE_HOME="$W/home/.stashbase"
P="$W/proj"
mkdir -p "$HOME/.ssh" "$HOME/dotfiles" "$P" "$STASHBASE_HOME/agents"
echo PROBE-KEY >"$HOME/.ssh/id_probe"
echo LINKED-KEY >"$HOME/dotfiles/key"
echo keep >"$W/outside.txt"
ln -s "$HOME/dotfiles/key" "$HOME/.ssh/linked"
NFC=$(printf 'cl\xc3\xa9s') NFD=$(printf 'cle\xcc\x81s')
mkdir -p "$HOME/$NFC" && echo ACCENT >"$HOME/$NFC/k"
PORT=$(perl -MIO::Socket::INET -e 'print IO::Socket::INET->new(LocalAddr=>"127.0.0.1",LocalPort=>0,Listen=>1)->sockport')
cat >"$STASHBASE_HOME/agents/probe.toml" <<EOF
[filesystem]
deny_read = ["~/$NFC"]
[network]
egress_hosts = ["probe.test"]
[network.hosts]
"probe.test" = "127.0.0.1:$PORT"
EOF
sed 's/^\[network\]$/[sandbox]\nmacos_allow = ["localhost"]\n[network]/' "$STASHBASE_HOME/agents/probe.toml" >"$STASHBASE_HOME/agents/probe-localhost.toml"

# Outside the sandbox: a web server on loopback, a Unix socket, a process of yours, a Keychain item, the pasteboard.
perl -MIO::Socket::INET -e '$s=IO::Socket::INET->new(LocalAddr=>"127.0.0.1",LocalPort=>'"$PORT"',Listen=>5,ReuseAddr=>1) or die; while($c=$s->accept){<$c>; print $c "HTTP/1.0 200 OK\r\n\r\nLOCAL-OK\n"; close $c}' &
SERVER=$!
perl -MIO::Socket::UNIX -e '$s=IO::Socket::UNIX->new(Local=>"'"$W/sock"'",Listen=>1) or die; while($c=$s->accept){close $c}' &
USOCK=$!
/bin/sh -c 'sleep 600' sbprobe-marker-arg &
VICTIM=$!
security add-generic-password -s stashbase-probe -a probe -w probe-secret -U >/dev/null 2>&1
OLD_CLIP=$(pbpaste 2>/dev/null || true)
echo probe-clip | pbcopy
OTHER="$(getconf DARWIN_USER_TEMP_DIR)stashbase-ags_probeprobeprobe2"
mkdir -p "$OTHER" && echo OTHER-RUN >"$OTHER/f"
cleanup() {
  kill "$SERVER" "$USOCK" "$VICTIM" 2>/dev/null
  security delete-generic-password -s stashbase-probe >/dev/null 2>&1
  defaults delete com.stashbase.probe >/dev/null 2>&1
  launchctl remove com.stashbase.probe >/dev/null 2>&1
  printf '%s' "$OLD_CLIP" | pbcopy
  rm -rf "$OTHER" "$W"
}
trap cleanup EXIT
sleep 1

FAIL=0
printf '%-34s %-9s %-9s %-9s %s\n' probe outside expected inside verdict
# probe NAME EXPECTED PROFILE SCRIPT: the script exits 0 when the operation worked.
probe() {
  local name=$1 want=$2 profile=$3 script=$4 out_rc in_rc outside inside verdict
  (cd "$P" && /bin/sh -c "$script") >/dev/null 2>&1; out_rc=$?
  (cd "$P" && "${SB[@]}" agent run --silent --profile "$profile" -- /bin/sh -c "$script") >/dev/null 2>&1; in_rc=$?
  outside=refused; [ $out_rc -eq 0 ] && outside=worked
  inside=refused; [ $in_rc -eq 0 ] && inside=worked
  verdict=ok
  if [ "$inside" != "$want" ]; then verdict=DIFFERS; FAIL=1; fi
  # A probe that cannot succeed outside proves nothing about the sandbox.
  if [ "$want" = refused ] && [ "$outside" != worked ]; then verdict="$verdict (no control)"; FAIL=1; fi
  printf '%-34s %-9s %-9s %-9s %s\n' "$name" "$outside" "$want" "$inside" "$verdict"
}

# Reads and the path forms Seatbelt matches.
probe read-denied            refused probe "cat '$HOME/.ssh/id_probe'"
probe read-denied-case       refused probe "cat '$HOME/.SSH/id_probe'"
probe read-denied-nfd        refused probe "cat '$HOME/$NFD/k'"
probe read-denied-nfc        refused probe "cat '$HOME/$NFC/k'"
probe read-link-target       refused probe "cat '$HOME/dotfiles/key'"
probe hard-link-denied       refused probe "ln '$HOME/.ssh/id_probe' ./hl && cat ./hl"
probe hard-link-out-writable  refused probe "ln '$W/outside.txt' ./ol && echo changed >> ./ol && grep -q changed '$W/outside.txt'"
probe read-other-run         refused probe "cat '$OTHER/f'"
probe read-ordinary          worked  probe "cat /etc/hosts"
# Writes: the working directory and the run's temp folder; never /tmp, never home.
probe write-cwd              worked  probe "echo x > ./f"
probe write-tmpdir           worked  probe 'echo x > "$TMPDIR/f"'
probe write-tmp              refused probe "echo x > /tmp/sbprobe-\$\$"
probe write-private-tmp      refused probe "echo x > /private/tmp/sbprobe-\$\$"
probe write-home             refused probe "echo x > '$HOME/planted'"
# The agents' live state, read by your own agents: files there, but no link or FIFO (a unique name each try).
probe live-state-file          worked  probe "mkdir -p '$HOME/.claude/projects/p' && echo t > '$HOME/.claude/projects/p/s-'\$\$.jsonl"
probe live-state-link          refused probe "mkdir -p '$HOME/.claude/projects/p' && ln -s '$HOME/.bashrc' '$HOME/.claude/projects/p/l-'\$\$.jsonl"
probe live-state-fifo          refused probe "mkdir -p '$HOME/.codex/sessions' && mkfifo '$HOME/.codex/sessions/f-'\$\$"
probe history-link             refused probe "mkdir -p '$HOME/.claude' && rm -f '$HOME/.claude/history.jsonl' && ln -s '$HOME/.bashrc' '$HOME/.claude/history.jsonl' && rm -f '$HOME/.claude/history.jsonl'"
probe zsh-heredoc            worked  probe "zsh -c 'cat <<EOF
ok
EOF'"
probe launch-agent           refused probe "mkdir -p '$HOME/Library/LaunchAgents' && echo x > '$HOME/Library/LaunchAgents/x.plist'"
# Escapes through other processes.
probe lsopen                 refused probe "printf '#!/bin/sh\ntouch $W/opened\n' > ./x.command && chmod +x ./x.command && open ./x.command"
probe apple-events           refused probe "osascript -e 'tell application \"System Events\" to get name'"
probe launchd-job            refused probe "launchctl submit -l com.stashbase.probe -- /usr/bin/true"
probe preference-write       refused probe "defaults write com.stashbase.probe k v"
probe keychain               refused probe "security find-generic-password -s stashbase-probe -w"
probe pasteboard             refused probe "pbpaste | grep -q probe-clip"
probe signal-other           refused probe "kill -0 $VICTIM"
probe procargs-other         refused probe "ps -axww -o command= | grep -v grep | grep -q sbprobe-marker-arg"
probe nested-sandbox-exec    refused probe "sandbox-exec -p '(version 1)(allow default)' /usr/bin/true"
# Network: the proxy only; listeners on loopback only; no Unix sockets.
probe proxy-allowed-host     worked  probe "curl -sSf http://probe.test:$PORT/"
probe raw-loopback           refused probe "curl -sSf --noproxy '*' http://127.0.0.1:$PORT/"
probe raw-loopback-opted     worked  probe-localhost "curl -sSf --noproxy '*' http://127.0.0.1:$PORT/"
probe listen-any             refused probe "perl -MIO::Socket::INET -e 'IO::Socket::INET->new(LocalAddr=>\"0.0.0.0\",LocalPort=>0,Listen=>1) or exit 1'"
probe listen-loopback        worked  probe "perl -MIO::Socket::INET -e 'IO::Socket::INET->new(LocalAddr=>\"127.0.0.1\",LocalPort=>0,Listen=>1) or exit 1'"
probe unix-socket            refused probe "perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer=>\"$W/sock\") or exit 1'"
probe socketpair             worked  probe "perl -MSocket -e 'socketpair(my \$a, my \$b, AF_UNIX, SOCK_STREAM, 0) or exit 1'"

# TIOCSTI: input the agent pushes into its terminal must not reach the shell that ran stashbase.
# The shell runs on a terminal of script(1)'s; after the command, it reads what is queued there.
cat >"$W/tiocsti.sh" <<'EOF'
cd "$1"; shift
"$@" perl -e 'open(my $t, "<", "/dev/tty") or exit 3; ioctl($t, 0x80017472, "Z"); exit 0'
read -t 2 line
echo "got=[$line]"
EOF
queued() { script -q /dev/null /bin/sh "$W/tiocsti.sh" "$P" "$@" </dev/zero 2>/dev/null | tr -d '\r' | grep -o 'got=\[[^]]*\]' | tail -1; }
t_out=$(queued env)
t_in=$(queued "${SB[@]}" agent run --silent --profile probe --)
verdict=ok
[ "$t_in" = 'got=[]' ] || { verdict=DIFFERS; FAIL=1; }
[ "$t_out" = 'got=[Z]' ] || { verdict="$verdict (no control)"; FAIL=1; }
printf '%-34s %-9s %-9s %-9s %s\n' tiocsti-reaches-your-shell "$t_out" 'got=[]' "$t_in" "$verdict"

if [ "${1:-}" = --agents ]; then
  echo "# the real agents (test/integration/real-agents.test.ts) against the local API stubs"
  (cd "$REPO" && HOME=$REAL_HOME STASHBASE_REQUIRE_INTEGRATION=1 node --test --test-name-pattern='^(?!.*tmux).*' dist/test/integration/real-agents.test.js) || FAIL=1
fi
exit $FAIL
