#!/usr/bin/env bash
# SQLite's own published blob figures, measured again with blobrace and printed beside
# the page's, so a reader can see which still hold on this machine:
#
#   scripts/published.sh intern-v-extern   # sqlite.org/intern-v-extern-blob.html (2011)
#   scripts/published.sh fasterthanfs      # sqlite.org/fasterthanfs.html (2017)
#   scripts/published.sh all               # both
#
# intern-v-extern: 49 cases, blobs of 10 kB to 1 MB (100 MB of them a case) in
#   databases of 1 KiB to 64 KiB pages, SQLite's page cache at about 2 MB, read in a
#   random order; each cell the time to read the blobs from separate files divided by
#   the time to read them from the database (above 1: the database is faster). Here:
#   the same sizes and bytes, fs against sqlite-raw (a prepared SELECT, SQLite's default
#   2 MB page cache) and against sqlite-blobio (the incremental blob API, the same
#   file), mean fetch times, warm (blobrace's steady state, no memory cap: every byte in
#   the page cache, as on the page's workstation).
# fasterthanfs: 100,000 blobs of 8,000 to 12,000 bytes (kvtest's "--size 10k --variance
#   2k"), 4 KiB pages: reads about 35% faster from the database than from one file per
#   blob, and the database about 20% smaller than the files. Here: the same mix
#   (`uniform:8000,12000`, 1 GB), sqlite-raw (SQL) and sqlite-blobio (sqlite3_blob_read,
#   kvtest's --blob-api) against fs, warm and cold (evicted first), and the bytes each
#   takes on disk.
#
# Flags after the name go to every `blobrace measure` (--data-dir, --seed, ...); the runs
# land in BLOBRACE_RESULTS_DIR (default charts/), the tables in
# <results dir>/published-<name>.md. BLOBRACE_PUBLISHED_SCALE (default 1, the pages'
# sizes) multiplies the bytes of every case: CI runs 0.05. The data stays on disk (about
# 7.7 GB at scale 1), so a second run measures without loading.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/published.sh intern-v-extern|fasterthanfs|all [blobrace measure flags...]"
name=${1:-}
case "$name" in
  intern-v-extern | fasterthanfs) names=("$name") ;;
  all) names=(intern-v-extern fasterthanfs) ;;
  -h | --help) sed -n '2,28p' "$0"; exit 0 ;;
  *) echo "published: ${name:+unknown page '$name'; }$usage" >&2; exit 2 ;;
esac
shift
command -v python3 >/dev/null || { echo "published: python3 puts the tables side by side; install it (apt-get install python3)" >&2; exit 2; }
scale=${BLOBRACE_PUBLISHED_SCALE:-1}
python3 -c "import sys; s=float(sys.argv[1]); sys.exit(0 if 0 < s <= 10 else 1)" "$scale" 2>/dev/null \
  || { echo "published: BLOBRACE_PUBLISHED_SCALE must be a number above 0 and at most 10, not '$scale'" >&2; exit 2; }
bytes() { python3 -c "import sys; print(int(float(sys.argv[1]) * float(sys.argv[2])))" "$1" "$scale"; }
blobrace=${BLOBRACE_BIN:-${CARGO_TARGET_DIR:-target}/release/blobrace}
[ -x "$blobrace" ] || cargo build --release --bin blobrace
results_dir=${BLOBRACE_RESULTS_DIR:-charts}
mkdir -p "$results_dir"

# Run `blobrace measure` (a failed one stops the script: set -e) and keep its run's
# directory (run ids sort by their start time).
measure() {
  "$blobrace" measure --results-dir "$results_dir" --cap none --cpus none "$@"
  runs+=("$(ls -d "$results_dir"/[0-9]*/ | sort | tail -n 1)")
}

for page in "${names[@]}"; do
  echo "published: $page ($(date -u +%T), scale $scale)" >&2
  runs=()
  case "$page" in
    intern-v-extern)
      sizes=10kB,20kB,50kB,100kB,200kB,500kB,1MB
      data=$(bytes 100000000)
      for p in 4096 1024 2048 8192 16384 32768 65536; do
        # SQL and the blob API read the same database file.
        engines=sqlite-raw,sqlite-blobio
        # The files once, beside the default page size's database (the same run's disk).
        [ "$p" = 4096 ] && engines=fs,$engines
        measure --engines "$engines" --sizes "$sizes" --dataset-bytes "$data" \
          --sqlite-page-size "$p" --cache steady "$@"
      done
      ;;
    fasterthanfs)
      measure --engines fs,sqlite-raw,sqlite-blobio --size-mix uniform:8000,12000 \
        --dataset-bytes "$(bytes 1000000000)" --cache both "$@"
      ;;
  esac
  out="$results_dir/published-$page.md"
  python3 scripts/published_tables.py "$page" "$scale" "${runs[@]}" > "$out.tmp"
  mv "$out.tmp" "$out"
  cat "$out"
  echo "published: $page written to $out" >&2
done
