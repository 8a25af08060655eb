#!/usr/bin/env bash
# Make sure a Docker engine answers. On a Debian machine with none (as on this
# project's CI), install Debian's docker.io, docker-compose and debootstrap and
# start dockerd in the background. Root only; prints what it did.
set -euo pipefail
if docker info >/dev/null 2>&1; then
  echo "docker-engine: running ($(docker version --format '{{.Server.Version}}'))"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "docker-engine: no Docker engine answers and this is not root: start Docker yourself (systemctl start docker)" >&2
  exit 1
fi
if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker-compose >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io docker-compose debootstrap >/dev/null
fi
nohup dockerd >/var/log/blobrace-dockerd.log 2>&1 &
for _ in $(seq 1 60); do
  docker info >/dev/null 2>&1 && { echo "docker-engine: started dockerd ($(docker version --format '{{.Server.Version}}'))"; exit 0; }
  sleep 1
done
echo "docker-engine: dockerd did not come up; see /var/log/blobrace-dockerd.log" >&2
exit 1
