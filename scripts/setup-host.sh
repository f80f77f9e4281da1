#!/usr/bin/env bash
# Installs and starts what stashbase's integration tests need on a Debian host,
# as root: bubblewrap, iptables, git, a Docker engine (dockerd started in the
# background), debootstrap, the locally built test base image, tmux (the
# control-socket attack tests drive a real tmux server), curl (the secret scan
# hook's in-sandbox path posts with it), Go (a Go client must take the run's
# name-constrained CA), secret-tool and GNOME Keyring (a secret from the
# keyring), and the real Claude Code
# and Codex CLIs for the compatibility tests (scripts/install-test-agents.sh),
# and zsh and fish (completion is tested in each), and gVisor's runsc
# registered with the engine (scripts/install-runsc.sh: the sealed network's tests),
# and a second Docker engine in a container over tcp:// and ssh://
# (scripts/start-remote-engine.sh: the remote runs' tests).
# Idempotent: every step checks first and does nothing when already done.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

log() { printf '[setup] %s\n' "$*" >&2; }

if [ "$(id -u)" != 0 ]; then
  log "must run as root (it installs Debian packages and starts dockerd)"
  exit 1
fi

need_pkgs=()
for pair in bwrap:bubblewrap iptables:iptables git:git dockerd:docker.io \
            debootstrap:debootstrap ip:iproute2 script:bsdutils tmux:tmux curl:curl go:golang-go ssh:openssh-client; do
  cmd=${pair%%:*} pkg=${pair#*:}
  command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || need_pkgs+=("$pkg")
done
if [ ${#need_pkgs[@]} -gt 0 ]; then
  log "installing: ${need_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi
# The keyring source of a secret is tested against GNOME Keyring's Secret Service, headless (no desktop: no recommends).
if ! command -v secret-tool >/dev/null 2>&1 || ! command -v gnome-keyring-daemon >/dev/null 2>&1; then
  log "installing: libsecret-tools gnome-keyring"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends libsecret-tools gnome-keyring dbus-daemon >/dev/null
fi
# Completion is tested in zsh and fish as well as bash.
if ! command -v zsh >/dev/null 2>&1 || ! command -v fish >/dev/null 2>&1; then
  log "installing: zsh fish"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends zsh fish >/dev/null
fi

"$here/start-dockerd.sh"
"$here/build-test-image.sh"
"$here/install-test-agents.sh"
"$here/install-test-mcp.sh"
"$here/install-runsc.sh"
"$here/start-remote-engine.sh"
log "host ready"
