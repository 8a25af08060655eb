#!/bin/bash
# The stand-in's start: a committer identity (Dolt refuses to commit without one),
# the data directory, GOMEMLIMIT from the container's cap, then `dolt sql-server` with
# every database under /var/lib/dolt (CREATE DATABASE makes one there), and Go's pprof
# on the container's 127.0.0.1:6060 (not published: blobrace reads the server's CPU
# profile through `docker exec` for --profile-fetches).
set -euo pipefail
: "${DOLT_ROOT_PASSWORD:?set DOLT_ROOT_PASSWORD}"
export HOME=/root
dolt config --global --get user.name >/dev/null 2>&1 || {
  dolt config --global --add user.name blobrace >/dev/null
  dolt config --global --add user.email blobrace@localhost >/dev/null
}
# Go's garbage collector does not see the cgroup: without a limit its heap grows to
# twice the live data before it collects, and the kernel kills it at the cap first.
# Unless GOMEMLIMIT is given, 3/4 of the cap in force at this start (a run that lowers
# the cap restarts the container, so it follows).
if [ -z "${GOMEMLIMIT:-}" ]; then
  cap=$(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || echo max)
  if [ "$cap" != max ] && [ "$cap" -lt $((1 << 50)) ]; then
    export GOMEMLIMIT=$((cap / 4 * 3))
  fi
fi
mkdir -p /var/lib/dolt
cd /var/lib/dolt
exec dolt --pprof-server sql-server --host 0.0.0.0 --port 3306 \
  --user root --password "$DOLT_ROOT_PASSWORD" \
  --multi-db-dir /var/lib/dolt --max-connections 200 "$@"
