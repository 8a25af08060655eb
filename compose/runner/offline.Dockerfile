# Stand-in for compose/runner/Dockerfile where no image can be pulled: the same two
# binaries, built on the host by scripts/offline-images.sh, on the debootstrap base.
# Build context: a directory holding blobrace, blobrace-bench, toxiproxy-server and run.sh.
ARG BASE=blobrace/debian-base:bookworm
FROM ${BASE}
# CA certificates: the S3 client loads them when it is built, even for http://
# (compose/runner/Dockerfile says why). RocksDB: the system's library, loaded at run time.
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates librocksdb7.8 \
 && rm -rf /var/lib/apt/lists/*
COPY blobrace blobrace-bench toxiproxy-server /usr/local/bin/
COPY run.sh /usr/local/bin/blobrace-run
ENTRYPOINT ["blobrace-run"]
