#!/usr/bin/env bash
# Where the official postgres/mariadb images cannot be pulled (no registry, as on
# this project's CI machines), build stand-ins from Debian's packages:
#   1. a base image: debootstrap --variant=minbase bookworm | docker import
#   2. compose/offline/{postgres,mariadb}.Dockerfile on top of it
# They take the same environment variables as the official images, and every
# result records the server's own version string, so a run never claims to be
# something it is not. Usage: scripts/offline-images.sh  (root, docker running)
set -euo pipefail
cd "$(dirname "$0")/.."

base=${BLOBRACE_BASE_IMAGE:-blobrace/debian-base:bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

if ! docker image inspect "$base" >/dev/null 2>&1; then
  command -v debootstrap >/dev/null || { echo "offline-images: install debootstrap first (apt-get install debootstrap)" >&2; exit 1; }
  rootfs=$(mktemp -d)
  trap 'rm -rf "$rootfs"' EXIT
  echo "offline-images: debootstrap bookworm from $mirror (about a minute)"
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >/dev/null
  # The image's apt must reach the same mirror as the host.
  echo "deb $mirror bookworm main" > "$rootfs/etc/apt/sources.list"
  tar -C "$rootfs" -c . | docker import - "$base" >/dev/null
  echo "offline-images: built $base"
fi

docker build -q --build-arg BASE="$base" -t blobrace/postgres-offline:15 -f compose/offline/postgres.Dockerfile compose/offline
docker build -q --build-arg BASE="$base" -t blobrace/mariadb-offline:10.11 -f compose/offline/mariadb.Dockerfile compose/offline
echo "offline-images: built blobrace/postgres-offline:15 and blobrace/mariadb-offline:10.11"
echo "offline-images: use them with BLOBRACE_POSTGRES_IMAGE=blobrace/postgres-offline:15 BLOBRACE_MARIADB_IMAGE=blobrace/mariadb-offline:10.11"
