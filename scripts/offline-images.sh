#!/usr/bin/env bash
# Where the official postgres/mariadb images cannot be pulled (no registry, as on
# this project's CI machines), build stand-ins from Debian's packages:
#   1. a base image: debootstrap --variant=minbase bookworm | docker import
#   2. compose/offline/{postgres,mariadb}.Dockerfile on top of it
# They take the same environment variables as the official images, and every
# result records the server's own version string, so a run never claims to be
# something it is not. Usage: scripts/offline-images.sh [base|runner|dolt|seaweedfs]  (root,
# docker running; `runner` builds the runner image from binaries built on this machine
# instead, `dolt` a Dolt server and `seaweedfs` a SeaweedFS S3 store, both built from
# the Go module proxy)
set -euo pipefail
cd "$(dirname "$0")/.."

base=${BLOBRACE_BASE_IMAGE:-blobrace/debian-base:bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

# The base every stand-in builds on, made once: the stand-ins build side by side
# (scripts/servers.sh), so the first to need it debootstraps while the others wait on
# the lock, then find it made. The Go builds need it only for their last step, so they
# compile while it is made.
ensure_base() {
  exec 9>"${TMPDIR:-/tmp}/blobrace-debian-base.lock"
  flock 9
  if ! docker image inspect "$base" >/dev/null 2>&1; then
    command -v debootstrap >/dev/null || { echo "offline-images: install debootstrap first (apt-get install debootstrap)" >&2; exit 1; }
    local rootfs begun=$SECONDS
    rootfs=$(mktemp -d)
    echo "offline-images: debootstrap bookworm from $mirror (about a minute)"
    if ! debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >/dev/null; then
      rm -rf "$rootfs"
      echo "offline-images: debootstrap from $mirror failed (set DEBIAN_MIRROR to a mirror this machine reaches)" >&2
      exit 1
    fi
    # The image's apt must reach the same mirror as the host.
    echo "deb $mirror bookworm main" > "$rootfs/etc/apt/sources.list"
    if ! tar -C "$rootfs" -c . | docker import - "$base" >/dev/null; then
      rm -rf "$rootfs"
      echo "offline-images: docker import of $base failed" >&2
      exit 1
    fi
    rm -rf "$rootfs"
    echo "offline-images: built $base in $((SECONDS - begun)) s"
  fi
  flock -u 9
}
[ "${1:-}" != base ] || { ensure_base; exit 0; }

if [ "${1:-}" = runner ]; then
  # The runner from binaries built here (same Debian release as the base image).
  ensure_base
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' EXIT
  # One build for both binaries: `cargo bench` builds the blobrace binary beside the bench,
  # with the dev-dependencies' features that `cargo test --release` already compiled. A
  # separate `cargo build --bin blobrace` resolves other features and recompiles most
  # dependencies (8 minutes on a 2-core machine), then the next test build does it again.
  # The bench binary's whole path as cargo prints it: under CARGO_TARGET_DIR where it is set.
  bench=$(cargo bench --locked --no-run --bench fetch 2>&1 | sed -n 's/.*(\([^()]*release\/deps\/fetch-[0-9a-f]*\)).*/\1/p' | tail -1)
  [ -n "$bench" ] || { echo "offline-images: could not find the fetch bench binary" >&2; exit 1; }
  bin="${CARGO_TARGET_DIR:-target}/release/blobrace"
  [ -x "$bin" ] || { echo "offline-images: cargo bench built no $bin" >&2; exit 1; }
  cp "$bin" "$ctx/"
  cp "$bench" "$ctx/blobrace-bench"
  cp compose/runner/run.sh "$ctx/"
  # --network-rtt's proxy (scripts/setup.sh builds it): the runner fetches through it too.
  tp=$(command -v toxiproxy-server) || { echo "offline-images: toxiproxy-server not found: run scripts/setup.sh" >&2; exit 1; }
  cp "$tp" "$ctx/"
  # Each build of a new binary is a new image; the one it replaces would stay behind
  # untagged (ten of them, 4 GiB, on this project's machine on 2026-12-05): removed,
  # unless a container still uses it.
  previous=$(docker image inspect -f '{{.Id}}' blobrace/runner-offline:latest 2>/dev/null || true)
  docker build -q --build-arg BASE="$base" -t blobrace/runner-offline:latest -f compose/runner/offline.Dockerfile "$ctx"
  if [ -n "$previous" ] && [ "$previous" != "$(docker image inspect -f '{{.Id}}' blobrace/runner-offline:latest)" ]; then
    docker rmi "$previous" >/dev/null 2>&1 || true
  fi
  echo "offline-images: built blobrace/runner-offline:latest (use it with BLOBRACE_RUNNER_IMAGE=blobrace/runner-offline:latest)"
  exit 0
fi

if [ "${1:-}" = dolt ]; then
  # Dolt from the Go module proxy (scripts/build-dolt.sh): a Go build of a few
  # minutes, so the image is rebuilt only when what it is made of changed (a label
  # holds the hash of the script, Dockerfile and entrypoint).
  image=blobrace/dolt-offline:0.40.4
  inputs=$(cat scripts/build-dolt.sh compose/offline/dolt.Dockerfile compose/offline/dolt-entrypoint.sh | sha256sum | cut -c1-16)
  if [ "$(docker image inspect -f '{{index .Config.Labels "blobrace.inputs"}}' "$image" 2>/dev/null)" = "$inputs" ]; then
    echo "offline-images: $image is up to date"
    exit 0
  fi
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' EXIT
  bash scripts/build-dolt.sh "$ctx"
  cp compose/offline/dolt-entrypoint.sh "$ctx/"
  ensure_base
  docker build -q --build-arg BASE="$base" --label "blobrace.inputs=$inputs" -t "$image" -f compose/offline/dolt.Dockerfile "$ctx"
  echo "offline-images: built $image (use it with BLOBRACE_DOLT_IMAGE=$image)"
  exit 0
fi

if [ "${1:-}" = seaweedfs ]; then
  # SeaweedFS from the Go module proxy (scripts/build-seaweedfs.sh), rebuilt only when
  # its recipe changed (the entrypoint is compose/seaweedfs/entrypoint.sh, mounted by
  # compose, so it is not part of the image).
  image=blobrace/seaweedfs-offline:4.53
  inputs=$(cat scripts/build-seaweedfs.sh compose/offline/seaweedfs.Dockerfile | sha256sum | cut -c1-16)
  if [ "$(docker image inspect -f '{{index .Config.Labels "blobrace.inputs"}}' "$image" 2>/dev/null)" = "$inputs" ]; then
    echo "offline-images: $image is up to date"
    exit 0
  fi
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' EXIT
  bash scripts/build-seaweedfs.sh "$ctx"
  ensure_base
  docker build -q --build-arg BASE="$base" --label "blobrace.inputs=$inputs" -t "$image" -f compose/offline/seaweedfs.Dockerfile "$ctx"
  echo "offline-images: built $image (use it with BLOBRACE_SEAWEEDFS_IMAGE=$image)"
  exit 0
fi

ensure_base
docker build -q --build-arg BASE="$base" -t blobrace/postgres-offline:15 -f compose/offline/postgres.Dockerfile compose/offline
docker build -q --build-arg BASE="$base" -t blobrace/mariadb-offline:10.11 -f compose/offline/mariadb.Dockerfile compose/offline
echo "offline-images: built blobrace/postgres-offline:15 and blobrace/mariadb-offline:10.11"
echo "offline-images: use them with BLOBRACE_POSTGRES_IMAGE=blobrace/postgres-offline:15 BLOBRACE_MARIADB_IMAGE=blobrace/mariadb-offline:10.11"
