# Sourced by servers.sh and compose-run.sh (after they set $env_file): the caps and the
# servers' memory settings of the chosen BLOBRACE_PROFILE, for every setting that neither
# the environment nor the env file gives. compose reads the exported values.
#
#   full   1 GiB cap, PostgreSQL shared_buffers 128MB, MariaDB buffer pool 640M
#   quick  256 MiB cap, 32MB, 96M: the quick data (768 MiB per size class) is 3x the cap,
#          so the quick run is disk-bound like the full one instead of fitting in memory.
#
# PostgreSQL's shared_buffers is 1/8 of the cap; the rest is page cache. MariaDB's buffer
# pool is its cache (InnoDB reads with O_DIRECT): 640M of a 1 GiB cap. Its other memory
# does not shrink with the cap: with a 40M pool it peaked at 150 MiB anonymous memory
# while loading, so it was OOM-killed under 96 MiB and 128 MiB caps. 256 MiB with a 96M
# pool leaves it ~50 MiB.
profile_default() { # NAME full-value quick-value
  local name=$1 from_file
  [ -n "${!name:-}" ] && return 0
  from_file=$(grep -E "^$name=" "$env_file" 2>/dev/null | tail -1 | cut -d= -f2- || true)
  [ -n "$from_file" ] && return 0
  case "${BLOBRACE_PROFILE:-full}" in
    quick) export "$name=$3" ;;
    *) export "$name=$2" ;;
  esac
}
profile_default BLOBRACE_CAP 1g 256m
profile_default BLOBRACE_CPUS 2 2
profile_default BLOBRACE_PG_SHARED_BUFFERS 128MB 32MB
profile_default BLOBRACE_MARIADB_BUFFER_POOL 640M 96M
