#!/usr/bin/env bash
# fio (the field's own tool) on the emulated disk --disk-latency mounts, at each latency
# given (nbdkit's forms: 0ms, 250us, 500us, 1ms, ...): 4 KiB random O_DIRECT reads at queue
# depth 1, p50 and p99, on the same stack (nbdkit's delay filter over the file plugin with
# cache=none, nbdfuse, a direct-I/O loop device, ext4). Root; about 15 s per latency plus
# 1 GiB written once. Usage: scripts/check-slow-disk.sh [DELAY...] (default 0ms 250us 500us 1ms)
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "check-slow-disk: needs root (a loop device, mounts)" >&2; exit 1; }
for p in nbdkit nbdfuse fio losetup; do
  command -v $p >/dev/null || { echo "check-slow-disk: $p missing (scripts/setup.sh)" >&2; exit 1; }
done
delays=("$@"); [ ${#delays[@]} -gt 0 ] || delays=(0ms 250us 500us 1ms)
d=$(mktemp -d /var/tmp/check-slow-disk.XXXXXX)
loop=
cleanup() {
  umount "$d/mnt" 2>/dev/null || true
  [ -z "$loop" ] || losetup -d "$loop" 2>/dev/null || true
  fusermount3 -u "$d/fuse" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$d"
}
trap cleanup EXIT
mkdir -p "$d/fuse" "$d/mnt"
truncate -s 2G "$d/disk.img"
echo "check-slow-disk: $(nbdkit --version), fio $(fio --version)"
first=1
for delay in "${delays[@]}"; do
  # With a timer slack of 1 ns (PR_SET_TIMERSLACK, 29), as blobrace starts it.
  python3 -c 'import ctypes, os, sys; ctypes.CDLL(None).prctl(29, 1, 0, 0, 0); os.execvp(sys.argv[1], sys.argv[1:])' \
    nbdfuse "$d/fuse/disk" --command nbdkit -s --exit-with-parent --filter=delay file "$d/disk.img" \
    cache=none rdelay="$delay" wdelay="$delay" &
  for _ in $(seq 100); do [ -e "$d/fuse/disk" ] && break; sleep 0.1; done
  loop=$(losetup --direct-io=on -f --show "$d/fuse/disk")
  if [ $first = 1 ]; then mkfs.ext4 -q -F "$loop"; first=0; fi
  mount "$loop" "$d/mnt"
  [ -e "$d/mnt/f" ] || dd if=/dev/urandom of="$d/mnt/f" bs=1M count=1024 oflag=direct status=none
  fio --name=r --filename="$d/mnt/f" --rw=randread --bs=4k --direct=1 --ioengine=psync \
    --iodepth=1 --runtime=10 --time_based --output-format=json 2>/dev/null |
    python3 -c "import json,sys; j=json.load(sys.stdin)['jobs'][0]['read']; p=j['clat_ns']['percentile']; print('rdelay=$delay: fio 4 KiB randread QD1: n', j['total_ios'], ' p50', round(p['50.000000']/1e3), 'us  p99', round(p['99.000000']/1e3), 'us')"
  umount "$d/mnt"; losetup -d "$loop"; loop=
  fusermount3 -u "$d/fuse"; wait
done
