#!/bin/sh
# The runner's entry point: the same `cargo bench` run, from its prebuilt binary.
# The servers are healthy before this starts (compose depends_on); the binary
# loads what is missing, measures every engine and size, writes the results,
# the report (and criterion's HTML, with --plotting-backend plotters) to /charts, and exits non-zero on any failure.
set -eu
# compose passes unset knobs as empty strings: an empty BLOBRACE_SIZES is not "default".
for v in $(env | sed -n 's/^\(BLOBRACE_[A-Z0-9_]*\)=$/\1/p'); do unset "$v"; done
# A pod of the Kubernetes chart's indexed Job (deploy/helm): its index is its share.
if [ -n "${JOB_COMPLETION_INDEX:-}" ] && [ -n "${BLOBRACE_SHARES:-}" ]; then
  export BLOBRACE_SHARE="$((JOB_COMPLETION_INDEX + 1))/${BLOBRACE_SHARES}"
fi
# `blobrace-run verify`: read the run's datasets back byte for byte with the same
# settings and share (the Kubernetes chart's pods, after their run: their datasets live
# in the pod's emptyDir and go with it).
if [ "${1:-}" = verify ]; then
  shift
  echo "blobrace runner: verifying${BLOBRACE_SHARE:+ share $BLOBRACE_SHARE}'s datasets"
  exec blobrace verify "$@"
fi
echo "blobrace runner: image ${BLOBRACE_RUNNER_IMAGE:-unknown}, profile ${BLOBRACE_PROFILE:-full}${BLOBRACE_SHARE:+, share $BLOBRACE_SHARE}"
exec blobrace-bench --bench "$@"
