#!/bin/sh
# The subset of the official image's healthcheck.sh that compose uses:
# --connect (the server answers) and --innodb_initialized (InnoDB is up).
set -eu
pw="${MARIADB_ROOT_PASSWORD:-}"
for flag in "$@"; do
  case "$flag" in
    --connect) mariadb-admin -uroot -p"$pw" -h127.0.0.1 ping >/dev/null 2>&1 || exit 1 ;;
    --innodb_initialized)
      mariadb -uroot -p"$pw" -h127.0.0.1 -N -e "SELECT 1 FROM information_schema.ENGINES WHERE ENGINE='InnoDB' AND SUPPORT IN ('YES','DEFAULT')" 2>/dev/null | grep -q 1 || exit 1 ;;
    *) ;;
  esac
done
