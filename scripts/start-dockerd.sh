#!/usr/bin/env bash
# Starts dockerd detached (own session, output to a log file, so it holds no
# pipe of the caller open) unless a daemon already answers; waits until it does.
set -euo pipefail
log() { printf '[dockerd] %s\n' "$*" >&2; }

if docker info >/dev/null 2>&1; then
  log "already running"
  exit 0
fi
logfile=${STASHBASE_DOCKERD_LOG:-/var/log/stashbase-dockerd.log}
dockerd_bin=$(command -v dockerd || echo /usr/sbin/dockerd)
log "starting $dockerd_bin (log: $logfile)"
setsid "$dockerd_bin" >"$logfile" 2>&1 </dev/null &
for _ in $(seq 1 120); do
  if docker info >/dev/null 2>&1; then
    log "ready: $(docker version --format '{{.Server.Version}}')"
    exit 0
  fi
  sleep 0.5
done
log "dockerd did not answer within 60 s; last lines of $logfile:"
tail -n 20 "$logfile" >&2 || true
exit 1
