#!/usr/bin/env bash
# The compose servers (PostgreSQL, MariaDB, Dolt, SeaweedFS; MySQL where its image can
# be had), up or down, on whatever this machine has:
#
#   scripts/servers.sh up      # a Docker engine if none runs, the images (pulled; where
#                              # nothing can be pulled, built from Debian's packages and,
#                              # for Dolt, the Go module proxy), an env file if missing,
#                              # then waits until all are healthy
#   scripts/servers.sh down    # stop and remove the containers (data volumes kept)
#   scripts/servers.sh purge   # ... and their data volumes (found by the project's labels,
#                              # so it works without the env file)
#
# BLOBRACE_COMPOSE_PROJECT  compose project name (default blobrace)
# BLOBRACE_COMPOSE_ENV      env file (default compose/.env); when missing it is made from
#                           compose/.env.example with random passwords, taking
#                           BLOBRACE_{POSTGRES,MARIADB,DOLT}_PORT from the environment
# BLOBRACE_COMPOSE_OVERRIDE a second compose file over compose/compose.yaml: the disk cap
#                           as each container's blkio_config, which scripts/compose-run.sh
#                           writes for a capped run (unset: containers with one are
#                           recreated without it)
set -euo pipefail
cd "$(dirname "$0")/.."

action=${1:-up}
project=${BLOBRACE_COMPOSE_PROJECT:-blobrace}
env_file=${BLOBRACE_COMPOSE_ENV:-compose/.env}
files=(-f compose/compose.yaml)
[ -z "${BLOBRACE_COMPOSE_OVERRIDE:-}" ] || files+=(-f "$BLOBRACE_COMPOSE_OVERRIDE")

compose() {
  if docker compose version >/dev/null 2>&1; then
    docker compose -p "$project" "${files[@]}" --env-file "$env_file" "$@"
  else
    docker-compose -p "$project" "${files[@]}" --env-file "$env_file" "$@"
  fi
}

# The project's containers and data volumes, found by compose's labels: this needs no
# env file, so a project whose env file is gone (a killed CI run) can still be purged.
project_ids() {
  docker "$1" ls -q ${2:+"$2"} -f "label=com.docker.compose.project=$project"
}
purge() {
  project_ids container -a | xargs -r docker rm -f >/dev/null
  project_ids volume | xargs -r docker volume rm >/dev/null
  project_ids network | xargs -r docker network rm >/dev/null
  echo "servers: purged project $project (containers and data volumes)"
}

case "$action" in
  up) ;;
  down) compose --profile mysql down; exit ;;
  purge) bash scripts/docker-engine.sh; purge; exit ;;
  *) echo "usage: scripts/servers.sh up|down|purge" >&2; exit 2 ;;
esac

bash scripts/docker-engine.sh

# The servers' data volumes were initialised with the passwords of the env file that
# first started them; a new env file's random passwords cannot open them.
if [ ! -f "$env_file" ] && [ -n "$(project_ids volume)" ]; then
  echo "servers: project $project has data volumes ($(project_ids volume | tr '\n' ' '))" >&2
  echo "  but no env file at $env_file: their passwords are in the env file that created them." >&2
  echo "  Put that file back, or drop the volumes and their loaded data with" >&2
  echo "  BLOBRACE_COMPOSE_PROJECT=$project scripts/servers.sh purge" >&2
  exit 2
fi

if [ ! -f "$env_file" ]; then
  pw() { head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 24; }
  sed -e "s/^POSTGRES_PASSWORD=.*/POSTGRES_PASSWORD=$(pw)/" \
      -e "s/^MARIADB_ROOT_PASSWORD=.*/MARIADB_ROOT_PASSWORD=$(pw)/" \
      -e "s/^MARIADB_PASSWORD=.*/MARIADB_PASSWORD=$(pw)/" \
      -e "s/^DOLT_ROOT_PASSWORD=.*/DOLT_ROOT_PASSWORD=$(pw)/" \
      -e "s/^MYSQL_ROOT_PASSWORD=.*/MYSQL_ROOT_PASSWORD=$(pw)/" \
      -e "s/^SEAWEEDFS_SECRET_KEY=.*/SEAWEEDFS_SECRET_KEY=$(pw)/" \
      -e "s/^BLOBRACE_POSTGRES_PORT=.*/BLOBRACE_POSTGRES_PORT=${BLOBRACE_POSTGRES_PORT:-15432}/" \
      -e "s/^BLOBRACE_MARIADB_PORT=.*/BLOBRACE_MARIADB_PORT=${BLOBRACE_MARIADB_PORT:-13306}/" \
      -e "s/^BLOBRACE_DOLT_PORT=.*/BLOBRACE_DOLT_PORT=${BLOBRACE_DOLT_PORT:-13307}/" \
      -e "s/^BLOBRACE_MYSQL_PORT=.*/BLOBRACE_MYSQL_PORT=${BLOBRACE_MYSQL_PORT:-13308}/" \
      -e "s/^BLOBRACE_SEAWEEDFS_PORT=.*/BLOBRACE_SEAWEEDFS_PORT=${BLOBRACE_SEAWEEDFS_PORT:-18333}/" \
      compose/.env.example > "$env_file"
  echo "servers: wrote $env_file (random passwords)"
fi
# An env file from before Dolt and MySQL joined: give it their passwords and ports
# (their data volumes are new, so new passwords open them).
add_server() { # PASSWORD_KEY PORT_KEY DEFAULT_PORT
  grep -q "^$1=" "$env_file" && return 0
  local port_var=$2
  {
    echo "# Added by scripts/servers.sh."
    echo "$1=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 24)"
    echo "$2=${!port_var:-$3}"
  } >> "$env_file"
  echo "servers: added $1 and $2 to $env_file"
}
add_server DOLT_ROOT_PASSWORD BLOBRACE_DOLT_PORT 13307
add_server MYSQL_ROOT_PASSWORD BLOBRACE_MYSQL_PORT 13308
add_server SEAWEEDFS_SECRET_KEY BLOBRACE_SEAWEEDFS_PORT 18333
grep -q "^SEAWEEDFS_ACCESS_KEY=" "$env_file" || echo "SEAWEEDFS_ACCESS_KEY=blobrace" >> "$env_file"

# Caps and server memory settings of BLOBRACE_PROFILE, where nothing else sets them.
source scripts/profile-env.sh
echo "servers: caps ${BLOBRACE_CAP:-from $env_file} / ${BLOBRACE_CPUS:-from $env_file} CPUs (profile ${BLOBRACE_PROFILE:-full})"

setting() { grep -E "^$1=" "$env_file" | tail -1 | cut -d= -f2- || true; }
pg_image=$(setting BLOBRACE_POSTGRES_IMAGE); pg_image=${pg_image:-postgres:17}
maria_image=$(setting BLOBRACE_MARIADB_IMAGE); maria_image=${maria_image:-mariadb:11.4}

dolt_image=$(setting BLOBRACE_DOLT_IMAGE); dolt_image=${dolt_image:-dolthub/dolt-sql-server:1.32.4}

seaweedfs_image=$(setting BLOBRACE_SEAWEEDFS_IMAGE); seaweedfs_image=${seaweedfs_image:-chrislusf/seaweedfs:4.53}

have() { docker image inspect "$1" >/dev/null 2>&1; }
for image in "$pg_image" "$maria_image" "$dolt_image" "$seaweedfs_image"; do
  have "$image" || docker pull -q "$image" >/dev/null 2>&1 || true
done

# Where an image cannot be had, its stand-in is built: PostgreSQL and MariaDB from
# Debian's packages, Dolt and SeaweedFS from the Go module proxy. The offline Dolt and
# SeaweedFS images are rebuilt only when their recipes changed, so this is cheap once
# done. From nothing they build side by side (the packages and modules download while
# a Go build compiles; the two Go builds are the wait, CPU-bound): 4 min 59 s on this
# project's 2-core machine, Docker already installed (2026-12-05; docs/running.md says
# where the time goes).
stand_ins=()
if ! have "$pg_image" || ! have "$maria_image"; then
  echo "servers: cannot pull $pg_image / $maria_image: building stand-ins from Debian's packages"
  stand_ins+=(postgres-mariadb)
fi
if [ "$dolt_image" = blobrace/dolt-offline:0.40.4 ] || ! have "$dolt_image"; then
  [ "$dolt_image" = blobrace/dolt-offline:0.40.4 ] || echo "servers: cannot pull $dolt_image: building Dolt from the Go module proxy"
  stand_ins+=(dolt)
fi
if [ "$seaweedfs_image" = blobrace/seaweedfs-offline:4.53 ] || ! have "$seaweedfs_image"; then
  [ "$seaweedfs_image" = blobrace/seaweedfs-offline:4.53 ] || echo "servers: cannot pull $seaweedfs_image: building SeaweedFS from the Go module proxy"
  stand_ins+=(seaweedfs)
fi
if [ ${#stand_ins[@]} -gt 0 ]; then
  # All at once: the Go builds compile while the Debian base they end on is made
  # (offline-images.sh makes it once, under a lock).
  logs=$(mktemp -d)
  declare -A pids
  for stand_in in "${stand_ins[@]}"; do
    arg=$stand_in; [ "$arg" != postgres-mariadb ] || arg=
    # Each build's own time, said with its log: where a fresh machine's wait goes.
    ( begun=$SECONDS; bash scripts/offline-images.sh $arg && echo "took $((SECONDS - begun)) s" ) > "$logs/$stand_in.log" 2>&1 &
    pids[$stand_in]=$!
  done
  [ ${#stand_ins[@]} -eq 1 ] || echo "servers: building ${stand_ins[*]} side by side (5 to 13 min from nothing on 2 cores)"
  failed=()
  for stand_in in "${stand_ins[@]}"; do
    if wait "${pids[$stand_in]}"; then
      sed "s/^/  /" "$logs/$stand_in.log"
    else
      echo "servers: building the $stand_in stand-in failed:" >&2
      sed "s/^/  /" "$logs/$stand_in.log" >&2
      failed+=("$stand_in")
    fi
  done
  rm -rf "$logs"
  [ ${#failed[@]} -eq 0 ] || exit 1
fi
added() { # KEY IMAGE WHAT
  [ "$(setting "$1")" = "$2" ] && return 0
  {
    echo "# Added by scripts/servers.sh: no registry reachable, $3."
    echo "$1=$2"
  } >> "$env_file"
}
for stand_in in "${stand_ins[@]}"; do
  case $stand_in in
    postgres-mariadb)
      added BLOBRACE_POSTGRES_IMAGE blobrace/postgres-offline:15 "offline stand-ins"
      added BLOBRACE_MARIADB_IMAGE blobrace/mariadb-offline:10.11 "offline stand-ins" ;;
    dolt) added BLOBRACE_DOLT_IMAGE blobrace/dolt-offline:0.40.4 "Dolt built from the Go module proxy" ;;
    seaweedfs) added BLOBRACE_SEAWEEDFS_IMAGE blobrace/seaweedfs-offline:4.53 "SeaweedFS built from the Go module proxy" ;;
  esac
done

# MySQL only from its official image (Debian has no package to build one from).
mysql_image=$(setting BLOBRACE_MYSQL_IMAGE); mysql_image=${mysql_image:-mysql:8.4}
have "$mysql_image" || docker pull -q "$mysql_image" >/dev/null 2>&1 || true
services=(postgres mariadb dolt seaweedfs)
if have "$mysql_image"; then
  services+=(mysql)
  compose --profile mysql up -d
else
  echo "servers: cannot pull $mysql_image: the mysql engines are skipped (Debian has no MySQL package to build a stand-in from; \`docker pull $mysql_image\` where a registry is reachable)"
  compose up -d
fi
# A run sets the containers' caps and the servers' caches to its own and puts them
# back when it ends; one that was killed outright left them changed, and `up` does not
# recreate a container for that. Set the compose caps again, and the caches they go
# with (below).
cap=${BLOBRACE_CAP:-$(setting BLOBRACE_CAP)}; cap=${cap:-1g}
cpus=${BLOBRACE_CPUS:-$(setting BLOBRACE_CPUS)}; cpus=${cpus:-2}
limits() { docker inspect -f '{{.HostConfig.Memory}} {{.HostConfig.NanoCpus}}' "$1"; }
restart=()
for service in "${services[@]}"; do
  id=$(compose --profile mysql ps -q "$service")
  was=$(limits "$id")
  docker update -m "$cap" --memory-swap "$cap" --cpus "$cpus" "$id" >/dev/null
  # What a server derives from its cap at start (Dolt's GOMEMLIMIT, MariaDB's pool
  # from its command line) follows only a restart.
  [ "$was" = "$(limits "$id")" ] || restart+=("$service")
done
wait_healthy() {
  local service id status
  for service in "$@"; do
    id=$(compose --profile mysql ps -q "$service")
    for _ in $(seq 1 120); do
      status=$(docker inspect --format '{{.State.Health.Status}}' "$id")
      [ "$status" = healthy ] && break
      sleep 1
    done
    if [ "$status" != healthy ]; then
      echo "servers: $service is $status after 120s; its log:" >&2
      docker logs --tail 30 "$id" >&2
      # A health check refused its password: the volume holds the passwords of the env
      # file that created it (found 2026-12-06 with an env file from another clone:
      # two minutes of "Access denied" and no word of why).
      # Read whole before grep: `grep -q` stops early, and under pipefail the log's
      # SIGPIPE made the test false.
      if grep -qE "Access denied for user|password authentication failed" <<<"$(docker logs --tail 200 "$id" 2>&1)"; then
        echo "servers: $service refuses the password in $env_file: its data volume was created with another env file's." >&2
        echo "  Put that env file back, or drop the volumes and their loaded data with" >&2
        echo "  BLOBRACE_COMPOSE_PROJECT=$project scripts/servers.sh purge" >&2
      fi
      exit 1
    fi
  done
}
wait_healthy "${services[@]}"
# The caches: PostgreSQL's shared_buffers persists from a run's ALTER SYSTEM (reset
# to the server's default, the 1 GiB cap's size); MariaDB's and MySQL's pool set by a
# run's SET GLOBAL lasts until a restart, which gives back the command line's.
in_service() { local service=$1; shift; docker exec "$(compose --profile mysql ps -q "$service")" "$@"; }
pending=$(in_service postgres psql -U blobrace -d blobrace -tAc \
  "ALTER SYSTEM RESET shared_buffers" -c "SELECT pg_reload_conf()" \
  -c "SELECT pending_restart FROM pg_settings WHERE name = 'shared_buffers'" 2>/dev/null | tail -1 || true)
[ "$pending" = t ] && restart+=(postgres)
pool_of() { # SERVICE CLIENT PASSWORD_VARIABLE
  in_service "$1" sh -c "$2 -uroot -p\"\$$3\" -N -e 'SELECT @@innodb_buffer_pool_size'" 2>/dev/null || echo unknown
}
want_pool=${BLOBRACE_MARIADB_BUFFER_POOL:-$(setting BLOBRACE_MARIADB_BUFFER_POOL)}; want_pool=${want_pool:-640M}
want_pool_bytes=$(numfmt --from=iec "$want_pool")
[ "$(pool_of mariadb mariadb MARIADB_ROOT_PASSWORD)" = "$want_pool_bytes" ] || restart+=(mariadb)
if [[ " ${services[*]} " == *" mysql "* ]]; then
  [ "$(pool_of mysql mysql MYSQL_ROOT_PASSWORD)" = "$want_pool_bytes" ] || restart+=(mysql)
fi
if ((${#restart[@]})); then
  mapfile -t restart < <(printf '%s\n' "${restart[@]}" | sort -u)
  echo "servers: restarting ${restart[*]}: a run that did not finish left its cap or cache changed"
  for service in "${restart[@]}"; do
    docker restart "$(compose --profile mysql ps -q "$service")" >/dev/null
  done
  wait_healthy "${restart[@]}"
fi
echo "servers: ${services[*]} healthy (project $project, env $env_file)"
