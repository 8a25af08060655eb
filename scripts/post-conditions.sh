#!/usr/bin/env bash
# The seed's post's conditions, as its notes ran them: the database containers capped at
# 1 GB and 2 cores, SQLite in the benchmark's own process with no cap (the machine's
# whole page cache), criterion's mean as the figure. One run of SQLite and PostgreSQL
# through SeaORM, as the post fetched, and the floor, at 64 KiB, cold and steady; the
# run's table gives each result's mean beside its p50 and p99, and each result records
# the cap it ran under (docs/seed.md#the-posts-conditions).
#
#   scripts/post-conditions.sh                      # this machine's disk
#   scripts/post-conditions.sh --disk-latency 4ms   # every store's data on a disk of a
#                                                   # spinning disk's latency (the servers'
#                                                   # volumes too)
#   scripts/post-conditions.sh --sizes 8KiB,64KiB   # any `blobrace measure` flag
#
# Not a fair race: blobrace's own runs cap every store alike. The servers must be up
# (scripts/servers.sh up); the run refuses where PostgreSQL does not answer.
set -euo pipefail
cd "$(dirname "$0")/.."
blobrace=${BLOBRACE_BIN:-${CARGO_TARGET_DIR:-target}/release/blobrace}
[ -x "$blobrace" ] || cargo build --release --bin blobrace
# The post's defaults, each only where neither its flag nor its variable is given.
given() {
  local flag=$1 var=$2 arg
  [ -n "${!var:-}" ] && return 0
  for arg in "${args[@]}"; do
    case "$arg" in "$flag" | "$flag="*) return 0 ;; esac
  done
  return 1
}
args=("$@")
defaults=()
given --uncapped-in-process BLOBRACE_UNCAPPED_IN_PROCESS || defaults+=(--uncapped-in-process)
given --cap BLOBRACE_CAP || defaults+=(--cap 1GiB)
given --cpus BLOBRACE_CPUS || defaults+=(--cpus 2)
given --engines BLOBRACE_ENGINES || defaults+=(--engines sqlite,postgres,floor)
given --sizes BLOBRACE_SIZES || defaults+=(--sizes 64KiB)
given --results-dir BLOBRACE_RESULTS_DIR || defaults+=(--results-dir charts)
exec "$blobrace" measure "${defaults[@]}" "$@"
