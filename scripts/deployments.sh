#!/usr/bin/env bash
# Where does SQLite's in-process lead hold, and where does a server's round trip or a
# network volume take it away? The same cells measured under several deployments, one
# run each, back to back, then set side by side on one page (`blobrace variants`: each
# engine's p50 and p99 per deployment, and as a ratio to nvme-host's, the reference: a
# local disk at Linux's default readahead, the database in the same host).
#
#   scripts/deployments.sh [blobrace measure flags...]
#   scripts/deployments.sh --sizes 64KiB --engines floor,sqlite-raw,lmdb,postgres-raw
#   BLOBRACE_DEPLOYMENTS="nvme-host aws-gp3-cross-az" scripts/deployments.sh --sizes 64KiB
#
# Deployments (docs/deployments.md): nvme-host dev-box aws-gp3-same-az aws-gp3-cross-az
# gcp-pd-balanced. The default order measures nvme-host, dev-box, aws-gp3-same-az and
# aws-gp3-cross-az. A deployment with a disk latency (the aws and gcp ones) puts the
# data directory on an emulated disk (<data-dir>/latency-disk): its datasets are loaded
# once there and reused by the others that have one. Needs root for the readahead and
# the emulated disk; each run refuses in one line what it cannot have.
set -euo pipefail
cd "$(dirname "$0")/.."
blobrace=${BLOBRACE_BIN:-${CARGO_TARGET_DIR:-target}/release/blobrace}
[ -x "$blobrace" ] || cargo build --release --bin blobrace
results_dir=${BLOBRACE_RESULTS_DIR:-charts}
order=${BLOBRACE_DEPLOYMENTS:-nvme-host dev-box aws-gp3-same-az aws-gp3-cross-az}

runs=()
for name in $order; do
  echo "deployments: $name ($(date -u +%T))" >&2
  "$blobrace" measure --deployment "$name" --results-dir "$results_dir" "$@"
  # Run ids sort by their start time: the newest run directory is this one's.
  runs+=("$(basename "$(ls -d "$results_dir"/[0-9]*/ | sort | tail -n 1)")")
done
"$blobrace" variants --results-dir "$results_dir" "${runs[@]}"
