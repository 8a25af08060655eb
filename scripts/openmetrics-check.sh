#!/usr/bin/env bash
# Scrape URL and parse it as OpenMetrics with the Prometheus Python client's own parser
# (prometheus-client, pinned, in a venv of its own made on first use from PyPI).
# Used by tests/it/metrics.rs; by hand: scripts/openmetrics-check.sh http://127.0.0.1:9464/metrics
set -euo pipefail
venv="${XDG_CACHE_HOME:-$HOME/.cache}/blobrace/openmetrics-check-1"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import prometheus_client' 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2 || { echo "openmetrics check: python3 -m venv failed: run scripts/setup.sh (python3-venv)" >&2; exit 1; }
  "$venv/bin/pip" install -q "prometheus-client==0.26.0" >&2 \
    || { rm -rf "$venv"; echo "openmetrics check: cannot install prometheus-client 0.26.0 from PyPI" >&2; exit 1; }
fi
exec "$venv/bin/python" "$(dirname "$0")/openmetrics_check.py" "$@"
