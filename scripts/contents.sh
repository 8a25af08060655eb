#!/usr/bin/env bash
# Does the answer change when the blobs are documents? The same cells measured with
# each content (`--content`), one run each, back to back, then set side by side on one
# page (`blobrace variants`: each engine's p50 and p99 per content and as a ratio to its
# random figure, its hit ratio, disk bytes per fetch, and the bytes it kept on disk per
# blob byte).
#
#   scripts/contents.sh [blobrace measure flags...]
#   scripts/contents.sh --sizes 4KiB,64KiB --engines floor,sqlite-raw,postgres-raw,rocksdb
#   BLOBRACE_CONTENTS="random ratio:2 ratio:4 ratio:8" scripts/contents.sh --sizes 64KiB \
#     --engines floor,postgres-raw,rocksdb --rocksdb-compression lz4
#   scripts/contents.sh --deployment aws-gp3-same-az --sizes 64KiB
#
# Contents (docs/content.md): random (the reference: what every other is divided by)
# text json html ratio:R dir:PATH. Default order: random text json. Each content is a
# dataset of its own (about 3 GiB per size and store at full scale): pass --drop-after
# to keep one content's datasets on disk at a time. The compression each store applies
# is its own default unless a flag says otherwise (--pg-compression lz4,
# --rocksdb-compression lz4|zstd, --mariadb-compression zlib), passed to every run.
set -euo pipefail
cd "$(dirname "$0")/.."
blobrace=${BLOBRACE_BIN:-${CARGO_TARGET_DIR:-target}/release/blobrace}
[ -x "$blobrace" ] || cargo build --release --bin blobrace
results_dir=${BLOBRACE_RESULTS_DIR:-charts}
order=${BLOBRACE_CONTENTS:-random text json}
case " $order " in
  *" random "*) ;;
  *) echo "contents: BLOBRACE_CONTENTS has no random: nothing to divide the others by; add random" >&2; exit 2 ;;
esac

runs=()
for content in $order; do
  echo "contents: $content ($(date -u +%T))" >&2
  "$blobrace" measure --content "$content" --results-dir "$results_dir" "$@"
  # Run ids sort by their start time: the newest run directory is this one's.
  runs+=("$(basename "$(ls -d "$results_dir"/[0-9]*/ | sort | tail -n 1)")")
done
"$blobrace" variants --results-dir "$results_dir" "${runs[@]}"
