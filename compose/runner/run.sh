#!/bin/sh
# The runner's entry point: the same `cargo bench` run, from its prebuilt binary.
# The servers are healthy before this starts (compose depends_on); the binary
# loads what is missing, measures every engine and size, writes the results,
# criterion's HTML and the report to /charts, and exits non-zero on any failure.
set -eu
# compose passes unset knobs as empty strings: an empty BLOBRACE_SIZES is not "default".
for v in $(env | sed -n 's/^\(BLOBRACE_[A-Z0-9_]*\)=$/\1/p'); do unset "$v"; done
echo "blobrace runner: image ${BLOBRACE_RUNNER_IMAGE:-unknown}, profile ${BLOBRACE_PROFILE:-full}"
exec blobrace-bench --bench "$@"
