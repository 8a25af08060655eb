#!/usr/bin/env bash
# Build the SeaweedFS binary (`weed`) of the offline stand-in image from the Go
# module proxy:   scripts/build-seaweedfs.sh OUT_DIR   ->  OUT_DIR/weed (static, CGO off)
#
# SeaweedFS tags its releases as 3.x/4.x but publishes no v-tagged Go module, so the
# proxy serves it as a pseudo-version of its main branch (the one below reports
# itself as 4.53). Its go.mod has a replace directive (go-bip39), so `go install` is
# refused: download the module, copy it, and build ./weed inside the copy.
# Needs Go >= the go line of its go.mod (1.26.6 for this version): where the machine's
# Go is older or missing, that toolchain is fetched from the Go module proxy
# (golang.org/toolchain, kept in target/go-<version>/). The binary is kept
# in target/seaweedfs-<version>/weed and reused by later runs (a build takes about
# 3 minutes on 2 cores and 232 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/build-seaweedfs.sh OUT_DIR}
version=${BLOBRACE_SEAWEEDFS_VERSION:-v0.0.0-20261109003541-7506e5f91cd6}
module=github.com/seaweedfs/seaweedfs
cached=target/seaweedfs-$version/weed

if [ ! -x "$cached" ]; then
  need_go=1.26.6
  have_go=$(go env GOVERSION 2>/dev/null | sed 's/^go//' || true)
  if [ -z "$have_go" ] || [ "$(printf '%s\n%s\n' "$need_go" "$have_go" | sort -V | head -1)" != "$need_go" ]; then
    gohome=$PWD/target/go-$need_go
    if [ ! -x "$gohome/bin/go" ]; then
      echo "build-seaweedfs: Go ${have_go:-(none)} is older than $need_go: fetching go$need_go from the Go module proxy"
      zip=$(mktemp)
      curl -fsSL "${GOPROXY:-https://proxy.golang.org}/golang.org/toolchain/@v/v0.0.1-go$need_go.linux-amd64.zip" -o "$zip"
      rm -rf "$gohome.tmp" && mkdir -p "$gohome.tmp"
      python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$zip" "$gohome.tmp"
      rm -f "$zip"
      src=$(dirname "$(dirname "$(find "$gohome.tmp" -path '*/bin/go' -type f | head -1)")")
      chmod -R u+x "$src/bin" "$src/pkg/tool"
      rm -rf "$gohome" && mv "$src" "$gohome" && rm -rf "$gohome.tmp"
    fi
    export PATH=$gohome/bin:$PATH GOROOT=$gohome
  fi
  work=$(mktemp -d)
  trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
  # The module and build caches of this build only (the build cache alone is ~3 GiB that
  # nothing reuses, and CI machines can be short of disk); the module's own go.sum pins
  # every dependency.
  export GOPATH=$work/gopath GOMODCACHE=$work/gopath/pkg/mod GOCACHE=$work/gocache GOFLAGS=-mod=mod \
         GOPROXY=${GOPROXY:-https://proxy.golang.org} GOSUMDB=off GOTOOLCHAIN=local CGO_ENABLED=0
  echo "build-seaweedfs: downloading $module@$version"
  dir=$(go mod download -json "$module@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [ -d "$dir" ] || { echo "build-seaweedfs: cannot download $module@$version (GOPROXY=$GOPROXY)" >&2; exit 1; }
  echo "build-seaweedfs: module downloaded at +$SECONDS s"
  cp -r "$dir" "$work/seaweedfs"
  chmod -R u+w "$work/seaweedfs"
  echo "build-seaweedfs: go build ./weed ($(go version | cut -d' ' -f3), about 3 minutes)"
  # Not `-o weed`: the main package's directory is called weed, and go build would
  # put the binary inside it.
  (cd "$work/seaweedfs" && go build -trimpath -o "$work/weed.bin" ./weed)
  echo "build-seaweedfs: built at +$SECONDS s"
  mkdir -p "$(dirname "$cached")"
  mv "$work/weed.bin" "$cached"
fi
mkdir -p "$out"
cp "$cached" "$out/weed"
echo "build-seaweedfs: $("$cached" version 2>&1 | head -1)"
