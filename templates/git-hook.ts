// The git hooks `stashbase scan install` writes: POSIX sh, rendered from facts
// (where the installing CLI and node are, which profile). Outside a sandbox a
// hook runs `stashbase scan`; inside a stashbase run whose profile allows the
// secret_scan hook, it posts the scan's arguments to the run's proxy with curl
// and prints what the host-side scan answers (lib/hooks/host-scan.ts).
import { shellQuote } from './shell-quote.js';

export type HookKind = 'pre-commit' | 'pre-push';
export const HOOK_KINDS: readonly HookKind[] = ['pre-commit', 'pre-push'];

/** The first lines of every hook we write: how `scan install` knows a hook is ours. */
export const HOOK_MARKER = '# stashbase-scan-hook 1';
/** A foreign hook we chained is kept beside ours under its name plus this; ours runs it first. */
export const CHAINED_SUFFIX = '.stashbase-chained';
export const HOOK_URL_VAR = 'STASHBASE_HOOK_URL';
export const HOOK_TOKEN_VAR = 'STASHBASE_HOOK_TOKEN';

export interface HookInput {
  kind: HookKind;
  /** The node binary and the CLI's entry that installed the hook (absolute); PATH's stashbase is the fallback. */
  node: string;
  cli: string;
  /** Extra arguments for the local scan, e.g. ["--profile", "coding"]. */
  profileArgs: string[];
}

// The answer of the proxy is JSON {"exit": N, "stdout": "…", "stderr": "…"}
// (lib/hooks/host-scan.ts encodeScanAnswer): a flat object of a number and
// strings. POSIX awk decodes it; \uXXXX (which the answer only uses for what
// its encoder could not avoid) prints as "?".
const AWK_DECODE = String.raw`
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
  if (bad || code !~ /^[0-9]+$/) { print "stashbase secret scan: cannot read the proxy's answer; the scan did not run" > "/dev/stderr"; exit 1 }
  printf "%s", out
  printf "%s", err > "/dev/stderr"
  code += 0
  exit (code > 255 ? 1 : code)
}`;

export function renderHook(h: HookInput): string {
  const local = (args: string) => `"$SB_NODE" "$SB_CLI" scan ${args}${h.profileArgs.map((a) => ' ' + shellQuote(a)).join('')}`;
  const onPath = (args: string) => `stashbase scan ${args}${h.profileArgs.map((a) => ' ' + shellQuote(a)).join('')}`;
  return `#!/bin/sh
${HOOK_MARKER} (${h.kind})
# Written by \`stashbase scan install\`; \`stashbase scan install --uninstall\` removes it
# (and puts back a hook it chained). It blocks the ${h.kind === 'pre-commit' ? 'commit' : 'push'} when the secret scan finds
# something. Outside a sandbox it runs stashbase here; inside a stashbase run whose
# profile sets allow_hooks = ["secret_scan"], the run's proxy scans on the host.
SB_NODE=${shellQuote(h.node)}
SB_CLI=${shellQuote(h.cli)}

sb_fail() {
  printf 'stashbase secret scan: %s\\n' "$1" >&2
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
  [ "$(( $(printf '%s%s' "$PWD" "\${GIT_INDEX_FILE:-}" | LC_ALL=C tr -d '\\040-\\176\\200-\\377' | wc -c) ))" -eq 0 ] ||
    sb_fail 'cannot scan: the path of the working directory or index has control characters'
  sb_esc() { printf '%s' "$1" | sed -e 's/\\\\/\\\\\\\\/g' -e 's/"/\\\\"/g'; }
  sb_args=''
  for a in "$@"; do sb_args="$sb_args\${sb_args:+, }\\"$a\\""; done
  sb_index=''
  if [ -n "\${GIT_INDEX_FILE:-}" ]; then
    case $GIT_INDEX_FILE in /*) sb_i=$GIT_INDEX_FILE ;; *) sb_i=$PWD/$GIT_INDEX_FILE ;; esac
    sb_index=", \\"indexFile\\": \\"$(sb_esc "$sb_i")\\""
  fi
  sb_tmp=$(mktemp -d) || sb_fail 'cannot scan: no temporary folder'
  trap 'rm -rf "$sb_tmp"' EXIT
  # The token on no command line (every user reads them in /proc): curl reads it from a file.
  printf 'Authorization: Bearer %s\\n' "$${HOOK_TOKEN_VAR}" >"$sb_tmp/h" || sb_fail 'cannot scan: no temporary folder'
  printf '{"args": [%s], "cwd": "%s"%s}' "$sb_args" "$(sb_esc "$PWD")" "$sb_index" >"$sb_tmp/body"
  sb_status=$(curl -sS --noproxy '*' --max-time 300 -o "$sb_tmp/answer" -w '%{http_code}' -X POST \\
    -H @"$sb_tmp/h" -H 'Content-Type: application/json' \\
    --data-binary @"$sb_tmp/body" "$${HOOK_URL_VAR}/scan") || sb_fail "cannot scan: the request to the stashbase proxy failed (curl exit $?)"
  if [ "$sb_status" != 200 ]; then
    printf 'stashbase secret scan: cannot scan: the stashbase proxy answered HTTP %s\\n' "$sb_status" >&2
    head -c 2000 "$sb_tmp/answer" | LC_ALL=C tr -d '\\000-\\010\\013-\\037\\177' >&2
    printf '\\n' >&2
    exit 1
  fi
  awk '${AWK_DECODE.replace(/'/g, `'\\''`)}' "$sb_tmp/answer"
}

sb_scan() {
  if [ -n "\${${HOOK_URL_VAR}:-}" ] && [ -n "\${${HOOK_TOKEN_VAR}:-}" ]; then
    (sb_remote "$@")
    return
  fi
  if [ -x "$SB_NODE" ] && [ -f "$SB_CLI" ]; then
    ${local('"$@"')}
    return
  fi
  if command -v stashbase >/dev/null 2>&1; then
    ${onPath('"$@"')}
    return
  fi
  sb_fail 'cannot scan: stashbase is not installed here, and this is not a stashbase sandbox that scans on the host (a run whose profile sets allow_hooks = ["secret_scan"])'
}

sb_chained="$(dirname -- "$0")/${h.kind}${CHAINED_SUFFIX}"
${h.kind === 'pre-commit' ? preCommit() : prePush()}`;
}

function preCommit(): string {
  return `if [ -x "$sb_chained" ]; then
  "$sb_chained" "$@" || exit $?
fi
sb_scan --staged
`;
}

// Each pushed ref is scanned from the remote's commit to ours; a new branch
// (remote side all zeros) from where the remotes are; a deletion sends nothing.
function prePush(): string {
  return `sb_input=$(cat; echo .)
sb_input=\${sb_input%.}
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
`;
}
