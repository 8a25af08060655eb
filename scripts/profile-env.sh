# Sourced by servers.sh and compose-run.sh (after they set $env_file): the caps the
# containers start with for the chosen BLOBRACE_PROFILE, for every setting that neither
# the environment nor the env file gives. compose reads the exported values.
#
#   full   1 GiB cap, MariaDB buffer pool 640M
#   quick  256 MiB cap, 96M: the quick data (768 MiB per size class) is 3x the cap,
#          so the quick run is disk-bound like the full one instead of fitting in memory.
#
# These are start values only: each run sets the servers' caps and caches to its own
# (src/server_caps/; the cache sizes are `cache_bytes_for_cap` in src/db/<server>/mod.rs).
# MariaDB's start pool is that same size: 5/8 of the cap, but 160 MiB left for the rest
# of it (with a 40M pool it peaked at 150 MiB anonymous memory while loading).
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
profile_default BLOBRACE_MARIADB_BUFFER_POOL 640M 96M
