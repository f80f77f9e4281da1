#!/usr/bin/env bash
# A second Docker engine on this machine, in a container, for the remote-run
# tests (docs/remote.md): another machine's engine as far as stashbase can
# tell. It answers on tcp://<its address>:2375 and, through its SSH server, on
# ssh://root@<its address>; it cannot see this machine's files. This VM's root
# lacks CAP_SYS_RESOURCE, so --privileged fails: every other capability, no
# seccomp or AppArmor profile, the cgroup tree.
#
# Idempotent: the image is built once (from the local test base plus Debian's
# docker.io and openssh-server), the container started when not running, and
# the images the tests run (the default one, the test base, and any named as
# arguments) loaded into it when it lacks them. Writes, under
# $STASHBASE_REMOTE_STATE (default /var/lib/stashbase-remote-engine):
#   env          DOCKER_HOST values for tcp and ssh (sourced by the tests)
#   id_ed25519   the client key; known_hosts: the engine's host key
#   bin/ssh      ssh with that key and known_hosts (put first on PATH for ssh://)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
name=stashbase-remote-engine
image=stashbase-remote-engine:latest
base=${STASHBASE_TEST_BASE_IMAGE:-stashbase-test-base:latest}
state=${STASHBASE_REMOTE_STATE:-/var/lib/stashbase-remote-engine}
volume=stashbase-remote-engine-data
log() { printf '[remote-engine] %s\n' "$*" >&2; }

if ! command -v ssh >/dev/null 2>&1 || ! command -v ssh-keygen >/dev/null 2>&1; then
  log "installing: openssh-client"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-client >/dev/null
fi
docker image inspect "$base" >/dev/null 2>&1 || "$here/build-test-image.sh"

if ! docker image inspect "$image" >/dev/null 2>&1; then
  log "building $image from $base (docker.io, openssh-server)"
  docker build -q -t "$image" - >/dev/null <<EOF
FROM $base
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io openssh-server iptables >/dev/null && rm -rf /var/lib/apt/lists/* && mkdir -p /run/sshd /root/.ssh && chmod 700 /root/.ssh
EOF
fi

mkdir -p "$state/bin" "$state/host"
chmod 700 "$state"
[ -f "$state/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C stashbase-remote-test -f "$state/id_ed25519"
[ -f "$state/host/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -C stashbase-remote-engine -f "$state/host/ssh_host_ed25519_key"
cp "$state/id_ed25519.pub" "$state/host/authorized_keys"

running=$(docker inspect -f '{{.State.Running}}' "$name" 2>/dev/null | tr -d '\n' || true)
running=${running:-missing}
if [ "$running" != true ]; then
  [ "$running" = missing ] || docker rm -f "$name" >/dev/null
  log "starting $name"
  docker run -d --name "$name" --cap-add ALL --cap-drop SYS_RESOURCE \
    --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
    -v /sys/fs/cgroup:/sys/fs/cgroup:rw --tmpfs /run --tmpfs /var/run \
    -v "$volume:/var/lib/docker" \
    -v "$state/host:/etc/stashbase-remote:ro" \
    --entrypoint sh "$image" -c '
      install -m 600 /etc/stashbase-remote/authorized_keys /root/.ssh/authorized_keys
      install -m 600 /etc/stashbase-remote/ssh_host_ed25519_key /etc/ssh/ssh_host_ed25519_key
      mkdir -p /run/sshd
      /usr/sbin/sshd -o HostKey=/etc/ssh/ssh_host_ed25519_key -o PermitRootLogin=prohibit-password -o PasswordAuthentication=no
      rm -f /var/run/docker.pid
      exec dockerd -H tcp://0.0.0.0:2375 -H unix:///var/run/docker.sock' >/dev/null
fi
addr=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$name")
[ -n "$addr" ] || { log "$name has no address"; exit 1; }
for _ in $(seq 1 100); do
  DOCKER_HOST="tcp://$addr:2375" docker version >/dev/null 2>&1 && break
  sleep 0.2
done
DOCKER_HOST="tcp://$addr:2375" docker version >/dev/null || { log "the engine in $name does not answer"; docker logs --tail 20 "$name" >&2; exit 1; }

# ssh:// as the docker CLI uses it: `ssh ... docker system dial-stdio`, with this key and host key only.
printf '%s %s\n' "$addr" "$(cut -d' ' -f1-2 "$state/host/ssh_host_ed25519_key.pub")" >"$state/known_hosts"
cat >"$state/bin/ssh" <<EOF
#!/bin/sh
exec /usr/bin/ssh -F /dev/null -i "$state/id_ed25519" -o IdentitiesOnly=yes -o UserKnownHostsFile="$state/known_hosts" -o StrictHostKeyChecking=yes -o BatchMode=yes "\$@"
EOF
chmod 755 "$state/bin/ssh"
PATH="$state/bin:$PATH" DOCKER_HOST="ssh://root@$addr" docker version >/dev/null || { log "ssh://root@$addr does not answer"; exit 1; }

# The images runs use (and those named as arguments), moved over when the engine lacks them (or has another build).
for img in stashbase-sandbox:latest "$base" "$@"; do
  id=$(docker image inspect -f '{{.Id}}' "$img" 2>/dev/null) || continue
  there=$(DOCKER_HOST="tcp://$addr:2375" docker image inspect -f '{{.Id}}' "$img" 2>/dev/null || true)
  if [ "$id" != "$there" ]; then
    log "loading $img into the remote engine"
    docker save "$img" | DOCKER_HOST="tcp://$addr:2375" docker load -q >/dev/null
  fi
done

cat >"$state/env" <<EOF
STASHBASE_REMOTE_TCP=tcp://$addr:2375
STASHBASE_REMOTE_SSH=ssh://root@$addr
STASHBASE_REMOTE_SSH_PATH=$state/bin
STASHBASE_REMOTE_ADDR=$addr
EOF
log "ready: tcp://$addr:2375 and ssh://root@$addr ($state/env)"
