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
servers = ["postgres", "mariadb", "dolt", "seaweedfs"]
measuring = [runner] + [d for d in docs if d["kind"] == "StatefulSet"]
assert len(measuring) == 1 + len(servers), kinds
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
for server in servers:
    url = env[f"BLOBRACE_{server.upper()}_URL"]["value"]
    assert f"-{server}-$(JOB_COMPLETION_INDEX).bench-blobrace-{server}:" in url, url
    # Each URL after every variable it expands.
    for var in [v[2:-1] for v in url.split("$")[1:] for v in ["$" + v[:v.index(")") + 1]]]:
        assert names.index(var) < names.index(f"BLOBRACE_{server.upper()}_URL"), (var, names)
# The runner reads its servers' pods, and nothing else: get on them by name.
assert pod["serviceAccountName"] == "bench-blobrace-runner", pod.get("serviceAccountName")
role = next(d for d in docs if d["kind"] == "Role")
assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "delete"],
    "resourceNames": [f"bench-blobrace-{s}-{i}" for i in range(shares) for s in servers]}], role["rules"]
binding = next(d for d in docs if d["kind"] == "RoleBinding")
assert binding["subjects"][0]["name"] == pod["serviceAccountName"] and binding["roleRef"]["name"] == role["metadata"]["name"]
# Every server pod drops its data volume from the page cache before its server starts
# (a cold start deletes the pod): the init container mounts what the server mounts.
for d in docs:
    if d["kind"] != "StatefulSet":
        continue
    spec = d["spec"]["template"]["spec"]
    init = [c for c in spec.get("initContainers", []) if c["name"] == "drop-page-cache"]
    assert len(init) == 1, (d["metadata"]["name"], "no drop-page-cache init container")
    server_mounts = {(m["name"], m["mountPath"]) for m in spec["containers"][0]["volumeMounts"]}
    assert {(m["name"], m["mountPath"]) for m in init[0]["volumeMounts"]} <= server_mounts, d["metadata"]["name"]
    open(sys.argv[1] + "." + d["metadata"]["name"] + ".drop.sh", "w").write(init[0]["command"][-1])
# Dolt's GOMEMLIMIT follows the cap: 3/4 of 2Gi.
dolt = next(d for d in docs if d["kind"] == "StatefulSet" and d["metadata"]["name"].endswith("-dolt"))
dolt_env = {e["name"]: e.get("value") for e in dolt["spec"]["template"]["spec"]["containers"][0]["env"]}
assert dolt_env["GOMEMLIMIT"] == str(3 * 2**30 // 2), dolt_env["GOMEMLIMIT"]
# SeaweedFS's entry point is compose's own file, not a copy that can drift.
entry = next(d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].endswith("-seaweedfs-entrypoint"))
assert entry["data"]["entrypoint.sh"].strip() == open("compose/seaweedfs/entrypoint.sh").read().strip(), "entry point differs from compose's"
print(f"check-helm: {shares} share(s): {len(docs)} manifests valid; runner Indexed x{shares} with {len(servers)} servers each, every measuring pod capped at 2Gi / 4 CPUs; the runner may get and delete its {len(role['rules'][0]['resourceNames'])} server pods only")
PY
done

# A cloud cluster's values (values-cloud.yaml): every measuring pod on the benchmark's
# node pool, the servers' volumes and the runners' datasets on the disk under test,
# the results on a class many pods mount.
"$helm" lint --strict "$chart" -f "$chart/values-cloud.yaml"
"$helm" template bench "$chart" -f "$chart/values-cloud.yaml" > "$out/rendered-cloud.yaml"
"$venv/bin/kubernetes-validate" --strict -k 1.33.0 --quiet "$out/rendered-cloud.yaml"
"$venv/bin/python" - "$out/rendered-cloud.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
pods = [d for d in docs if d["kind"] in ("StatefulSet", "Job") and not d["metadata"]["name"].endswith("-merge")]
assert len(pods) == 5, [d["metadata"]["name"] for d in pods]
for d in pods:
    spec = d["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {"blobrace.dev/pool": "bench"}, d["metadata"]["name"]
    assert spec["tolerations"][0]["key"] == "blobrace.dev/bench", d["metadata"]["name"]
    if d["kind"] == "StatefulSet":
        assert d["spec"]["volumeClaimTemplates"][0]["spec"]["storageClassName"] == "premium-rwo", d["metadata"]["name"]
    else:
        data = next(v for v in spec["volumes"] if v["name"] == "data")
        claim = data["ephemeral"]["volumeClaimTemplate"]["spec"]
        assert claim["storageClassName"] == "premium-rwo" and claim["resources"]["requests"]["storage"] == "64Gi", data
        assert d["spec"]["completions"] == 6
results = next(d for d in docs if d["kind"] == "PersistentVolumeClaim")
assert results["spec"]["storageClassName"] == "standard-rwx" and results["spec"]["accessModes"] == ["ReadWriteMany"], results["spec"]
print(f"check-helm: values-cloud.yaml: {len(docs)} manifests valid; 5 measuring pod templates on the bench pool, the disk under test premium-rwo for servers and runners, results on standard-rwx")
PY

# The init container's script itself, run here on a directory of two files: it reads
# nothing, drops them, and says what blobrace parses (files=N bytes=B dir=D).
drop=$(ls "$out"/rendered-3.yaml.*-postgres.drop.sh)
mkdir -p "$fake/pgdata/base"
head -c 5000 /dev/urandom > "$fake/pgdata/base/1"; head -c 123 /dev/urandom > "$fake/pgdata/PG_VERSION"
sed -e "s|/var/lib/postgresql/data|$fake/pgdata|g" -e "s|/dev/termination-log|$fake/said|" "$drop" > "$fake/drop.sh"
bash "$fake/drop.sh" >/dev/null
[ "$(cat "$fake/said")" = "files=2 bytes=5123 dir=$fake/pgdata" ] || { echo "check-helm: drop-page-cache said '$(cat "$fake/said")'" >&2; exit 1; }
echo "check-helm: a server pod's drop-page-cache script dropped 2 files (5123 bytes) and said so"

# Without servers, no Role: one without names would grant every pod.
none=$("$helm" template bench "$chart" --set postgres.enabled=false --set mariadb.enabled=false \
  --set dolt.enabled=false --set seaweedfs.enabled=false)
if grep -q '^kind: Role$' <<<"$none"; then
  echo "check-helm: a Role rendered with no server pods to name" >&2; exit 1
fi
echo "check-helm: no servers, no Role"

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
