# Stand-in for the official `dolthub/dolt-sql-server` image where no registry is
# reachable: a Dolt binary built from the Go module proxy (scripts/build-dolt.sh,
# into this build context) on a debootstrap base. Same environment variables as the
# official image (DOLT_ROOT_PASSWORD, DOLT_ROOT_HOST), data under /var/lib/dolt, port
# 3306. Every result records the server's own `dolt_version()`.
ARG BASE=blobrace/debian-base:bookworm
FROM ${BASE}
COPY dolt /usr/local/bin/dolt
COPY dolt-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENTRYPOINT ["docker-entrypoint.sh"]
EXPOSE 3306
