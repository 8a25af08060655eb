#!/usr/bin/env bash
# How should I store my blobs? Measure each dataset layout in its own run, back to
# back, then put them side by side with `blobrace variants`:
#
#   scripts/variants.sh [blobrace measure flags...]
#   scripts/variants.sh --profile quick --sizes 64KiB
#
# Layouts (one run each; a layout is a dataset of its own):
#   default            the floor, SQLite (sqlite-raw, sqlite-blobio), RocksDB, PostgreSQL
#                      and MariaDB (raw engines) as loaded today: integer ids, 4 KiB
#                      pages, every RocksDB value in blob files
#   --key uuidv4|uuidv7|ulid   the same databases keyed by 16-byte keys
#   --sqlite-page-size 16384|65536, --sqlite-mmap-size 4GiB   SQLite only, with the floor
#   --pg-storage external|lo   PostgreSQL only (TOAST without compression; large
#                              objects), with the floor
#   --rocksdb-min-blob-size off|64KiB   RocksDB only (every value in its SST files; blob
#                              files from 64 KiB up), with the floor
# Workloads (by name in BLOBRACE_VARIANTS_LAYOUTS; not in the default order):
#   zipfian            the default layout read by YCSB's scrambled zipfian (--access)
#   churn30            the default layout after 30% of its rows were replaced (--churn)
#   churn30-full       the same, compacted after the churn (--maintenance full)
#   writer0            the dataset a writer changes, read with no writer (--write-rate 0)
#   writer50, writer200   read while one writer replaces 50 (200) rows a second
#                      (--write-rate; add --clients 4 for the readers of issue 35)
#   e.g. BLOBRACE_VARIANTS_LAYOUTS="default zipfian churn30 churn30-full" scripts/variants.sh
# The floor runs in every run (it reads by offset whatever the layout: the same file
# each time), so each result also has its own run's floor beside it: the disk drifts
# between runs. The flags given are passed to every run (sizes, profile, cap...);
# without --drop-after each layout's datasets stay on disk (about 3 GiB per size and
# store at full scale). BLOBRACE_VARIANTS_LAYOUTS picks layouts by name, e.g.
# "default uuidv7 page16384".
set -euo pipefail
cd "$(dirname "$0")/.."
blobrace=${BLOBRACE_BIN:-${CARGO_TARGET_DIR:-target}/release/blobrace}
[ -x "$blobrace" ] || cargo build --release --bin blobrace
results_dir=${BLOBRACE_RESULTS_DIR:-charts}

servers=postgres-raw,mariadb-raw
declare -A layouts=(
  [default]="--engines floor,sqlite-raw,sqlite-blobio,rocksdb,$servers"
  [uuidv4]="--engines floor,sqlite-raw,sqlite-blobio,$servers --key uuidv4"
  [uuidv7]="--engines floor,sqlite-raw,sqlite-blobio,$servers --key uuidv7"
  [ulid]="--engines floor,sqlite-raw,sqlite-blobio,$servers --key ulid"
  [page16384]="--engines floor,sqlite-raw,sqlite-blobio --sqlite-page-size 16384"
  [page65536]="--engines floor,sqlite-raw,sqlite-blobio --sqlite-page-size 65536"
  [mmap]="--engines floor,sqlite-raw,sqlite-blobio --sqlite-mmap-size 4GiB"
  [pg-external]="--engines floor,postgres-raw --pg-storage external"
  [pg-lo]="--engines floor,postgres-raw --pg-storage lo"
  [rocksdb-noblob]="--engines floor,rocksdb --rocksdb-min-blob-size off"
  [rocksdb-min64k]="--engines floor,rocksdb --rocksdb-min-blob-size 64KiB"
  [zipfian]="--engines floor,sqlite-raw,sqlite-blobio,$servers --access zipfian"
  [churn30]="--engines floor,sqlite-raw,sqlite-blobio,$servers --churn 30"
  [churn30-full]="--engines floor,sqlite-raw,sqlite-blobio,$servers --churn 30 --maintenance full"
  [writer0]="--engines floor,sqlite-raw,sqlite-blobio,$servers --write-rate 0"
  [writer50]="--engines floor,sqlite-raw,sqlite-blobio,$servers --write-rate 50"
  [writer200]="--engines floor,sqlite-raw,sqlite-blobio,$servers --write-rate 200"
)
order=${BLOBRACE_VARIANTS_LAYOUTS:-default uuidv4 uuidv7 ulid page16384 page65536 mmap pg-external pg-lo rocksdb-noblob rocksdb-min64k}

runs=()
for name in $order; do
  [ -n "${layouts[$name]:-}" ] || { echo "variants: unknown layout '$name': choose from ${!layouts[*]}" >&2; exit 2; }
  echo "variants: layout $name ($(date -u +%T))" >&2
  # shellcheck disable=SC2086 # the layout's flags are words
  "$blobrace" measure ${layouts[$name]} --results-dir "$results_dir" "$@"
  # Run ids sort by their start time: the newest run directory is this one's.
  runs+=("$(basename "$(ls -d "$results_dir"/[0-9]*/ | sort | tail -n 1)")")
done
"$blobrace" variants --results-dir "$results_dir" "${runs[@]}"
