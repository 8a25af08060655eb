#!/usr/bin/env bash
# Build the Dolt binary of the offline stand-in image from the Go module proxy:
#   scripts/build-dolt.sh OUT_DIR   ->  OUT_DIR/dolt (static, CGO off)
#
# The newest Dolt the proxy serves as a tagged module is github.com/dolthub/dolt/go
# v0.40.4. `go install …/cmd/dolt@v0.40.4` is refused (its go.mod has replace
# directives), so: download the module, put the eventsapi module its go.mod replaces
# with ./gen/proto/dolt/services/eventsapi (missing from the module zip) in that
# place, add the five ClientEventType constants v0.40.4 uses and that eventsapi
# version lacks, and build ./cmd/dolt. Needs Go >= 1.18 (apt-get install golang-go).
# The binary is kept in target/dolt-<version> and reused by later runs.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/build-dolt.sh OUT_DIR}
version=${BLOBRACE_DOLT_VERSION:-v0.40.4}
eventsapi=github.com/dolthub/dolt/go/gen/proto/dolt/services/eventsapi
cached=target/dolt-$version/dolt

if [ ! -x "$cached" ]; then
  command -v go >/dev/null || { echo "build-dolt: no Go toolchain: apt-get install golang-go (>= 1.18)" >&2; exit 1; }
  work=$(mktemp -d)
  trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
  # The module and build caches of this build only (the build cache alone is ~3 GiB that
  # nothing reuses, and CI machines can be short of disk); sum.golang.org is not reachable
  # from every machine that reaches the proxy: the module's own go.sum pins every dependency.
  export GOPATH=$work/gopath GOMODCACHE=$work/gopath/pkg/mod GOCACHE=$work/gocache GOFLAGS=-mod=mod \
         GOPROXY=${GOPROXY:-https://proxy.golang.org} GOSUMDB=off GOTOOLCHAIN=local CGO_ENABLED=0
  echo "build-dolt: downloading github.com/dolthub/dolt/go@$version"
  dir=$(go mod download -json "github.com/dolthub/dolt/go@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [ -d "$dir" ] || { echo "build-dolt: cannot download github.com/dolthub/dolt/go@$version (GOPROXY=$GOPROXY)" >&2; exit 1; }
  echo "build-dolt: module downloaded at +$SECONDS s"
  cp -r "$dir" "$work/dolt"
  chmod -R u+w "$work/dolt"
  # The require line's version (the replace line names the module too).
  events_version=$(awk -v m="$eventsapi" '$1 == m && $2 ~ /^v/ { print $2; exit }' "$work/dolt/go.mod")
  events_dir=$(go mod download -json "$eventsapi@$events_version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [ -d "$events_dir" ] || { echo "build-dolt: cannot download $eventsapi@$events_version" >&2; exit 1; }
  mkdir -p "$work/dolt/gen/proto/dolt/services/eventsapi"
  cp -r "$events_dir"/. "$work/dolt/gen/proto/dolt/services/eventsapi/"
  chmod -R u+w "$work/dolt/gen"
  cat > "$work/dolt/gen/proto/dolt/services/eventsapi/v1alpha1/blobrace_event_types.go" <<'GO'
package eventsapi

// Event types Dolt v0.40.4 reports and the eventsapi version its go.mod requires
// lacks (added by blobrace's scripts/build-dolt.sh; telemetry only).
const (
	ClientEventType_MIGRATE            ClientEventType = 50
	ClientEventType_TAG                ClientEventType = 51
	ClientEventType_GARBAGE_COLLECTION ClientEventType = 52
	ClientEventType_FILTER_BRANCH      ClientEventType = 53
	ClientEventType_DUMP               ClientEventType = 54
)
GO
  echo "build-dolt: go build ./cmd/dolt ($(go version | cut -d' ' -f3), a few minutes)"
  (cd "$work/dolt" && go build -trimpath -o dolt ./cmd/dolt)
  echo "build-dolt: built at +$SECONDS s"
  mkdir -p "$(dirname "$cached")"
  mv "$work/dolt/dolt" "$cached"
fi
mkdir -p "$out"
cp "$cached" "$out/dolt"
echo "build-dolt: $("$cached" version | head -1)"
