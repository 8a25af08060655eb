#!/usr/bin/env bash
# Run the Kubernetes chart (deploy/helm/blobrace) on a real single-node Kubernetes brought
# up on this machine, then take the cluster down again.
#
# Why: CI renders and validates the chart (scripts/check-helm.sh), but only a cluster
# shows whether its pods are scheduled, whether the servers answer under their
# StatefulSet names, whether every share writes to the shared results claim, and
# whether the merge Job merges. This machine has no registry, no systemd and cgroup v1,
# so the cluster is built "the hard way", from the Go module proxy and Debian's packages:
#   - kube-apiserver, kube-controller-manager, kube-scheduler and kubelet: k8s.io/kubernetes
#     built from a small wrapper module that pins its staging modules (k8s.io/api etc.) at
#     the matching v0.x (`go install` alone refuses its replace directives); etcd the same
#     way (go.etcd.io/etcd/server/v3); CoreDNS (github.com/coredns/coredns) with only the
#     plugins needed; Helm (helm.sh/helm/v3);
#   - a second containerd (Debian's, the one Docker uses, with its own root, state and
#     socket) for the kubelet; Debian's containernetworking-plugins (bridge, host-local,
#     loopback, portmap); certificates made with openssl;
#   - no image is pulled: the runner's and the servers' images are copied from the local
#     Docker (`docker save | ctr import`), and the pause image is a static Go program
#     built here into a scratch image;
#   - no kube-proxy: the chart's Services are headless. CoreDNS runs on the host, on the
#     pod bridge's gateway address, which is the kubelet's clusterDNS: the StatefulSet
#     pods' names (<pod>.<service>) resolve as on any cluster;
#   - the claims are bound to hostPath PersistentVolumes made for them (the results claim
#     ReadWriteMany: one node).
# The binaries are built once, cached under ${XDG_CACHE_HOME:-~/.cache}/blobrace/k8s-<version>/
# (the four Kubernetes binaries took 576 s on 2 cores here, beside other builds; etcd,
# CoreDNS, Helm and the pause image 145 s more). Everything a run makes lives under
# /var/lib/blobrace-k8s and /run/blobrace-k8s, and is removed by `down` (called on exit,
# INT and TERM; after a kill -9, run `scripts/k8s-host.sh down`): processes ended,
# containers and mounts gone, the pod bridge, network namespaces and iptables chains
# removed, the kernel settings the kubelet changes restored, nothing left listening.
#
#   scripts/k8s-host.sh [run]     build (cached), up, load images, install, follow, fetch, down
#   scripts/k8s-host.sh build     build the binaries and the pause image only
#   scripts/k8s-host.sh up        bring the cluster up and leave it (KUBECONFIG printed)
#   scripts/k8s-host.sh down      take down whatever a run left
#
# Environment (defaults): K8SHOST_SHARES (3), K8SHOST_CAP (1Gi), K8SHOST_CPUS (0.15: 3
# shares x 3 measuring pods fit a 2-CPU node), K8SHOST_PROFILE (quick), K8SHOST_ENGINES
# (floor,sqlite,fs,postgres,mariadb), K8SHOST_SIZES (4KiB,64KiB,1MiB: one per share),
# K8SHOST_DATASET_BYTES (32MiB), K8SHOST_TIMEOUT (job timeout, 3600 s), K8SHOST_OUT (where
# the results claim is copied; default ~/.cache/blobrace/k8s-runs/<time>),
# BLOBRACE_RUNNER_IMAGE (blobrace/runner-offline:latest: scripts/offline-images.sh runner),
# BLOBRACE_POSTGRES_IMAGE / _MARIADB_ / _DOLT_ / _SEAWEEDFS_IMAGE (the offline stand-ins where the
# official images are not in Docker).
# Exit status: 0 every share measured and merged; 1 a failure; 2 a piece could not be had
# (one line naming it). See docs/kubernetes.md.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
k8s_version=v1.34.4
etcd_version=v3.6.17
coredns_version=v1.12.4
helm_version=v3.21.4
cache="${XDG_CACHE_HOME:-$HOME/.cache}/blobrace/k8s-$k8s_version"
bin=$cache/bin
helm_bin="${XDG_CACHE_HOME:-$HOME/.cache}/blobrace/helm-$helm_version/helm"
state=/var/lib/blobrace-k8s
run=/run/blobrace-k8s
sock=$run/containerd.sock
pause_image=blobrace-k8s/pause:$k8s_version
bridge=bk8s0
pod_cidr=10.244.0.0/24
gateway=10.244.0.1
dns_ip=$gateway
service_cidr=10.96.0.0/24
etcd_port=23790
release=bench
ns=default

say() { echo "k8s-host: $*"; }
refuse() { echo "k8s-host: cannot run: $*" >&2; exit 2; }
die() { echo "k8s-host: $*" >&2; exit 1; }

# --- the pieces ---------------------------------------------------------------------------

preflight() {
  [ "$(id -u)" = 0 ] || refuse "root is needed (a kubelet, a containerd, mounts and iptables)"
  local c
  for c in go docker containerd containerd-shim-runc-v2 ctr runc openssl iptables ip conntrack socat kubectl python3 findmnt setsid; do
    command -v "$c" >/dev/null || refuse "$c not found (apt-get install $(pkg_of "$c"))"
  done
  for c in bridge host-local loopback portmap; do
    [ -x /usr/lib/cni/$c ] || refuse "CNI plugin /usr/lib/cni/$c not found (apt-get install containernetworking-plugins)"
  done
  docker info >/dev/null 2>&1 || refuse "Docker is not running (the images are copied from it)"
  [ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || refuse "no cgroup hierarchy under /sys/fs/cgroup"
  local go_minor
  go_minor=$(go version | sed -nE 's/.*go1\.([0-9]+).*/\1/p')
  [ "${go_minor:-0}" -ge 24 ] || refuse "Go >= 1.24 is needed to build Kubernetes $k8s_version ($(go version))"
}

pkg_of() {
  case $1 in
    go) echo golang ;; docker) echo docker.io ;; containerd | containerd-shim-runc-v2 | ctr) echo containerd ;;
    ip) echo iproute2 ;; findmnt) echo util-linux ;; setsid) echo util-linux ;; kubectl) echo kubernetes-client ;;
    *) echo "$1" ;;
  esac
}

# A wrapper module around a module whose go.mod replaces its siblings with directories
# (which its module zip lacks): the same siblings pinned at the version given instead.
go_build() { # dir, out binaries dir, packages...
  local dir=$1 out=$2
  shift 2
  (cd "$dir" && GOFLAGS=-mod=mod CGO_ENABLED=0 nice -n 19 go build -trimpath -ldflags "${ldflags:--s -w}" -o "$out/" "$@")
}

build() {
  mkdir -p "$bin"
  local started=$SECONDS
  local p missing=()
  for p in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy; do
    [ -x "$bin/$p" ] || missing+=("k8s.io/kubernetes/cmd/$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    say "building Kubernetes $k8s_version from the Go module proxy (about 10 minutes on 2 cores)"
    local src=$cache/src
    mkdir -p "$src"
    (cd "$src" && go mod download k8s.io/kubernetes@$k8s_version) || refuse "k8s.io/kubernetes@$k8s_version could not be had from the Go module proxy"
    local modfile
    modfile=$(cd "$src" && go mod download -json k8s.io/kubernetes@$k8s_version | sed -nE 's/.*"GoMod": "(.*)".*/\1/p')
    local staging_v=v0.${k8s_version#v1.}
    {
      printf 'module blobrace.local/k8s-host\n\ngo 1.24.0\n\ngodebug default=go1.24\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$k8s_version"
      grep -E '=> \./staging' "$modfile" | awk -v v="$staging_v" '{print "\t" $1 " => " $1 " " v}'
      printf ')\n'
    } > "$src/go.mod"
    printf 'package main\n\nfunc main() {}\n' > "$src/main.go"
    local cmds=("${missing[@]}")
    (cd "$src" && GOFLAGS=-mod=mod go get "${cmds[@]/%/@$k8s_version}" >/dev/null 2>&1) ||
      refuse "the staging modules of k8s.io/kubernetes $k8s_version ($staging_v) could not be had from the Go module proxy"
    local ld="-s -w" v
    for v in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ld="$ld -X $v.gitVersion=$k8s_version -X $v.gitMajor=1 -X $v.gitMinor=$(echo "$k8s_version" | cut -d. -f2) -X $v.gitTreeState=clean"
    done
    ldflags=$ld go_build "$src" "$bin" "${cmds[@]}" || die "building Kubernetes $k8s_version failed"
  fi
  if [ ! -x "$bin/etcd" ]; then
    say "building etcd $etcd_version from the Go module proxy"
    local src=$cache/etcd m
    mkdir -p "$src"
    {
      printf 'module blobrace.local/k8s-host-etcd\n\ngo 1.24\n\nrequire go.etcd.io/etcd/server/v3 %s\n\nreplace (\n' "$etcd_version"
      for m in api/v3 client/pkg/v3 client/v3 pkg/v3; do printf '\tgo.etcd.io/etcd/%s => go.etcd.io/etcd/%s %s\n' "$m" "$m" "$etcd_version"; done
      printf ')\n'
    } > "$src/go.mod"
    printf 'package main\n\nfunc main() {}\n' > "$src/main.go"
    (cd "$src" && GOFLAGS=-mod=mod go get "go.etcd.io/etcd/server/v3@$etcd_version" >/dev/null 2>&1) ||
      refuse "go.etcd.io/etcd/server/v3@$etcd_version could not be had from the Go module proxy"
    go_build "$src" "$src/out" go.etcd.io/etcd/server/v3 || die "building etcd $etcd_version failed"
    mv "$src/out/server" "$bin/etcd"
  fi
  if [ ! -x "$bin/coredns" ]; then
    say "building CoreDNS $coredns_version from the Go module proxy (the kubernetes plugin and a few others)"
    local src=$cache/coredns p
    mkdir -p "$src"
    {
      printf '// CoreDNS with only the plugins the single-node cluster uses: the full set pulls\n'
      printf '// in every cloud provider'"'"'s SDK.\npackage main\n\nimport (\n\t_ "github.com/coredns/coredns/core/dnsserver"\n\t"github.com/coredns/coredns/coremain"\n'
      for p in bind cache errors kubernetes log; do printf '\t_ "github.com/coredns/coredns/plugin/%s"\n' "$p"; done
      printf ')\n\nfunc main() { coremain.Run() }\n'
    } > "$src/main.go"
    printf 'module blobrace.local/k8s-host-coredns\n\ngo 1.24.0\n\nrequire github.com/coredns/coredns %s\n' "$coredns_version" > "$src/go.mod"
    (cd "$src" && GOFLAGS=-mod=mod go get "github.com/coredns/coredns@$coredns_version" >/dev/null 2>&1 && GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1) ||
      refuse "github.com/coredns/coredns@$coredns_version could not be had from the Go module proxy"
    go_build "$src" "$src/out" . || die "building CoreDNS $coredns_version failed"
    mv "$src/out/k8s-host-coredns" "$bin/coredns"
  fi
  if [ ! -x "$helm_bin" ]; then
    say "building Helm $helm_version from the Go module proxy"
    GOFLAGS=-mod=mod GOBIN=$(dirname "$helm_bin") nice -n 19 go install "helm.sh/helm/v3/cmd/helm@$helm_version" ||
      refuse "helm.sh/helm/v3@$helm_version could not be built from the Go module proxy"
  fi
  if ! docker image inspect "$pause_image" >/dev/null 2>&1; then
    # The sandbox's pid 1: waits for a signal, as registry.k8s.io/pause does.
    local ctx
    ctx=$(mktemp -d)
    printf 'module pause\n\ngo 1.24\n' > "$ctx/go.mod"
    cat > "$ctx/main.go" <<'EOF'
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	<-c
}
EOF
    (cd "$ctx" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o pause .) || die "building the pause program failed"
    printf 'FROM scratch\nCOPY pause /pause\nENTRYPOINT ["/pause"]\n' > "$ctx/Dockerfile"
    docker build -q -t "$pause_image" "$ctx" >/dev/null || die "building $pause_image failed"
    rm -rf "$ctx"
  fi
  [ $((SECONDS - started)) -lt 5 ] || say "built in $((SECONDS - started)) s"
}

# --- certificates -------------------------------------------------------------------------

cert() { # name, subject, extensions
  local name=$1 subj=$2 ext=$3
  openssl req -new -newkey rsa:2048 -nodes -keyout "$pki/$name.key" -subj "$subj" -out "$pki/$name.csr" 2>/dev/null
  printf '%s\n' "$ext" > "$pki/$name.ext"
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 2 \
    -extfile "$pki/$name.ext" -out "$pki/$name.crt" 2>/dev/null
}

kubeconfig() { # name (cert), file
  KUBECONFIG=$2 kubectl config set-cluster k --server=https://127.0.0.1:6443 --certificate-authority="$pki/ca.crt" --embed-certs >/dev/null
  KUBECONFIG=$2 kubectl config set-credentials u --client-certificate="$pki/$1.crt" --client-key="$pki/$1.key" --embed-certs >/dev/null
  KUBECONFIG=$2 kubectl config set-context k --cluster=k --user=u >/dev/null
  KUBECONFIG=$2 kubectl config use-context k >/dev/null
}

make_pki() {
  pki=$state/pki
  mkdir -p "$pki"
  openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "$pki/ca.key" -subj "/CN=blobrace-k8s-ca" -days 2 -out "$pki/ca.crt" 2>/dev/null
  local client="basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
  cert apiserver "/CN=kube-apiserver" "basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,DNS:$node,IP:127.0.0.1,IP:$node_ip,IP:${service_cidr%.0/24}.1"
  cert admin "/O=system:masters/CN=blobrace-admin" "$client"
  cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "$client"
  cert controller-manager "/CN=system:kube-controller-manager" "$client"
  cert scheduler "/CN=system:kube-scheduler" "$client"
  cert kubelet "/O=system:nodes/CN=system:node:$node" "$client"
  cert kubelet-serving "/CN=$node" "basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:$node,IP:$node_ip"
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
  local n
  for n in admin controller-manager scheduler kubelet; do kubeconfig "$n" "$pki/$n.kubeconfig"; done
}

# --- processes ----------------------------------------------------------------------------

start() { # name, command...
  local name=$1
  shift
  setsid "$@" > "$state/logs/$name.log" 2>&1 < /dev/null &
  echo $! > "$run/$name.pid"
  disown
}

wait_for() { # what, seconds, command...
  local what=$1 limit=$2 t=0
  shift 2
  until "$@" >/dev/null 2>&1; do
    t=$((t + 1))
    [ $t -lt "$limit" ] || die "$what did not come up in ${limit} s (logs: $state/logs/)"
    sleep 1
  done
}

alive() { local p; p=$(cat "$run/$1.pid" 2>/dev/null) && kill -0 "$p" 2>/dev/null; }

sysctls="vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.conf.all.route_localnet net.netfilter.nf_conntrack_max"

up() {
  preflight
  build
  down quiet
  local up_started=$SECONDS
  node=$(hostname | tr 'A-Z' 'a-z')
  node_ip=$(ip -4 -o route get 1.1.1.1 2>/dev/null | sed -nE 's/.* src ([0-9.]+).*/\1/p')
  [ -n "$node_ip" ] || node_ip=$(ip -4 -o addr show scope global | awk '{print $4}' | cut -d/ -f1 | grep -v '^172\.17\.' | head -1)
  [ -n "$node_ip" ] || refuse "no IPv4 address for the node (ip -4 addr)"
  local port
  for port in 6443 $etcd_port $((etcd_port + 10)) 10250 10248 10257 10259; do
    ! ss -ltnH "sport = :$port" | grep -q . || refuse "port $port is already in use (ss -ltnp 'sport = :$port')"
  done
  mkdir -p "$state/logs" "$run"
  # What `down` restores and removes: the kernel settings the kubelet changes, and
  # whether the directories it and libcni create outside our own existed before.
  local s
  for s in $sysctls; do echo "$s=$(sysctl -n "$s")"; done > "$run/sysctls"
  for s in /var/log/containers /var/lib/cni; do [ -e "$s" ] || echo "$s"; done > "$run/new-dirs"
  ip netns list 2>/dev/null | awk '{print $1}' > "$run/netns-before"
  make_pki

  start etcd "$bin/etcd" --name blobrace-k8s --data-dir "$state/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$((etcd_port + 10))" --initial-advertise-peer-urls "http://127.0.0.1:$((etcd_port + 10))" \
    --initial-cluster "blobrace-k8s=http://127.0.0.1:$((etcd_port + 10))" --listen-metrics-urls "" --log-level warn
  wait_for etcd 30 bash -c "exec 3<>/dev/tcp/127.0.0.1/$etcd_port"

  start kube-apiserver "$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 0.0.0.0 --secure-port 6443 --advertise-address "$node_ip" --anonymous-auth=false \
    --client-ca-file "$pki/ca.crt" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$pki/ca.crt" --kubelet-preferred-address-types InternalIP \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local --service-cluster-ip-range "$service_cidr" \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction --profiling=false --v 1
  export KUBECONFIG=$pki/admin.kubeconfig
  wait_for kube-apiserver 120 kubectl get --raw /readyz

  start kube-controller-manager "$bin/kube-controller-manager" --kubeconfig "$pki/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$pki/controller-manager.kubeconfig" --authorization-kubeconfig "$pki/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials \
    --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
    --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" --profiling=false --v 1
  start kube-scheduler "$bin/kube-scheduler" --kubeconfig "$pki/scheduler.kubeconfig" \
    --authentication-kubeconfig "$pki/scheduler.kubeconfig" --authorization-kubeconfig "$pki/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --profiling=false --v 1

  # The kubelet's own containerd: not Docker's (its root, state, socket and runc root
  # are separate), the CRI plugin on, its sandbox image the pause image built here.
  mkdir -p "$state/cni/net.d" "$state/cni/ipam" "$state/containerd"
  local cap_eff restrict_oom=false
  cap_eff=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
  [ $(((0x$cap_eff >> 24) & 1)) = 1 ] || restrict_oom=true # CAP_SYS_RESOURCE
  cat > "$state/containerd.toml" <<EOF
version = 2
root = "$state/containerd"
state = "$run/containerd"
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/$pause_image"
  disable_apparmor = true
  # The kubelet asks -998 for a sandbox and -997 for a Guaranteed pod's containers,
  # which needs CAP_SYS_RESOURCE: where root lacks it (this project's VMs), runc fails
  # ("failed to update /proc/self/oom_score_adj: Permission denied"). Clamped to
  # containerd's own score instead.
  restrict_oom_score_adj = $restrict_oom
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$state/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "$run/runc"
        SystemdCgroup = false
EOF
  # The pod network: one bridge, made here so that CoreDNS can listen on its gateway
  # address before the first pod; pod-to-pod traffic let through Docker's FORWARD DROP
  # (bridged frames cross iptables where br_netfilter is loaded).
  ip link add "$bridge" type bridge
  ip addr add "$gateway/24" dev "$bridge"
  ip link set "$bridge" up
  iptables -I FORWARD 1 -i "$bridge" -m comment --comment blobrace-k8s -j ACCEPT
  iptables -I FORWARD 1 -o "$bridge" -m comment --comment blobrace-k8s -j ACCEPT
  cat > "$state/cni/net.d/10-blobrace-k8s.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "blobrace-k8s",
  "plugins": [
    {"type": "bridge", "bridge": "$bridge", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "$state/cni/ipam", "ranges": [[{"subnet": "$pod_cidr", "gateway": "$gateway"}]],
              "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "loopback"}
  ]
}
EOF
  start containerd containerd --config "$state/containerd.toml"
  wait_for containerd 30 ctr -a "$sock" version

  # The images, from Docker: the pause image first.
  load_image "$pause_image"

  cat > "$state/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $node_ip
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
cgroupDriver: cgroupfs
failCgroupV1: false
containerRuntimeEndpoint: unix://$sock
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: AlwaysAllow}
tlsCertFile: $pki/kubelet-serving.crt
tlsPrivateKeyFile: $pki/kubelet-serving.key
clusterDomain: cluster.local
clusterDNS: [$dns_ip]
resolvConf: /etc/resolv.conf
podLogsDir: $state/pod-logs
failSwapOn: false
# Imported images cannot be pulled again: never collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1Gi, imagefs.available: 1Gi, nodefs.inodesFree: 1%}
serializeImagePulls: false
EOF
  start kubelet "$bin/kubelet" --config "$state/kubelet.yaml" --kubeconfig "$pki/kubelet.kubeconfig" \
    --root-dir "$state/kubelet" --node-ip "$node_ip" --hostname-override "$node" --v 1
  local t=0
  until [ "$(kubectl get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]; do
    t=$((t + 1))
    alive kubelet || { tail -5 "$state/logs/kubelet.log" >&2; die "the kubelet exited (log: $state/logs/kubelet.log)"; }
    [ $t -lt 180 ] || { tail -5 "$state/logs/kubelet.log" >&2; die "node $node not Ready in 180 s (log: $state/logs/kubelet.log)"; }
    sleep 1
  done

  # kube-proxy, so that a Service's cluster IP leads somewhere: the `kubernetes`
  # Service (10.96.0.1:443, what a pod's KUBERNETES_SERVICE_HOST names) to the API
  # server on the node's address, which it listens on for that (0.0.0.0, client
  # certificates or tokens only). blobrace reads its servers' pods through it. Host
  # settings left as they are: no conntrack sizes or timeouts, no localhost NodePorts.
  start kube-proxy "$bin/kube-proxy" --kubeconfig "$pki/admin.kubeconfig" --hostname-override "$node" \
    --proxy-mode iptables --cluster-cidr "$pod_cidr" --conntrack-max-per-core 0 \
    --conntrack-tcp-timeout-established 0 --conntrack-tcp-timeout-close-wait 0 \
    --iptables-localhost-nodeports=false --metrics-bind-address 127.0.0.1:10249 \
    --healthz-bind-address 127.0.0.1:10256 --v 1
  wait_for kube-proxy 60 bash -c "iptables-save -t nat | grep -q 'default/kubernetes:https'"

  # CoreDNS on the host, on the bridge's gateway (the pods' nameserver): the cluster's
  # names only, nothing forwarded.
  cat > "$state/Corefile" <<EOF
.:53 {
    bind $dns_ip
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $pki/admin.kubeconfig
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 5
}
EOF
  start coredns "$bin/coredns" -conf "$state/Corefile"
  sleep 2
  alive coredns || { tail -5 "$state/logs/coredns.log" >&2; die "CoreDNS exited (log: $state/logs/coredns.log)"; }
  say "up in $((SECONDS - up_started)) s: Kubernetes $k8s_version, etcd $etcd_version, containerd $(containerd --version | awk '{print $3}'), node $node ($node_ip) Ready; KUBECONFIG=$KUBECONFIG"
}

load_image() {
  docker image inspect "$1" >/dev/null 2>&1 || refuse "image $1 is not in Docker"
  docker save "$1" | ctr -n k8s.io -a "$sock" images import - >/dev/null || die "importing $1 into the kubelet's containerd failed"
}

# --- down ---------------------------------------------------------------------------------

down() {
  local quiet=${1:-}
  [ -d "$run" ] || [ -d "$state" ] || ip link show "$bridge" >/dev/null 2>&1 || { [ -n "$quiet" ] || say "nothing to take down"; return 0; }
  [ "$quiet" != trap ] || quiet=
  [ -n "$quiet" ] || say "taking the cluster down"
  export KUBECONFIG=$state/pki/admin.kubeconfig
  local name p
  # No controller to make new pods, then the pods, through the kubelet (their
  # sandboxes' networks torn down by CNI), then the kubelet.
  for name in coredns kube-proxy kube-scheduler kube-controller-manager; do
    p=$(cat "$run/$name.pid" 2>/dev/null) && kill "$p" 2>/dev/null || true
  done
  if alive kubelet && alive kube-apiserver; then
    # Not waiting for the objects: the Job's pods keep a finalizer that only the
    # stopped controller removes. The kubelet stops their containers all the same.
    timeout 20 kubectl delete pods --all -n "$ns" --grace-period=1 --wait=false >/dev/null 2>&1 || true
    local t=0
    while [ -n "$(ctr -n k8s.io -a "$sock" tasks ls 2>/dev/null | awk 'NR > 1 && $3 == "RUNNING"')" ] && [ $t -lt 30 ]; do sleep 1; t=$((t + 1)); done
  fi
  p=$(cat "$run/kubelet.pid" 2>/dev/null) && kill "$p" 2>/dev/null || true
  sleep 1
  # Whatever containers are left: killed through the kubelet's containerd.
  if alive containerd; then
    local id
    for id in $(ctr -n k8s.io -a "$sock" tasks ls -q 2>/dev/null); do
      ctr -n k8s.io -a "$sock" tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
    done
    sleep 1
    for id in $(ctr -n k8s.io -a "$sock" tasks ls -q 2>/dev/null); do
      ctr -n k8s.io -a "$sock" tasks delete -f "$id" >/dev/null 2>&1 || true
    done
  fi
  # Shims whose containerd is gone (a kill -9 of this script's children).
  for p in $(pgrep -f "containerd-shim-runc-v2 -namespace k8s.io -id [0-9a-f]+ -address $sock" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
  for name in containerd kube-apiserver etcd; do
    p=$(cat "$run/$name.pid" 2>/dev/null) && kill "$p" 2>/dev/null || true
  done
  for name in coredns kube-proxy kube-scheduler kube-controller-manager kubelet containerd kube-apiserver etcd; do
    p=$(cat "$run/$name.pid" 2>/dev/null) || continue
    local t=0
    while kill -0 "$p" 2>/dev/null && [ $t -lt 20 ]; do sleep 0.5; t=$((t + 1)); done
    kill -9 "$p" 2>/dev/null || true
  done
  # Mounts (containers' root file systems, volumes, network namespaces), deepest first.
  local m
  findmnt -rn -o TARGET | grep -E "^($state|$run)(/|$)" | sort -r | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done || true
  # The pods' network namespaces (the CRI's cni-<uuid>), those made since `up`.
  for m in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^cni-'); do
    grep -qx "$m" "$run/netns-before" 2>/dev/null || ip netns delete "$m" 2>/dev/null || true
  done
  # The pod network.
  ip link show "$bridge" >/dev/null 2>&1 && ip link delete "$bridge"
  while iptables -D FORWARD -i "$bridge" -m comment --comment blobrace-k8s -j ACCEPT 2>/dev/null; do :; done
  while iptables -D FORWARD -o "$bridge" -m comment --comment blobrace-k8s -j ACCEPT 2>/dev/null; do :; done
  drop_chains iptables
  drop_chains ip6tables
  rm -rf /var/lib/cni/results/blobrace-k8s-* /var/lib/cni/networks/blobrace-k8s 2>/dev/null || true
  # The kubelet's cgroups (kubepods and its QoS and pod children), deepest first.
  local h
  for h in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
    [ -d "$h" ] && find "$h" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
  # What the kubelet changed or made outside our directories.
  if [ -f "$run/sysctls" ]; then
    while IFS== read -r k v; do sysctl -qw "$k=$v" 2>/dev/null || true; done < "$run/sysctls"
  fi
  find /var/log/containers -maxdepth 1 -lname "$state/*" -delete 2>/dev/null || true
  if [ -f "$run/new-dirs" ]; then
    while read -r d; do [ -n "$d" ] && rm -rf "$d"; done < "$run/new-dirs"
  fi
  rm -rf "$state" "$run"
  [ -n "$quiet" ] || say "down: $(leftovers)"
}

# Chains the kubelet and CNI plugins made (KUBE-*, CNI-*): the rules that jump to them,
# then the chains themselves.
drop_chains() {
  local ipt=$1 table rule chain
  command -v "$ipt" >/dev/null || return 0
  for table in filter nat mangle raw; do
    "$ipt" -t "$table" -S 2>/dev/null | grep -E -- '-j (KUBE|CNI)-' | grep '^-A' | sed 's/^-A/-D/' | while read -r rule; do
      eval "$ipt -t $table $rule" 2>/dev/null || true
    done || true
    for chain in $("$ipt" -t "$table" -S 2>/dev/null | sed -nE 's/^-N ((KUBE|CNI)-[^ ]+)$/\1/p'); do
      "$ipt" -t "$table" -F "$chain" 2>/dev/null || true
    done
    for chain in $("$ipt" -t "$table" -S 2>/dev/null | sed -nE 's/^-N ((KUBE|CNI)-[^ ]+)$/\1/p'); do
      "$ipt" -t "$table" -X "$chain" 2>/dev/null || true
    done
  done
}

# What is left: processes, mounts, listeners, links, chains; "nothing" when clean.
leftovers() {
  local left=()
  pgrep -f "$bin/|containerd --config $state|containerd-shim-runc-v2 .*-address $sock" >/dev/null && left+=("processes: $(pgrep -f "$bin/|containerd --config $state|-address $sock" | tr '\n' ' ')")
  findmnt -rn -o TARGET | grep -qE "^($state|$run)" && left+=("mounts")
  local port
  for port in 6443 $etcd_port $((etcd_port + 10)) 10250 10248 10257 10259 10249 10256 53; do
    ss -ltnH "sport = :$port" 2>/dev/null | grep -qE "127.0.0.1:$port|$dns_ip:$port|:10250 |(\*|0.0.0.0|\[::\]):6443 " && left+=("listening on $port")
  done
  ip link show "$bridge" >/dev/null 2>&1 && left+=("link $bridge")
  ip -o link show type veth 2>/dev/null | grep -q "master $bridge" && left+=("veths")
  iptables-save 2>/dev/null | grep -qE '(KUBE|CNI)-|blobrace-k8s' && left+=("iptables chains")
  ip netns list 2>/dev/null | grep -q '^cni-' && left+=("network namespaces")
  ls -d /sys/fs/cgroup/*/kubepods >/dev/null 2>&1 && left+=("kubepods cgroups")
  [ -e "$state" ] || [ -e "$run" ] || true
  if [ ${#left[@]} -eq 0 ]; then echo "nothing left running, mounted or listening"; else echo "LEFT: ${left[*]}"; return 1; fi
}

# --- the chart ----------------------------------------------------------------------------

# hostPath volumes for the chart's claims, each bound to its claim by name.
make_pvs() {
  local shares=$1 name=$release-blobrace claim size mode i
  {
    for claim in "$name-results:5Gi:ReadWriteMany"; do echo "$claim"; done
    for ((i = 0; i < shares; i++)); do
      echo "data-$name-postgres-$i:4Gi:ReadWriteOnce"
      echo "data-$name-mariadb-$i:4Gi:ReadWriteOnce"
      echo "data-$name-dolt-$i:4Gi:ReadWriteOnce"
      echo "data-$name-seaweedfs-$i:4Gi:ReadWriteOnce"
    done
  } | while IFS=: read -r claim size mode; do
    mkdir -p "$state/pv/$claim"
    cat <<EOF
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-$claim}
spec:
  capacity: {storage: $size}
  accessModes: [$mode]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  claimRef: {namespace: $ns, name: $claim}
  hostPath: {path: $state/pv/$claim, type: Directory}
EOF
    # The servers' claims made here, bound to their volumes before the chart's
    # StatefulSets start pods that mount them (they take claims of their names as
    # theirs). Left to the StatefulSets, a claim the scheduler met before it was
    # bound ("pod has unbound immediate PersistentVolumeClaims") kept its pod Pending
    # for the scheduler's 5 minutes of unschedulable pods (seen on 2026-12-05 with
    # 12 server claims).
    [ "$mode" = ReadWriteOnce ] || continue
    cat <<EOF
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $claim, namespace: $ns}
spec:
  accessModes: [$mode]
  storageClassName: ""
  volumeName: pv-$claim
  resources: {requests: {storage: $size}}
EOF
  done | kubectl apply -f - >/dev/null
  kubectl wait --for=jsonpath='{.status.phase}'=Bound pvc --all -n "$ns" --timeout=120s >/dev/null ||
    die "the servers' claims not bound to their volumes in 120 s"
}

pods_line() { kubectl get pods -n "$ns" -o jsonpath='{range .items[*]}{.metadata.name}={.status.phase} {end}' 2>/dev/null; }

# The cap a pod's container has, read inside it from its cgroup (v1 or v2).
read_cap() { # pod, container
  kubectl exec -n "$ns" "$1" -c "$2" -- sh -c '
    if [ -f /sys/fs/cgroup/memory.max ]; then echo "memory.max=$(cat /sys/fs/cgroup/memory.max) cpu.max=$(cat /sys/fs/cgroup/cpu.max)";
    else echo "memory.limit_in_bytes=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes) cpu.cfs_quota_us=$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) cpu.cfs_period_us=$(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"; fi' 2>/dev/null
}

# A list as one value of `helm --set` (which splits at commas).
helm_list() { echo "${1//,/\\,}"; }

run_chart() {
  # 3 shares x 5 pods (the runner, PostgreSQL, MariaDB, Dolt, SeaweedFS) at 0.12 CPUs
  # each: 1.8 of a 2-core node's CPUs, every pod Guaranteed.
  local shares=${K8SHOST_SHARES:-3} cap=${K8SHOST_CAP:-1Gi} cpus=${K8SHOST_CPUS:-0.12}
  local runner_image=${BLOBRACE_RUNNER_IMAGE:-blobrace/runner-offline:latest}
  local pg_image=${BLOBRACE_POSTGRES_IMAGE:-} maria_image=${BLOBRACE_MARIADB_IMAGE:-}
  local dolt_image=${BLOBRACE_DOLT_IMAGE:-} weed_image=${BLOBRACE_SEAWEEDFS_IMAGE:-}
  local limit=${K8SHOST_TIMEOUT:-3600}
  out=${K8SHOST_OUT:-${XDG_CACHE_HOME:-$HOME/.cache}/blobrace/k8s-runs/$(date -u +%Y%m%dT%H%M%SZ)}
  [ -n "$pg_image" ] || { docker image inspect postgres:17 >/dev/null 2>&1 && pg_image=postgres:17 || pg_image=blobrace/postgres-offline:15; }
  [ -n "$maria_image" ] || { docker image inspect mariadb:11.4 >/dev/null 2>&1 && maria_image=mariadb:11.4 || maria_image=blobrace/mariadb-offline:10.11; }
  [ -n "$dolt_image" ] || { docker image inspect dolthub/dolt-sql-server:1.32.4 >/dev/null 2>&1 && dolt_image=dolthub/dolt-sql-server:1.32.4 || dolt_image=blobrace/dolt-offline:0.40.4; }
  [ -n "$weed_image" ] || { docker image inspect chrislusf/seaweedfs:4.53 >/dev/null 2>&1 && weed_image=chrislusf/seaweedfs:4.53 || weed_image=blobrace/seaweedfs-offline:4.53; }
  local img
  for img in "$runner_image" "$pg_image" "$maria_image" "$dolt_image" "$weed_image"; do
    docker image inspect "$img" >/dev/null 2>&1 || refuse "image $img is not in Docker (scripts/offline-images.sh$([ "$img" = "$runner_image" ] && echo ' runner'))"
  done
  preflight
  build
  up
  local started=$SECONDS
  for img in "$runner_image" "$pg_image" "$maria_image" "$dolt_image" "$weed_image"; do load_image "$img"; done
  say "images loaded in $((SECONDS - started)) s: $runner_image $pg_image $maria_image $dolt_image $weed_image"
  make_pvs "$shares"
  mkdir -p "$out"
  local name=$release-blobrace
  "$helm_bin" install "$release" "$repo/deploy/helm/blobrace" -n "$ns" \
    --set shares="$shares" --set cap.memory="$cap" --set-string cap.cpus="$cpus" \
    --set runner.image="$runner_image" --set runner.dataSize=4Gi \
    --set postgres.image="$pg_image" --set postgres.storage=4Gi \
    --set mariadb.image="$maria_image" --set mariadb.storage=4Gi \
    --set dolt.image="$dolt_image" --set dolt.storage=4Gi \
    --set seaweedfs.image="$weed_image" --set seaweedfs.storage=4Gi \
    --set-string run.profile="${K8SHOST_PROFILE:-quick}" \
    --set-string run.engines="$(helm_list "${K8SHOST_ENGINES:-floor,sqlite,fs,postgres,mariadb,dolt,seaweedfs}")" \
    --set-string run.sizes="$(helm_list "${K8SHOST_SIZES:-4KiB,64KiB,1MiB}")" \
    --set-string run.datasetBytes="${K8SHOST_DATASET_BYTES:-32MiB}" > "$out/helm-install.txt" || die "helm install failed"
  say "helm install $release (shares=$shares, cap $cap / $cpus CPUs); following job/$name-runner"
  local job_started=$SECONDS last="" capped=" " pod conditions
  while :; do
    conditions=$(kubectl get job "$name-runner" -n "$ns" -o jsonpath='{.status.conditions[?(@.status=="True")].type}' 2>/dev/null || true)
    case " $conditions " in *" Complete "*) break ;; *" Failed "*) kubectl describe job "$name-runner" -n "$ns" > "$out/runner-job.txt"; collect; die "job/$name-runner failed (pods: $(pods_line))" ;; esac
    [ $((SECONDS - job_started)) -lt "$limit" ] || { collect; die "job/$name-runner not complete in $limit s (pods: $(pods_line))"; }
    # Each measuring pod's cap, read inside it once it runs.
    for pod in $(kubectl get pods -n "$ns" --field-selector=status.phase=Running -o jsonpath='{range .items[*]}{.metadata.name}{" "}{end}' 2>/dev/null); do
      case "$capped" in *" $pod "*) continue ;; esac
      case $pod in *-merge-*) continue ;; esac
      local c=runner
      case $pod in *-postgres-*) c=postgres ;; *-mariadb-*) c=mariadb ;; *-dolt-*) c=dolt ;; *-seaweedfs-*) c=seaweedfs ;; esac
      local got
      got=$(read_cap "$pod" "$c") && [ -n "$got" ] && { echo "$pod $c: $got" >> "$out/caps.txt"; capped="$capped$pod "; }
    done
    local line
    line=$(pods_line)
    [ "$line" = "$last" ] || { say "$((SECONDS - job_started)) s: $line"; last=$line; }
    sleep 5
  done
  local job_s=$((SECONDS - job_started))
  say "job/$name-runner complete in $job_s s"
  if [ "$shares" -gt 1 ]; then
    kubectl wait --for=condition=complete "job/$name-merge" -n "$ns" --timeout=600s >/dev/null || { collect; die "job/$name-merge did not complete"; }
    say "job/$name-merge complete"
  fi
  collect
  check "$shares" "$cap" "$cpus" "$job_s"
}

# Logs, events, pods, and the results claim's files, into $out.
collect() {
  [ -n "${out:-}" ] || return 0
  kubectl get pods -n "$ns" -o wide > "$out/pods.txt" 2>&1 || true
  kubectl get pods -n "$ns" -o json > "$out/pods.json" 2>/dev/null || true
  kubectl get events -n "$ns" --sort-by=.lastTimestamp > "$out/events.txt" 2>&1 || true
  local pod
  for pod in $(kubectl get pods -n "$ns" -o jsonpath='{range .items[*]}{.metadata.name}{" "}{end}' 2>/dev/null); do
    kubectl logs -n "$ns" "$pod" --all-containers --prefix > "$out/log-$pod.txt" 2>&1 || true
  done
  cp -a "$state/pv/$release-blobrace-results" "$out/results" || say "no results claim to copy ($state/pv/$release-blobrace-results)"
  cp -a "$state/logs" "$out/cluster-logs" 2>/dev/null || true
}

check() {
  local shares=$1 cap=$2 cpus=$3 job_s=$4
  python3 - "$out" "$shares" "$cap" "$cpus" "$job_s" "${K8SHOST_ENGINES:-floor,sqlite,fs,postgres,mariadb,dolt,seaweedfs}" <<'PY' || die "the run's checks failed (files: $out)"
import glob, json, os, sys
out, shares, cap, cpus, job_s = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), sys.argv[5]
engines = set(sys.argv[6].split(","))
pods = json.load(open(os.path.join(out, "pods.json")))["items"]
unscheduled = [p["metadata"]["name"] for p in pods if not p["spec"].get("nodeName")]
assert not unscheduled, f"pods never scheduled: {unscheduled}"
runners = [p for p in pods if p["metadata"]["labels"].get("app.kubernetes.io/component") == "runner"]
assert len(runners) >= shares, f"{len(runners)} runner pods for {shares} shares"
res = os.path.join(out, "results")
share_cells = 0
for i in range(shares):
    runs = sorted(glob.glob(f"{res}/share-{i}/2*/results.json"))
    assert runs, f"share {i}: no run under share-{i}/"
    run = json.load(open(runs[-1]))
    assert run["complete"] and not run["failures"], (i, run["failures"])
    assert run["results"], f"share {i}: no results"
    mem = {r["cap"]["memory_limit_bytes"] for r in run["results"] if r.get("cap")}
    # Every server's cap read from its pod through the API, not "not controlled": the
    # pod's limit, and the regime judged against it.
    want = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}[cap[-2:]] * int(cap[:-2])
    served = [r for r in run["results"] if r.get("remote")]
    colds = []
    assert {r["engine"] for r in served} >= {"postgres", "mariadb", "dolt", "seaweedfs"} & engines, sorted({r["engine"] for r in served})
    for r in served:
        c = r.get("cap") or {}
        assert c.get("method") == "kubernetes-pod" and c.get("memory_limit_bytes") == want and abs(c.get("cpu_limit", 0) - cpus) < 1e-9, (i, r["engine"], c)
        assert r["regime"]["basis"] == "cap", (i, r["engine"], r["regime"])
        # A cold start: the pod restarted through the API, its data volume's files
        # dropped from the page cache by its init container before the server started.
        if r["cache"] == "cold":
            e = r["eviction"]
            assert "deleted through the Kubernetes API" in e["method"] and e["files"] > 0 and e["bytes"] > 0, (i, r["engine"], e)
            colds.append(f"{r['engine']} {e['files']} files {e['bytes'] >> 20} MiB in {e['seconds']:.0f} s")
    pods_read = sorted({r["cap"]["cgroup"] for r in served})
    share_cells += len(run["results"])
    # run.verify: the pod read its share's datasets back after the run.
    pod = next(p["metadata"]["name"] for p in runners
               if p["metadata"]["annotations"].get("batch.kubernetes.io/job-completion-index") == str(i)
               and p["status"].get("phase") == "Succeeded")
    log = open(os.path.join(out, f"log-{pod}.txt")).read()
    verified = [l for l in log.splitlines() if "ok  " in l]
    assert "verifying share" in log and verified, f"share {i}: no dataset verified in {pod}'s log"
    print(f"k8s-host: share {i + 1}/{shares}: {len(verified)} datasets verified byte for byte in its pod")
    print(f"k8s-host: share {i + 1}/{shares}: {len(run['results'])} results, sizes {sorted({r['size'] for r in run['results']})}, memory caps {sorted(mem)}")
    print(f"k8s-host: share {i + 1}/{shares}: servers' caps read through the API from {pods_read}")
    print(f"k8s-host: share {i + 1}/{shares}: cold starts through the API: {'; '.join(colds) or 'none (no cold cells)'}")
merged = [p for p in glob.glob(f"{res}/2*/results.json")]
if shares > 1:
    assert len(merged) == 1, f"merged runs: {merged}"
    m = json.load(open(merged[0]))
    assert len(m["results"]) == share_cells, (len(m["results"]), share_cells)
    print(f"k8s-host: merged run {os.path.basename(os.path.dirname(merged[0]))}: {len(m['results'])} results from {shares} shares; files {sorted(os.listdir(os.path.dirname(merged[0])))}")
print(f"k8s-host: pods {len(pods)} scheduled; runner job {job_s} s")
PY
  [ -f "$out/caps.txt" ] && sed 's/^/k8s-host: cap read inside /' "$out/caps.txt"
  say "results and logs in $out"
}

# --- main ---------------------------------------------------------------------------------

cmd=${1:-run}
case $cmd in
  build) preflight; build; say "binaries in $bin: $(ls "$bin" | tr '\n' ' ')" ;;
  up) trap 'down' INT TERM; up ;;
  down) down ;;
  run)
    trap 'rc=$?; trap - EXIT INT TERM; down trap; exit $rc' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    run_chart
    ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
  *) echo "usage: scripts/k8s-host.sh [run|build|up|down]" >&2; exit 2 ;;
esac
