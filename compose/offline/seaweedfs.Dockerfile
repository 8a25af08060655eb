# Stand-in for the official `chrislusf/seaweedfs` image where no registry is
# reachable: `weed` built from the Go module proxy (scripts/build-seaweedfs.sh, into
# this build context) on a debootstrap base, at /usr/bin/weed as in the official
# image, with wget for the healthcheck. compose/seaweedfs/entrypoint.sh starts it in
# both. Every result records the server's own `weed version`.
ARG BASE=blobrace/debian-base:bookworm
FROM ${BASE}
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends wget >/dev/null && rm -rf /var/lib/apt/lists/*
COPY weed /usr/bin/weed
EXPOSE 8333
