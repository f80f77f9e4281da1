#!/usr/bin/env bash
# Builds the local test base image (no registry is reachable here): a minimal
# Debian made by debootstrap with the tools the tests use, then `docker import`.
# It stands in for node:22-bookworm-slim. Reused when present.
set -euo pipefail
image=${STASHBASE_TEST_BASE_IMAGE:-stashbase-test-base:latest}
log() { printf '[test-image] %s\n' "$*" >&2; }

if docker image inspect "$image" >/dev/null 2>&1; then
  log "$image present"
  exit 0
fi

# The mirror and suite come from this machine's own apt configuration.
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
mirror=$(grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -n1 || true)
if [ -z "$mirror" ]; then
  mirror=$(grep -hE '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' | head -n1 || true)
fi
[ -n "$mirror" ] || { log "no Debian mirror found in apt's configuration"; exit 1; }

root=$(mktemp -d /var/tmp/stashbase-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT
log "debootstrap $suite into $root"
debootstrap --variant=minbase \
  --include=iptables,curl,ca-certificates,git,procps,python3,iproute2,bash \
  "$suite" "$root" "$mirror" >/var/log/stashbase-debootstrap.log 2>&1 || {
    log "debootstrap failed; see /var/log/stashbase-debootstrap.log"; tail -n 20 /var/log/stashbase-debootstrap.log >&2; exit 1; }
# Keep apt usable inside builds FROM this image, with the same mirror.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
log "docker import as $image"
tar -C "$root" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["/bin/bash"]' - "$image" >/dev/null
log "built $image"
