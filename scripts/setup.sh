#!/usr/bin/env bash
# Install what a fresh machine needs to build and test blobrace (Debian/Ubuntu).
set -euo pipefail

need_apt=()
command -v cc >/dev/null 2>&1 || need_apt+=(build-essential)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
# The report test opens the generated page in a real (headless) browser.
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
# Where no registry answers, the server images are built offline: a debootstrap base, and
# Dolt from the Go module proxy (Go >= 1.18; Debian bookworm's golang-go is 1.19).
command -v debootstrap >/dev/null 2>&1 || need_apt+=(debootstrap)
command -v go >/dev/null 2>&1 || need_apt+=(golang-go)
# CI checks histograms.hlog with HdrHistogram's own (Java) log processor.
command -v java >/dev/null 2>&1 || need_apt+=(default-jre-headless)
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
# The report's accessibility is checked in that browser by axe-core (Deque's, the field's
# own check), fetched from the npm registry below.
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
# The disk cap is checked against fio, the field's own tool, under the same throttle
# (tests/it/disk_cap.rs).
command -v fio >/dev/null 2>&1 || need_apt+=(fio)
# --disk-latency's emulated disk: nbdkit's delay filter (built below, Debian 12's takes whole
# milliseconds only), exposed by nbdfuse, on a loop device.
command -v nbdfuse >/dev/null 2>&1 || need_apt+=(libnbd-bin)
command -v fusermount3 >/dev/null 2>&1 || need_apt+=(fuse3)
# The RocksDB engine loads the system's librocksdb at run time (src/db/rocksdb/ffi.rs): the
# newest release this distribution packages (Debian 12: librocksdb7.8).
if ! ls /usr/lib/*/librocksdb.so.* /usr/lib/librocksdb.so.* /usr/local/lib/librocksdb.so.* >/dev/null 2>&1; then
  rocksdb_pkg=$(apt-cache pkgnames librocksdb 2>/dev/null | grep -E '^librocksdb[0-9][0-9.]*$' | sort -V | tail -1 || true)
  need_apt+=("${rocksdb_pkg:-librocksdb7.8}")
fi
# scripts/check-helm.sh validates the chart with kubernetes-validate in its own venv.
python3 -m venv --help >/dev/null 2>&1 && python3 -c 'import ensurepip' 2>/dev/null || need_apt+=(python3-venv)
if ((${#need_apt[@]})); then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: need ${need_apt[*]}; run as root or: sudo apt-get install -y ${need_apt[*]}" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
fi

# --network-rtt puts Toxiproxy (Shopify's) between the engines and their servers: built from
# the Go module proxy (its newest release there), as the stand-in images' Dolt is.
if ! command -v toxiproxy-server >/dev/null 2>&1; then
  bin=/usr/local/bin
  [ -w "$bin" ] || { bin=$HOME/.local/bin; mkdir -p "$bin"; }
  gobin=$(mktemp -d)
  GOBIN=$gobin go install -ldflags="-X github.com/Shopify/toxiproxy/v2.Version=2.5.0" github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0
  install -m 0755 "$gobin/server" "$bin/toxiproxy-server"
  rm -rf "$gobin"
  command -v toxiproxy-server >/dev/null 2>&1 || echo "setup: toxiproxy-server is in $bin: add it to PATH for --network-rtt" >&2
fi

bash "$(dirname "$0")/build-nbdkit.sh"

# axe-core for tests/it/report.rs, pinned; npm checks the registry's integrity hash.
axe_version=4.10.3
axe_dir=$HOME/.cache/blobrace/axe-core-$axe_version
if [ ! -f "$axe_dir/axe.min.js" ]; then
  axe_tmp=$(mktemp -d)
  (cd "$axe_tmp" && npm pack --silent "axe-core@$axe_version" >/dev/null && tar xzf "axe-core-$axe_version.tgz")
  mkdir -p "$axe_dir"
  cp "$axe_tmp/package/axe.min.js" "$axe_tmp/package/LICENSE" "$axe_dir/"
  rm -rf "$axe_tmp"
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found: install Rust >= 1.94 (https://rustup.rs) and re-run" >&2
  exit 1
fi
rustc_minor=$(rustc --version | sed -E 's/^rustc 1\.([0-9]+).*/\1/')
if [ "$rustc_minor" -lt 94 ]; then
  echo "setup: rustc $(rustc --version) is too old: blobrace needs 1.94 or newer (rustup update)" >&2
  exit 1
fi
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy rustfmt 2>/dev/null || true
echo "setup: ok ($(rustc --version))"
