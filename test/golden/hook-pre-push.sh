#!/bin/sh
# stashbase-scan-hook 1 (pre-push)
# Written by `stashbase scan install`; `stashbase scan install --uninstall` removes it
# (and puts back a hook it chained). It blocks the push when the secret scan finds
# something. Outside a sandbox it runs stashbase here; inside a stashbase run whose
# profile sets allow_hooks = ["secret_scan"], the run's proxy scans on the host.
SB_NODE=/usr/bin/node
SB_CLI='/opt/it'\''s here/bin/stashbase.cjs'

sb_fail() {
  printf 'stashbase secret scan: %s\n' "$1" >&2
  exit 1
}

sb_remote() {
  command -v curl >/dev/null 2>&1 || sb_fail 'cannot scan: curl is not installed in this sandbox (the hook asks the stashbase proxy to scan on the host with curl)'
  for a in "$@"; do
    case $a in
      --staged|--range) ;;
      ''|*[!0-9a-f.]*) sb_fail 'cannot scan: unexpected scan argument' ;;
    esac
  done
  # JSON strings: backslash and quote escaped; a path with control characters is refused.
  [ "$(( $(printf '%s%s' "$PWD" "${GIT_INDEX_FILE:-}" | LC_ALL=C tr -d '\040-\176\200-\377' | wc -c) ))" -eq 0 ] ||
    sb_fail 'cannot scan: the path of the working directory or index has control characters'
  sb_esc() { printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g'; }
  sb_args=''
  for a in "$@"; do sb_args="$sb_args${sb_args:+, }\"$a\""; done
  sb_index=''
  if [ -n "${GIT_INDEX_FILE:-}" ]; then
    case $GIT_INDEX_FILE in /*) sb_i=$GIT_INDEX_FILE ;; *) sb_i=$PWD/$GIT_INDEX_FILE ;; esac
    sb_index=", \"indexFile\": \"$(sb_esc "$sb_i")\""
  fi
  sb_tmp=$(mktemp -d) || sb_fail 'cannot scan: no temporary folder'
  trap 'rm -rf "$sb_tmp"' EXIT
  # The token on no command line (every user reads them in /proc): curl reads it from a file.
  printf 'Authorization: Bearer %s\n' "$STASHBASE_HOOK_TOKEN" >"$sb_tmp/h" || sb_fail 'cannot scan: no temporary folder'
  printf '{"args": [%s], "cwd": "%s"%s}' "$sb_args" "$(sb_esc "$PWD")" "$sb_index" >"$sb_tmp/body"
  sb_status=$(curl -sS --noproxy '*' --max-time 300 -o "$sb_tmp/answer" -w '%{http_code}' -X POST \
    -H @"$sb_tmp/h" -H 'Content-Type: application/json' \
    --data-binary @"$sb_tmp/body" "$STASHBASE_HOOK_URL/scan") || sb_fail "cannot scan: the request to the stashbase proxy failed (curl exit $?)"
  if [ "$sb_status" != 200 ]; then
    printf 'stashbase secret scan: cannot scan: the stashbase proxy answered HTTP %s\n' "$sb_status" >&2
    head -c 2000 "$sb_tmp/answer" | LC_ALL=C tr -d '\000-\010\013-\037\177' >&2
    printf '\n' >&2
    exit 1
  fi
  awk '
function str(   out, c, d) {
  out = ""
  for (pos++; pos <= n; pos++) {
    c = substr(s, pos, 1)
    if (c == "\"") { pos++; return out }
    if (c != "\\") { out = out c; continue }
    d = substr(s, ++pos, 1)
    if (d == "n") out = out "\n"; else if (d == "t") out = out "\t"; else if (d == "r") out = out "\r"
    else if (d == "u") { out = out "?"; pos += 4 } else if (d != "b" && d != "f") out = out d
  }
  bad = 1; return out
}
function ws() { while (pos <= n && substr(s, pos, 1) ~ /[ \t\r\n]/) pos++ }
{ s = s $0 "\n" }
END {
  n = length(s); pos = index(s, "{"); bad = (pos == 0); pos++; code = ""
  while (!bad) {
    ws(); c = substr(s, pos, 1)
    if (c == "}") break
    if (c == ",") { pos++; continue }
    if (c != "\"") { bad = 1; break }
    key = str(); ws()
    if (substr(s, pos, 1) != ":") { bad = 1; break }
    pos++; ws()
    if (substr(s, pos, 1) == "\"") val = str()
    else { val = ""; while (pos <= n && substr(s, pos, 1) ~ /[-0-9]/) { val = val substr(s, pos, 1); pos++ } }
    if (key == "exit") code = val; else if (key == "stdout") out = val; else if (key == "stderr") err = val
  }
  if (bad || code !~ /^[0-9]+$/) { print "stashbase secret scan: cannot read the proxy'\''s answer; the scan did not run" > "/dev/stderr"; exit 1 }
  printf "%s", out
  printf "%s", err > "/dev/stderr"
  code += 0
  exit (code > 255 ? 1 : code)
}' "$sb_tmp/answer"
}

sb_scan() {
  if [ -n "${STASHBASE_HOOK_URL:-}" ] && [ -n "${STASHBASE_HOOK_TOKEN:-}" ]; then
    (sb_remote "$@")
    return
  fi
  if [ -x "$SB_NODE" ] && [ -f "$SB_CLI" ]; then
    "$SB_NODE" "$SB_CLI" scan "$@" --profile coding
    return
  fi
  if command -v stashbase >/dev/null 2>&1; then
    stashbase scan "$@" --profile coding
    return
  fi
  sb_fail 'cannot scan: stashbase is not installed here, and this is not a stashbase sandbox that scans on the host (a run whose profile sets allow_hooks = ["secret_scan"])'
}

sb_chained="$(dirname -- "$0")/pre-push.stashbase-chained"
sb_input=$(cat; echo .)
sb_input=${sb_input%.}
if [ -x "$sb_chained" ]; then
  printf '%s' "$sb_input" | "$sb_chained" "$@" || exit $?
fi
sb_result=0
while read -r sb_lref sb_lsha sb_rref sb_rsha; do
  [ -n "$sb_lsha" ] || continue
  case $sb_lsha$sb_rsha in *[!0-9a-f]*) sb_fail "unexpected input from git: $sb_lref" ;; esac
  case $sb_lsha in *[!0]*) ;; *) continue ;; esac
  sb_scan --range "$sb_rsha..$sb_lsha" || sb_result=1
done <<SB_EOF
$sb_input
SB_EOF
exit $sb_result
