#!/bin/sh
# First start: install the system tables, set the root password, create
# MARIADB_DATABASE and MARIADB_USER. Then run mariadbd on all interfaces.
set -eu
[ "${1#-}" != "$1" ] && set -- mariadbd "$@"
if [ "$1" != mariadbd ]; then exec "$@"; fi
shift
: "${MARIADB_ROOT_PASSWORD:?MARIADB_ROOT_PASSWORD must be set (as with the official image)}"
datadir=/var/lib/mysql
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld "$datadir"
if [ ! -d "$datadir/mysql" ]; then
  mariadb-install-db --user=mysql --datadir="$datadir" --skip-test-db --auth-root-authentication-method=normal >/dev/null
  mariadbd --user=mysql --datadir="$datadir" --skip-networking --socket=/run/mysqld/init.sock &
  pid=$!
  for _ in $(seq 1 60); do mariadb-admin --socket=/run/mysqld/init.sock ping >/dev/null 2>&1 && break; sleep 0.5; done
  {
    echo "ALTER USER 'root'@'localhost' IDENTIFIED BY '$MARIADB_ROOT_PASSWORD';"
    echo "CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY '$MARIADB_ROOT_PASSWORD';"
    echo "GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;"
    if [ -n "${MARIADB_DATABASE:-}" ]; then echo "CREATE DATABASE IF NOT EXISTS \`$MARIADB_DATABASE\`;"; fi
    if [ -n "${MARIADB_USER:-}" ]; then
      echo "CREATE USER IF NOT EXISTS '$MARIADB_USER'@'%' IDENTIFIED BY '${MARIADB_PASSWORD:-}';"
      if [ -n "${MARIADB_DATABASE:-}" ]; then echo "GRANT ALL ON \`$MARIADB_DATABASE\`.* TO '$MARIADB_USER'@'%';"; fi
    fi
    echo "FLUSH PRIVILEGES;"
  } | mariadb --socket=/run/mysqld/init.sock -uroot
  kill "$pid" && wait "$pid" || true
  echo "mariadb-offline: initialised $datadir"
fi
exec mariadbd --user=mysql --datadir="$datadir" --bind-address=0.0.0.0 "$@"
