#!/bin/sh
# SeaweedFS as one S3 store in one capped container, for the official image
# (chrislusf/seaweedfs, Alpine) and the offline stand-in alike: compose mounts this
# file and runs it. Master, volume server, filer and S3 gateway in one `weed server`
# process; data under /data; the S3 API on port 8333 (compose publishes it on
# 127.0.0.1 only).
#   - Credentials: the one identity of compose/.env (SEAWEEDFS_ACCESS_KEY /
#     SEAWEEDFS_SECRET_KEY). With no identity at all SeaweedFS would accept anyone.
#   - Each bucket is a collection of its own volumes: 1 GiB volumes, not preallocated,
#     up to 256 of them, and a bucket grows by one at a time
#     (WEED_MASTER_VOLUME_GROWTH_COPY_1, master.toml's volume_growth.copy_1). At its
#     default, seven at once, the 256 slots held 36 buckets and the 38th bucket's first
#     PUT failed with a bare 500 ("No writable volumes" in this log only): CI's run
#     does more. One at a time loaded 1 KiB and 4 MiB as fast (2026-11-28).
#   - GOMEMLIMIT: Go's garbage collector does not see the cgroup; unless given, 3/4 of
#     the cap in force at this start (a run that changes the cap restarts it).
#   - The filer's object index (LevelDB, 8 partitions) sized for the cap: each
#     partition's block cache and write buffer 1/128 of the cap (2 MiB at 256 MiB,
#     8 MiB at 1 GiB; at most 3 x 8 x 1/128 = 19% of the cap, a write buffer being
#     doubled while it flushes). Its defaults, 32 MiB and 16 MiB per partition (up to
#     512 MiB), outgrew a 256 MiB cap loading 786,432 objects of 1 KiB: OOM-killed at
#     50k. Through the WEED_LEVELDB2_* variables (SeaweedFS reads its filer.toml keys
#     from WEED_<SECTION>_<KEY>), which the run records with GOMEMLIMIT.
#   - Go's pprof on the container's 127.0.0.1:6060 (-debug), not published.
#   - Restarts quickly, as a cold start restarts it: the volume server stops without
#     its default 10 s pause for clients to drain (-volume.preStopSeconds=0: the only
#     client is this process's own gateway), and the lone master elects itself within
#     1 s instead of 10 (-master.electionTimeout): until it has, every S3 request and
#     `weed shell` fails with "Not current leader". With both, a cold start's restart
#     is ready in about 2 s where it took 13 s after Docker stopped it.
set -eu
: "${SEAWEEDFS_ACCESS_KEY:?set SEAWEEDFS_ACCESS_KEY in compose/.env (copy compose/.env.example)}"
: "${SEAWEEDFS_SECRET_KEY:?set SEAWEEDFS_SECRET_KEY in compose/.env (copy compose/.env.example)}"
mkdir -p /data /etc/blobrace
: "${WEED_MASTER_VOLUME_GROWTH_COPY_1:=1}"
export WEED_MASTER_VOLUME_GROWTH_COPY_1
cat > /etc/blobrace/s3.json <<JSON
{"identities":[{"name":"blobrace","credentials":[{"accessKey":"$SEAWEEDFS_ACCESS_KEY","secretKey":"$SEAWEEDFS_SECRET_KEY"}],"actions":["Admin","Read","List","Tagging","Write"]}]}
JSON
cap=$(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || echo max)
if [ "$cap" = max ] || [ "$cap" -ge 1125899906842624 ]; then
  cap=
fi
if [ -z "${GOMEMLIMIT:-}" ] && [ -n "$cap" ]; then
  GOMEMLIMIT=$((cap / 4 * 3))
  export GOMEMLIMIT
fi
if [ -n "$cap" ]; then
  per_partition_mb=$((cap / 128 / 1048576))
  [ "$per_partition_mb" -ge 1 ] || per_partition_mb=1
  : "${WEED_LEVELDB2_BLOCK_CACHE_SIZE_MB:=$per_partition_mb}"
  : "${WEED_LEVELDB2_WRITE_BUFFER_SIZE_MB:=$per_partition_mb}"
  export WEED_LEVELDB2_BLOCK_CACHE_SIZE_MB WEED_LEVELDB2_WRITE_BUFFER_SIZE_MB
fi
exec weed -logtostderr=true server -dir=/data -ip=127.0.0.1 -ip.bind=0.0.0.0 \
  -s3 -s3.port=8333 -s3.config=/etc/blobrace/s3.json \
  -master.volumeSizeLimitMB=1024 -volume.max=256 \
  -volume.preStopSeconds=0 -master.electionTimeout=1s \
  -debug -debug.port=6060 "$@"
