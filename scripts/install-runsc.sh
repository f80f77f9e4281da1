#!/usr/bin/env bash
# Installs gVisor's runsc (Debian's package) and registers it with the Docker
# engine as the runtime "runsc", for the sealed network mode's tests (docs/docker.md).
# runsc here runs with --network=none and --oci-seccomp (the container's seccomp
# profile applies inside gVisor too; without it gVisor ignores it): a sealed container needs no gVisor
# network, and this build refuses to start with one when it cannot read
# /proc/1/ns/net (as in this VM). Idempotent: registers only when missing, and
# reloads dockerd (SIGHUP) only then.
set -euo pipefail
log() { printf '[runsc] %s\n' "$*" >&2; }

if [ "$(id -u)" != 0 ]; then
  log "must run as root (it installs a Debian package and changes /etc/docker/daemon.json)"
  exit 1
fi
if ! command -v runsc >/dev/null 2>&1; then
  log "installing: runsc"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends runsc >/dev/null
fi
runsc_bin=$(command -v runsc)
# Registered with both arguments: --oci-seccomp, or gVisor ignores the container's seccomp profile (stashbase refuses such a runsc).
if docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc".*--oci-seccomp'; then
  log "registered: $runsc_bin"
  exit 0
fi
conf=/etc/docker/daemon.json
mkdir -p /etc/docker
# The engine's settings as they are, with runsc's entry added (node is here: stashbase needs it).
node -e '
const fs = require("fs");
const [file, bin] = process.argv.slice(1);
let conf = {};
try { conf = JSON.parse(fs.readFileSync(file, "utf8")); } catch (e) { if (e.code !== "ENOENT") throw e; }
conf.runtimes = { ...(conf.runtimes || {}), runsc: { path: bin, runtimeArgs: ["--network=none", "--oci-seccomp"] } };
fs.writeFileSync(file, JSON.stringify(conf, null, 2) + "\n");
' "$conf" "$runsc_bin"
pid=$(pidof dockerd || true)
if [ -z "$pid" ]; then
  log "dockerd is not running: start it (scripts/start-dockerd.sh) and it reads $conf"
  exit 0
fi
kill -HUP $pid
for _ in $(seq 1 40); do
  if docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc".*--oci-seccomp'; then
    log "registered: $runsc_bin"
    exit 0
  fi
  sleep 0.25
done
log "dockerd did not list runsc after a reload; see $conf"
exit 1
