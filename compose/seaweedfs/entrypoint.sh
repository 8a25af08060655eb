#!/bin/sh
# SeaweedFS as one S3 store in one capped container, for the official image
# (chrislusf/seaweedfs, Alpine) and the offline stand-in alike: compose mounts this
# file and runs it. Master, volume server, filer and S3 gateway in one `weed server`
# process; data under /data; the S3 API on port 8333 (compose publishes it on
# 127.0.0.1 only).
#   - Credentials: the one identity of compose/.env (SEAWEEDFS_ACCESS_KEY /
#     SEAWEEDFS_SECRET_KEY). With no identity at all SeaweedFS would accept anyone.
#   - Each bucket is a collection of its own volumes: 1 GiB volumes, not preallocated,
#     up to 256 of them (a bucket takes several at once as it grows; too few and a
#     later bucket's PUTs fail with "No writable volumes").
#   - GOMEMLIMIT: Go's garbage collector does not see the cgroup; unless given, 3/4 of
#     the cap in force at this start (a run that changes the cap restarts it).
#   - Go's pprof on the container's 127.0.0.1:6060 (-debug), not published.
set -eu
: "${SEAWEEDFS_ACCESS_KEY:?set SEAWEEDFS_ACCESS_KEY in compose/.env (copy compose/.env.example)}"
: "${SEAWEEDFS_SECRET_KEY:?set SEAWEEDFS_SECRET_KEY in compose/.env (copy compose/.env.example)}"
mkdir -p /data /etc/blobrace
cat > /etc/blobrace/s3.json <<JSON
{"identities":[{"name":"blobrace","credentials":[{"accessKey":"$SEAWEEDFS_ACCESS_KEY","secretKey":"$SEAWEEDFS_SECRET_KEY"}],"actions":["Admin","Read","List","Tagging","Write"]}]}
JSON
if [ -z "${GOMEMLIMIT:-}" ]; then
  cap=$(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || echo max)
  if [ "$cap" != max ] && [ "$cap" -lt 1125899906842624 ]; then
    GOMEMLIMIT=$((cap / 4 * 3))
    export GOMEMLIMIT
  fi
fi
exec weed -logtostderr=true server -dir=/data -ip=127.0.0.1 -ip.bind=0.0.0.0 \
  -s3 -s3.port=8333 -s3.config=/etc/blobrace/s3.json \
  -master.volumeSizeLimitMB=1024 -volume.max=256 \
  -debug -debug.port=6060 "$@"
