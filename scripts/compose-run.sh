#!/usr/bin/env bash
# The whole matrix, reproducibly, in one command: the servers and the runner under
# identical caps (1 GiB, 2 CPUs by default; 256 MiB for the quick profile), results + report in charts/.
#
#   scripts/compose-run.sh                          # full profile: 6 sizes x 3 GiB
#   BLOBRACE_PROFILE=quick scripts/compose-run.sh   # the same path in a few minutes
#   BLOBRACE_DROP_AFTER=true scripts/compose-run.sh # one size class on disk at a time
#   BLOBRACE_DISK_CAP=gp3 scripts/compose-run.sh    # every container on a gp3-like disk
#
# Knobs are the BLOBRACE_* variables (docs/knobs.md), from the environment or compose/.env.
# Exits non-zero if any part fails. Without a registry the runner image is built from
# binaries compiled here (scripts/offline-images.sh runner).
set -euo pipefail
cd "$(dirname "$0")/.."

export BLOBRACE_COMPOSE_PROJECT=${BLOBRACE_COMPOSE_PROJECT:-blobrace}
env_file=${BLOBRACE_COMPOSE_ENV:-compose/.env}
compose() {
  local files=(-f compose/compose.yaml)
  [ -z "${BLOBRACE_COMPOSE_OVERRIDE:-}" ] || files+=(-f "$BLOBRACE_COMPOSE_OVERRIDE")
  if docker compose version >/dev/null 2>&1; then
    docker compose -p "$BLOBRACE_COMPOSE_PROJECT" "${files[@]}" --env-file "$env_file" --profile run "$@"
  else
    docker-compose -p "$BLOBRACE_COMPOSE_PROJECT" "${files[@]}" --env-file "$env_file" --profile run "$@"
  fi
}

# The profile's caps for servers and runner alike (unless set): quick is 256 MiB, so its
# 768 MiB per size class is disk-bound like the full matrix.
source scripts/profile-env.sh
unset BLOBRACE_COMPOSE_OVERRIDE
bash scripts/servers.sh up

setting() { grep -E "^$1=" "$env_file" | tail -1 | cut -d= -f2- || true; }
export BLOBRACE_RUNNER_IMAGE=${BLOBRACE_RUNNER_IMAGE:-$(setting BLOBRACE_RUNNER_IMAGE)}
if [ -z "$BLOBRACE_RUNNER_IMAGE" ]; then
  if docker pull -q rust:1.95-bookworm >/dev/null 2>&1 && docker pull -q debian:bookworm-slim >/dev/null 2>&1; then
    export BLOBRACE_RUNNER_IMAGE=blobrace/runner:latest
    compose build runner
  else
    echo "compose-run: cannot pull rust:1.95-bookworm / debian:bookworm-slim: building the runner from binaries compiled here"
    bash scripts/offline-images.sh runner
    export BLOBRACE_RUNNER_IMAGE=blobrace/runner-offline:latest
  fi
fi

# The disk cap (BLOBRACE_DISK_CAP) on every container, the runner's included: the runner
# cannot write the servers' cgroups (the host's), and Docker sets a container's disk
# limits only when it creates it. So the containers are created again with them, as
# compose's blkio_config on the whole disk under Docker's root (the volumes' disk), and
# Docker writes them into each new cgroup at every start: a cold start's restart keeps
# them. A later run without a cap recreates the servers without (servers.sh up above).
disk_cap=${BLOBRACE_DISK_CAP:-$(setting BLOBRACE_DISK_CAP)}
if [ -n "$disk_cap" ] && [ "$disk_cap" != none ]; then
  docker_root=$(docker info -f '{{.DockerRootDir}}')
  source=$(df --output=source "$docker_root" | tail -1)
  if [ -b "$source" ]; then
    # A partition's throttle is its disk's: the kernel keeps limits on whole disks.
    disk=$(lsblk -ndo pkname "$source" 2>/dev/null || true)
    device=${disk:+/dev/$disk}; device=${device:-$source}
    override="$(dirname "$env_file")/compose.disk-cap.yaml"
    # The sizes here only pass the check of the cap against the largest blob: the runner
    # checks it against the run's own sizes before any work.
    block=$(docker run --rm --entrypoint blobrace "$BLOBRACE_RUNNER_IMAGE" env --disk-cap "$disk_cap" --sizes 1KiB --compose-blkio "$device")
    {
      echo "# Written by scripts/compose-run.sh for BLOBRACE_DISK_CAP=$disk_cap on $device (Docker's root $docker_root)."
      echo "services:"
      for service in postgres mariadb mysql dolt seaweedfs runner; do
        echo "  $service:"
        echo "$block"
      done
    } > "$override"
    export BLOBRACE_COMPOSE_OVERRIDE=$override
    echo "compose-run: disk cap $disk_cap on $device for every container: the servers are created again with it"
    bash scripts/servers.sh up
  else
    echo "compose-run: Docker's root $docker_root is on $source, not a block device: no container's disk can be capped (the run says so for each)"
  fi
fi

# The readahead (BLOBRACE_READAHEAD, Linux's 128 KiB unless set) of the disk under
# Docker's root, which holds every volume, the runner's data included: the runner's /sys is
# read-only, so it is set here on the host, and put back when this script ends; the runner
# reads it back and records it (one it cannot have as asked refuses the run there).
readahead=${BLOBRACE_READAHEAD:-$(setting BLOBRACE_READAHEAD)}
readahead_kb=
if [[ ${readahead:-128} =~ ^([0-9]+)(KiB)?$ ]]; then readahead_kb=${BASH_REMATCH[1]}
elif [[ $readahead =~ ^([0-9]+)MiB$ ]]; then readahead_kb=$(( BASH_REMATCH[1] * 1024 ))
fi  # "host", or a form the runner refuses with its own line
if [ -n "$readahead_kb" ]; then
  source=$(readlink -f "$(df --output=source "$(docker info -f '{{.DockerRootDir}}')" | tail -1)")
  disk=$(lsblk -ndo pkname "$source" 2>/dev/null || true)
  ra_file=/sys/class/block/$(basename "${disk:-$source}")/queue/read_ahead_kb
  if [ -w "$ra_file" ] && host_kb=$(cat "$ra_file") && echo "$readahead_kb" > "$ra_file" 2>/dev/null; then
    trap 'echo "$host_kb" > "$ra_file"' EXIT
    echo "compose-run: readahead $readahead_kb KiB on $(basename "${disk:-$source}") for the run (the host's $host_kb KiB put back at the end)"
  else
    echo "compose-run: cannot set the readahead of ${disk:-$source} ($ra_file): the runner says what it runs under"
  fi
fi

mkdir -p "${BLOBRACE_CHARTS_DIR:-charts}"
# Building the runner can take minutes of both CPUs; a server whose healthcheck timed
# out meanwhile reads "unhealthy" until its next check passes, and compose refuses to
# start the runner on that: wait until every server reads healthy again.
for _ in $(seq 1 120); do
  unhealthy=$(docker ps -q -f "label=com.docker.compose.project=$BLOBRACE_COMPOSE_PROJECT" -f health=unhealthy -f health=starting)
  [ -z "$unhealthy" ] && break
  sleep 1
done
# `run` starts nothing new (the servers are up), attaches only the runner, and
# returns its exit code. Arguments go to the bench as criterion's own, as after
# `cargo bench --`: `--plotting-backend plotters` draws criterion's HTML into charts/criterion/.
compose run --rm runner "$@"
echo "compose-run: report in ${BLOBRACE_CHARTS_DIR:-charts}/latest.html"
