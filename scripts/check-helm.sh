#!/usr/bin/env bash
# Check the Kubernetes chart (deploy/helm/blobrace) with the tools a user has: `helm lint`,
# `helm template`, and the rendered manifests validated strictly against Kubernetes'
# own schemas (kubernetes-validate, which ships them); then what the chart promises:
# an indexed Job of one pod per share, and every measuring pod (runner, servers) with
# requests equal to limits equal to the cap. No cluster runs here: this renders only.
#   scripts/check-helm.sh            # builds Helm from the Go module proxy if missing
set -euo pipefail
cd "$(dirname "$0")/.."

helm_version=v3.21.4
helm=$(command -v helm || true)
if [ -z "$helm" ] || ! "$helm" version --short 2>/dev/null | grep -q '^v3'; then
  bin="${XDG_CACHE_HOME:-$HOME/.cache}/blobrace/helm-$helm_version"
  if [ ! -x "$bin/helm" ]; then
    go_minor=$(go version 2>/dev/null | sed -nE 's/.*go1\.([0-9]+).*/\1/p')
    if [ "${go_minor:-0}" -lt 24 ]; then
      echo "check-helm: building Helm $helm_version needs Go >= 1.24 ($(go version 2>/dev/null || echo 'no go')): install a newer Go, or put helm v3 on PATH" >&2
      exit 1
    fi
    echo "check-helm: building Helm $helm_version from the Go module proxy (about 3 minutes)"
    GOFLAGS=-mod=mod GOBIN="$bin" go install "helm.sh/helm/v3/cmd/helm@$helm_version"
  fi
  helm="$bin/helm"
fi
venv="${XDG_CACHE_HOME:-$HOME/.cache}/blobrace/kubernetes-validate-1.37.0"
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q kubernetes-validate==1.37.0
fi

chart=deploy/helm/blobrace
"$helm" lint --strict "$chart"
out=$(mktemp -d)
fake=$(mktemp -d)
trap 'rm -rf "$out" "$fake"' EXIT
for shares in 1 3; do
  "$helm" template bench "$chart" --set shares=$shares --set cap.memory=2Gi --set cap.cpus=4 \
    > "$out/rendered-$shares.yaml"
  "$venv/bin/kubernetes-validate" --strict -k 1.33.0 --quiet "$out/rendered-$shares.yaml"
  "$venv/bin/python" - "$out/rendered-$shares.yaml" "$shares" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
shares = int(sys.argv[2])
kinds = {(d["kind"], d["metadata"]["name"]) for d in docs}
runner = next(d for d in docs if d["kind"] == "Job" and d["metadata"]["name"].endswith("-runner"))
spec = runner["spec"]
assert spec["completionMode"] == "Indexed", spec
assert spec["completions"] == shares and spec["parallelism"] == shares, spec
measuring = [runner] + [d for d in docs if d["kind"] == "StatefulSet"]
assert len(measuring) == 3, kinds
for d in measuring:
    if d["kind"] == "StatefulSet":
        assert d["spec"]["replicas"] == shares, d["metadata"]["name"]
    pod = d["spec"]["template"]["spec"]
    for c in pod["containers"]:
        r = c["resources"]
        want = {"memory": "2Gi", "cpu": "4"}
        assert r["requests"] == want and r["limits"] == want, (d["metadata"]["name"], r)
    # Guaranteed QoS counts init containers too: requests equal to limits there.
    for c in pod.get("initContainers", []):
        r = c["resources"]
        assert r["requests"] == r["limits"], (d["metadata"]["name"], c["name"], r)
merge = [d for d in docs if d["kind"] == "Job" and d["metadata"]["name"].endswith("-merge")]
assert len(merge) == (1 if shares > 1 else 0), "a merge Job only for more than one share"
if merge:
    script = merge[0]["spec"]["template"]["spec"]["containers"][0]["command"][-1]
    assert "share-$i/" in script and '-eq "$shares"' in script, "one run per share"
pg = next(d for d in docs if d["kind"] == "StatefulSet" and d["metadata"]["name"].endswith("-postgres"))
assert "shared_buffers=128MB" in pg["spec"]["template"]["spec"]["containers"][0]["args"], "cache set by the chart"
env = {e["name"]: e for e in runner["spec"]["template"]["spec"]["containers"][0]["env"]}
assert env["BLOBRACE_SHARES"]["value"] == str(shares), env["BLOBRACE_SHARES"]
assert env["BLOBRACE_CAP"]["value"] == "2Gi" and env["BLOBRACE_CPUS"]["value"] == "4"
names = list(env)
# One image for the runner's pod, its wait for the servers included: a cluster that
# cannot pull from a public registry mirrors the runner's image and the servers' only.
pod = runner["spec"]["template"]["spec"]
images = {c["image"] for c in pod["containers"] + pod.get("initContainers", [])}
assert len(images) == 1, images
# run.verify (default): the run, then its share's datasets read back by the entry point.
assert pod["containers"][0]["command"] == ["sh", "-c", "blobrace-run && blobrace-run verify"], pod["containers"][0].get("command")
assert env["BLOBRACE_RUNNER_IMAGE"]["value"] == pod["containers"][0]["image"], env["BLOBRACE_RUNNER_IMAGE"]
# Kubernetes expands $(VAR) only from variables defined before it.
assert names.index("JOB_COMPLETION_INDEX") < names.index("BLOBRACE_POSTGRES_URL"), names
assert "-postgres-$(JOB_COMPLETION_INDEX)." in env["BLOBRACE_POSTGRES_URL"]["value"]
print(f"check-helm: {shares} share(s): {len(docs)} manifests valid; runner Indexed x{shares}, every measuring pod capped at 2Gi / 4 CPUs")
PY
done

# The cap only in forms that the pods' limits and the runner's flags read alike.
for bad in cap.cpus=500m cap.memory=1G; do
  if "$helm" template bench "$chart" --set "$bad" >/dev/null 2>&1; then
    echo "check-helm: --set $bad rendered: Kubernetes and blobrace read it differently" >&2; exit 1
  fi
done
echo "check-helm: cap.cpus=500m and cap.memory=1G refused"

# The runner's entry point turns the pod's index into its share.
printf '#!/bin/sh\necho "share=$BLOBRACE_SHARE"\n' > "$fake/blobrace-bench"
chmod +x "$fake/blobrace-bench"
got=$(JOB_COMPLETION_INDEX=1 BLOBRACE_SHARES=3 PATH="$fake:$PATH" sh compose/runner/run.sh | tail -1)
[ "$got" = "share=2/3" ] || { echo "check-helm: pod index 1 of 3 ran as '$got', not share 2/3" >&2; exit 1; }
echo "check-helm: pod index 1 of 3 runs --share 2/3"
