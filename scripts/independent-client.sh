#!/usr/bin/env bash
# The independent clients `cargo bench --bench clients` sets beside the raw engines:
# psycopg 3 and PyMySQL, pinned, in a venv of their own made on first use (from PyPI).
# Runs scripts/independent_client.py with its arguments.
set -euo pipefail
venv="${XDG_CACHE_HOME:-$HOME/.cache}/blobrace/independent-clients-1"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import psycopg, pymysql' 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2 || { echo "independent client: python3 -m venv failed: run scripts/setup.sh (python3-venv)" >&2; exit 1; }
  "$venv/bin/pip" install -q "psycopg[binary]==3.3.9" "PyMySQL==1.2.4" >&2 \
    || { rm -rf "$venv"; echo "independent client: cannot install psycopg 3.3.9 and PyMySQL 1.2.4 from PyPI" >&2; exit 1; }
fi
exec "$venv/bin/python" "$(dirname "$0")/independent_client.py" "$@"
