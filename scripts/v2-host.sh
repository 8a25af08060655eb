#!/usr/bin/env bash
# Prove blobrace's cgroup v2 cap paths on a real cgroup v2 kernel, inside a VM.
#
# Why: blobrace caps its own process (src/cap/): a v1 child cgroup as root, a v2 leaf as
# root (v2.rs), or, as a normal user on v2, a re-run under
# `systemd-run --user --scope -p MemoryMax=...` (systemd.rs). The project's machines are
# cgroup v1, so the v2 paths were only unit-tested on fake cgroup trees. This script boots
# a small Debian bookworm VM (systemd 252, Linux 6.1, unified hierarchy) and runs a tiny
# capped `blobrace measure` there:
#   root        as root, from a system service (the v2 leaf path);
#   root-reload the same, measuring 15 s under a disk cap too (--disk-cap
#               riops=400,rbps=40MiB), while the guest starts a unit in system.slice and
#               runs `systemctl daemon-reload`: the cgroup's memory.max, cpu.max and io.max
#               must survive systemd re-applying the controllers of the slice it sits in;
#   user        as the normal user `bench` (lingering, so its systemd user manager runs),
#               through `runuser -u bench` with XDG_RUNTIME_DIR and DBUS_SESSION_BUS_ADDRESS
#               set (the systemd-run --user --scope path);
#   user-login  the same user through a PAM login session (`runuser -l`, pam_systemd: the
#               process sits in a session-N.scope, as in an ssh login).
# Each run's results.json must record the cap asked for (memory bytes and CPUs, read back
# from the kernel by blobrace), and the guest also reads the cap of the running process's
# cgroup from the kernel itself while it measures. A refusal is not a pass: the point is
# that these paths work (exit 2 says "refused", exit 1 "wrong cap or broken run").
#
# The image (debootstrap, root ext4 image, kernel and initrd) is cached under
# ${XDG_CACHE_HOME:-$HOME/.cache}/blobrace/v2-host/img-<sha256 of the recipe>/ and rebuilt
# only when the recipe (build_image and its package list) changes. Each boot uses a
# copy-on-write snapshot of it. The binary and the guest script travel on a second small
# ext4 disk; the outcome comes back on the serial console (lines starting "V2HOST:").
# No networking, no loop mounts. Building the image needs root (debootstrap); booting
# needs qemu-system-x86_64 and, for speed, /dev/kvm (else TCG, slower).
#
#   scripts/v2-host.sh [--bin PATH] [--rebuild] [--tcg] [--timeout SECONDS] [--keep]
#
# See docs/v2-host.md.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  cat <<'EOF'
Usage: scripts/v2-host.sh [options] [BINARY]

Boot a Debian bookworm VM (cgroup v2, systemd) and check that blobrace caps itself there:
as root (v2 leaf) and as a normal user (systemd-run --user --scope), each run's
results.json recording the cap asked for.

  BINARY / --bin PATH   blobrace binary to test (env BLOBRACE_BIN; default
                        target/release/blobrace of this repository)
  --rebuild             rebuild the cached image even if its recipe is unchanged
  --tcg                 do not try KVM (software emulation; several times slower)
  --timeout SECONDS     limit on the whole VM run (default 300 with KVM, 900 with TCG;
                        env V2HOST_TIMEOUT)
  --keep                keep the run directory (serial log, disks) even on success
  --no-reload-check     report the root-reload check but do not fail on it
  -h, --help            this text

Environment: XDG_CACHE_HOME (cache root), V2HOST_MIRROR (Debian mirror, default
http://deb.debian.org/debian), V2HOST_CAP (default 256MiB), V2HOST_CPUS (default 1).

Exit status: 0 every run recorded the cap asked for; 1 a wrong cap, a broken run, a boot
that failed or timed out; 2 blobrace refused (cleanly) to run under the cap.
EOF
}

bin=${BLOBRACE_BIN:-${CARGO_TARGET_DIR:-$repo/target}/release/blobrace}
rebuild=0
force_tcg=0
keep=0
reload_gate=1
timeout_s=${V2HOST_TIMEOUT:-}
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --bin) bin=$2; shift 2 ;;
    --rebuild) rebuild=1; shift ;;
    --tcg) force_tcg=1; shift ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --no-reload-check) reload_gate=0; shift ;;
    -*) echo "v2-host: unknown option $1 (see --help)" >&2; exit 1 ;;
    *) bin=$1; shift ;;
  esac
done

say() { echo "v2-host: $*" >&2; }
t_script=$(date +%s.%N)
die() { echo "v2-host: FAIL: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

[ -x "$bin" ] || die "no blobrace binary at $bin (build it with cargo build --release, or pass --bin)"
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
command -v mkfs.ext4 >/dev/null || die "mkfs.ext4 missing (apt-get install e2fsprogs)"

cap=${V2HOST_CAP:-256MiB}
cpus=${V2HOST_CPUS:-1}
mirror=${V2HOST_MIRROR:-http://deb.debian.org/debian}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/blobrace/v2-host
mkdir -p "$cache"

# ---------------------------------------------------------------------------------------
# The image recipe. Everything that shapes the image is in build_image and the variables
# it reads (suite, packages); their text is hashed into the cache key.
suite=bookworm
packages=linux-image-amd64,systemd,systemd-sysv,dbus,dbus-user-session,libpam-systemd,udev,kmod,procps,jq,e2fsprogs

# build_image OUT_DIR: OUT_DIR/{root.ext4,vmlinuz,initrd.img}
build_image() {
  local out=$1 work=$1/tree
  command -v debootstrap >/dev/null || [ -x /usr/sbin/debootstrap ] ||
    die "debootstrap missing (apt-get install debootstrap)"
  [ "$(id -u)" = 0 ] || die "building the image needs root (debootstrap); the boot itself does not"
  mkdir -p "$cache/debs"
  PATH=$PATH:/usr/sbin:/sbin debootstrap --variant=minbase --include="$packages" \
    --cache-dir="$cache/debs" "$suite" "$work" "$mirror" >"$out/debootstrap.log" 2>&1 ||
    { tail -20 "$out/debootstrap.log" >&2; die "debootstrap failed (log: $out/debootstrap.log)"; }

  echo v2host >"$work/etc/hostname"
  printf '/dev/vda / ext4 rw,errors=remount-ro 0 1\n' >"$work/etc/fstab"
  : >"$work/etc/machine-id" # generated at each boot
  chroot "$work" useradd --create-home --uid 1000 --shell /bin/bash bench
  # Lingering: bench's user manager (user@1000.service) starts at boot.
  mkdir -p "$work/var/lib/systemd/linger"
  touch "$work/var/lib/systemd/linger/bench"
  # The serial console is the guest script's; no getty on it.
  ln -sf /dev/null "$work/etc/systemd/system/serial-getty@ttyS0.service"
  ln -sf /dev/null "$work/etc/systemd/system/getty@tty1.service"
  for unit in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer; do
    ln -sf /dev/null "$work/etc/systemd/system/$unit"
  done
  cat >"$work/usr/local/sbin/v2host-boot" <<'EOF'
#!/bin/sh
# Mount the payload disk (the binary and guest.sh, made per run by the host), run it,
# power off whatever happened.
mkdir -p /payload
if mount -t ext4 /dev/vdb /payload; then
  /bin/bash /payload/guest.sh
else
  echo "V2HOST: FAIL no payload disk at /dev/vdb"
fi
echo "V2HOST: guest-done"
sync
systemctl poweroff --no-block
EOF
  chmod 755 "$work/usr/local/sbin/v2host-boot"
  cat >"$work/etc/systemd/system/v2host.service" <<'EOF'
[Unit]
Description=blobrace cgroup v2 check (payload on /dev/vdb)
After=multi-user.target systemd-user-sessions.service

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/v2host-boot
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
EOF
  ln -sf /etc/systemd/system/v2host.service \
    "$work/etc/systemd/system/multi-user.target.wants/v2host.service"
  rm -rf "$work"/var/cache/apt/archives/*.deb "$work"/var/lib/apt/lists/*

  cp "$(ls "$work"/boot/vmlinuz-* | sort -V | tail -1)" "$out/vmlinuz"
  cp "$(ls "$work"/boot/initrd.img-* | sort -V | tail -1)" "$out/initrd.img"
  local mb
  mb=$(du -sm "$work" | cut -f1)
  # Room for the guest's datasets (a few MiB) and the journal.
  mkfs.ext4 -q -L v2root -E root_owner=0:0 -d "$work" "$out/root.ext4" "$((mb + 768))M" \
    >"$out/mkfs.log" 2>&1 || { cat "$out/mkfs.log" >&2; die "mkfs.ext4 -d failed"; }
  rm -rf "$work"
}

recipe_key=$(printf '%s\n' "$suite" "$packages" "$(declare -f build_image)" | sha256sum | cut -c1-16)
img=$cache/img-$recipe_key

exec 9>"$cache/lock"
flock 9
if [ "$rebuild" = 1 ] || [ ! -f "$img/root.ext4" ]; then
  say "building the image (recipe $recipe_key) in $img: debootstrap $suite from $mirror"
  t0=$(now)
  rm -rf "$img" "$img.tmp"
  mkdir -p "$img.tmp"
  build_image "$img.tmp"
  build_s=$(since "$t0")
  echo "$build_s" >"$img.tmp/build-seconds"
  mv "$img.tmp" "$img"
  # Older recipes' images are of no further use.
  for old in "$cache"/img-*; do
    [ "$old" = "$img" ] || rm -rf "$old"
  done
  rm -f "$cache"/kvm-probe-*
  say "image built in ${build_s}s ($(du -sh "$img/root.ext4" | cut -f1) on disk)"
else
  say "cached image $img (recipe $recipe_key, built in $(cat "$img/build-seconds" 2>/dev/null || echo '?')s)"
fi
flock -u 9

# ---------------------------------------------------------------------------------------
# The run: a payload disk with the binary and the guest script, then the boot.
run=$(mktemp -d "${TMPDIR:-/tmp}/blobrace-v2-host.XXXXXX")
mkdir "$run/payload"
chmod 755 "$run/payload" # the payload's root dir: bench must reach the binary
cp "$bin" "$run/payload/blobrace"
chmod 755 "$run/payload/blobrace"
cap_bytes=$(numfmt --from=iec-i "${cap%B}") || die "cannot read the cap $cap (e.g. 256MiB)"
cat >"$run/payload/params" <<EOF
CAP=$cap
CAP_BYTES=$cap_bytes
CPUS=$cpus
EOF
cat >"$run/payload/guest.sh" <<'GUEST'
# Runs in the guest as root at boot (v2host.service). Every outcome is a "V2HOST:" line.
. /payload/params
B=/payload/blobrace
m() { echo "V2HOST: $*"; }
m "guest-start uptime=$(cut -d' ' -f1 /proc/uptime)s"
m "kernel $(uname -r)"
m "cgroupfs $(stat -fc %T /sys/fs/cgroup)"
m "systemd $(systemctl --version | head -1)"
m "root subtree_control: $(cat /sys/fs/cgroup/cgroup.subtree_control)"
m "system.slice subtree_control: $(cat /sys/fs/cgroup/system.slice/cgroup.subtree_control)"
m "this service's cgroup: $(sed -n 's/^0:://p' /proc/self/cgroup)"
want_mem=$CAP_BYTES
m "asked: --cap $CAP (= $want_mem bytes) --cpus $CPUS"

# While blobrace measures, read the cap of its cgroup from the kernel ourselves.
watch_cap() { # OUTFILE: "cgroup memory.max cpu.max" of the running blobrace, last seen
  local pid cg
  : >"$1"
  for _ in $(seq 1 300); do
    pid=$(pgrep -n -x blobrace) || true
    if [ -n "$pid" ]; then
      cg=$(sed -n 's/^0:://p' "/proc/$pid/cgroup" 2>/dev/null) || true
      # Only a whole sample of a capped cgroup: not the one it starts in or moves back
      # to, nor a scope being torn down under the reader.
      local mem cpu
      mem=$(cat "/sys/fs/cgroup$cg/memory.max" 2>/dev/null) || true
      cpu=$(cat "/sys/fs/cgroup$cg/cpu.max" 2>/dev/null | tr ' ' /) || true
      if [[ -n $cg && $mem =~ ^[0-9]+$ && -n $cpu ]]; then
        echo "$cg $mem $cpu" >"$1"
      fi
    fi
    [ -e "$1.stop" ] && break
    sleep 0.05
  done
}

verdicts=()
# check NAME DIR RC: judge the run from its results.json (or its refusal).
check() {
  local name=$1 dir=$2 rc=$3 json mem cpu method origin
  json=$(ls -t "$dir"/results/*/results.json 2>/dev/null | head -1)
  local seen
  seen=$(cat "$dir/kernel-view" 2>/dev/null)
  m "run=$name exit=$rc kernel-view(cgroup memory.max cpu.max)=${seen:-not observed}"
  if [ -z "$json" ]; then
    if grep -q "cannot run under the requested" "$dir/out.log"; then
      m "run=$name refusal: $(grep -m1 'cannot run under the requested' "$dir/out.log")"
      m "verdict run=$name REFUSED"
      verdicts+=("$name=REFUSED")
    else
      m "run=$name no results.json; last output:"
      tail -15 "$dir/out.log" | sed "s/^/V2HOST:   [$name] /"
      m "verdict run=$name FAIL"
      verdicts+=("$name=FAIL")
    fi
    return
  fi
  m "run=$name cap $(jq -c '.cap | {method, origin, memory_limit_bytes, cpu_limit, cgroup_version, cgroup, requested, notes}' "$json")"
  # A disk cap asked must be in force as asked, read back by blobrace from io.max.
  if [ "$(jq -r '.cap.disk != null' "$json")" = true ]; then
    m "run=$name disk $(jq -c '.cap.disk | {method, device, cgroup, in_force, asked: .asked.limits, notes}' "$json")"
    if [ "$(jq -r '.cap.disk.in_force == .cap.disk.asked.limits' "$json")" != true ]; then
      m "verdict run=$name FAIL: disk cap in force $(jq -c .cap.disk.in_force "$json"), asked $(jq -c .cap.disk.asked.limits "$json")"
      verdicts+=("$name=FAIL")
      return
    fi
  fi
  mem=$(jq -r '.cap.memory_limit_bytes' "$json")
  cpu=$(jq -r '.cap.cpu_limit' "$json")
  method=$(jq -r '.cap.method' "$json")
  origin=$(jq -r '.cap.origin' "$json")
  local ok=1 why=""
  [ "$mem" = "$want_mem" ] || { ok=0; why+=" memory $mem != $want_mem;"; }
  awk -v a="$cpu" -v b="$CPUS" 'BEGIN { exit !(a != "null" && (a - b < 1e-6) && (b - a < 1e-6)) }' ||
    { ok=0; why+=" cpus $cpu != $CPUS;"; }
  [ "$rc" = 0 ] || { ok=0; why+=" exit status $rc;"; }
  if [ -n "$seen" ]; then
    local kmem kcpu
    kmem=$(echo "$seen" | cut -d' ' -f2)
    kcpu=$(echo "$seen" | cut -d' ' -f3)
    [ "$kmem" = "$want_mem" ] || { ok=0; why+=" kernel memory.max $kmem != $want_mem;"; }
    [ "$kcpu" = "$(awk -v c="$CPUS" 'BEGIN { printf "%d", c * 100000 }')/100000" ] ||
      { ok=0; why+=" kernel cpu.max $kcpu;"; }
  fi
  if [ "$ok" = 1 ]; then
    m "verdict run=$name PASS cap recorded as asked: memory_limit_bytes=$mem cpu_limit=$cpu method=$method origin=$origin"
    verdicts+=("$name=PASS")
  else
    m "verdict run=$name FAIL:$why (method=$method origin=$origin)"
    verdicts+=("$name=FAIL")
  fi
}

# measure NAME DIR CMD...: a tiny capped floor measurement, then check.
measure() {
  local name=$1 dir=$2
  shift 2
  m "run=$name start: $*"
  rm -f "$dir/kernel-view.stop"
  watch_cap "$dir/kernel-view" &
  local wpid=$! rc=0
  "$@" >"$dir/out.log" 2>&1 || rc=$?
  touch "$dir/kernel-view.stop"
  wait "$wpid" 2>/dev/null || true
  sed "s/^/V2HOST:   [$name] /" "$dir/out.log" | grep -v '^V2HOST:   \[[a-z-]*\] *$' | head -40
  check "$name" "$dir" "$rc"
}

args=(measure --engines floor --sizes 64KiB --dataset-bytes 16MiB --warmup 200ms --measure 1s
  --disk-probe 0s --first-bytes 0s --clients 1 --cache cold --saturate-sizes none
  --cap "$CAP" --cpus "$CPUS")

# (a) root, from this system service: the v2 leaf path.
mkdir -p /var/tmp/v2/root
measure root /var/tmp/v2/root env -C /var/tmp/v2/root "$B" "${args[@]}" \
  --data-dir /var/tmp/v2/root/data --results-dir /var/tmp/v2/root/results
m "system.slice subtree_control after the root run: $(cat /sys/fs/cgroup/system.slice/cgroup.subtree_control)"

# (a2) root again, while systemd re-applies system.slice's controllers (as it does when a
# unit under it starts, or on daemon-reload): the leaf blobrace made there is not
# systemd's, so does its cap survive?
d=/var/tmp/v2/root-reload
mkdir -p "$d"
poke() {
  local leaf="" pid="" state0 state1 state2 p cg
  # The blobrace process once it sits in a capped cgroup (whichever way it got there).
  for _ in $(seq 1 400); do
    for p in $(pgrep -x blobrace); do
      cg=$(sed -n 's/^0:://p' "/proc/$p/cgroup" 2>/dev/null) || continue
      if [[ $(cat "/sys/fs/cgroup$cg/memory.max" 2>/dev/null) =~ ^[0-9]+$ ]]; then
        pid=$p leaf=/sys/fs/cgroup$cg
      fi
    done
    [ -n "$pid" ] && break
    sleep 0.05
  done
  [ -n "$pid" ] || {
    m "verdict run=root-reload FAIL no blobrace process in a capped cgroup was seen"
    return
  }
  # "memory.max cpu.max io.max, pid in the leaf?" of the leaf, now.
  state() {
    echo "memory.max=$(cat "$leaf/memory.max" 2>/dev/null || echo absent)" \
      "cpu.max=$(cat "$leaf/cpu.max" 2>/dev/null | tr ' ' / || true)" \
      "io.max=$(cat "$leaf/io.max" 2>/dev/null | tr ' \n' '/;' || echo absent)" \
      "pid $pid $(grep -qx "$pid" "$leaf/cgroup.procs" 2>/dev/null && echo in-leaf || echo gone)"
  }
  state0=$(state)
  systemd-run --quiet --wait --unit=v2host-poke true
  state1=$(state)
  systemctl daemon-reload
  state2=$(state)
  m "run=root-reload leaf $leaf: before [$state0]; after a unit start in system.slice [$state1]; after a daemon-reload [$state2]; system.slice subtree_control now: $(cat /sys/fs/cgroup/system.slice/cgroup.subtree_control)"
  if [[ $state0 != *rbps=41943040/* || $state0 != *riops=400/* ]]; then
    m "verdict run=root-reload FAIL the disk cap was not in io.max: [$state0]"
  elif [[ $state2 == *in-leaf* && $state0 == "$state2" ]]; then
    m "verdict run=root-reload PASS the leaf kept its cap while blobrace ran: $state2"
  elif [[ $state2 != *in-leaf* ]]; then
    m "verdict run=root-reload UNDECIDED blobrace left the leaf before the checks ended"
  else
    m "verdict run=root-reload FAIL the leaf lost its cap while blobrace ran: [$state0] became [$state2]"
  fi
}
poke &
poke_pid=$!
measure root-reload-measure "$d" env -C "$d" "$B" "${args[@]/1s/15s}" \
  --disk-cap riops=400,rbps=40MiB --data-dir "$d/data" --results-dir "$d/results"
wait "$poke_pid"

# (b) the normal user bench: systemd-run --user --scope.
uid=$(id -u bench)
loginctl enable-linger bench
for _ in $(seq 1 240); do
  systemctl is-active --quiet "user@$uid.service" && [ -S "/run/user/$uid/bus" ] && break
  sleep 0.25
done
m "user@$uid.service: $(systemctl is-active "user@$uid.service"); bus: $(ls /run/user/$uid/bus 2>&1)"
m "user@$uid.service DelegateControllers: $(systemctl show -p DelegateControllers --value "user@$uid.service")"
m "user@$uid.service subtree_control: $(cat "/sys/fs/cgroup/user.slice/user-$uid.slice/user@$uid.service/cgroup.subtree_control" 2>&1)"
d=/home/bench/v2-user
runuser -u bench -- mkdir -p "$d"
measure user "$d" runuser -u bench -- env -C "$d" HOME=/home/bench USER=bench \
  XDG_RUNTIME_DIR=/run/user/$uid DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/$uid/bus \
  "$B" "${args[@]}" --data-dir "$d/data" --results-dir "$d/results"

# (c) the same user through a PAM login session (pam_systemd: a session-N.scope).
d=/home/bench/v2-login
runuser -u bench -- mkdir -p "$d"
printf '%q ' "$B" "${args[@]}" --data-dir "$d/data" --results-dir "$d/results" >/tmp/login-cmd
chmod 644 /tmp/login-cmd
measure user-login "$d" runuser -l bench -c "cd $d && echo \"session cgroup: \$(sed -n 's/^0:://p' /proc/self/cgroup) XDG_RUNTIME_DIR=\$XDG_RUNTIME_DIR DBUS_SESSION_BUS_ADDRESS=\$DBUS_SESSION_BUS_ADDRESS\" && . /tmp/login-cmd"

m "leftover blobrace cgroups: $(find /sys/fs/cgroup -type d -name 'blobrace-*' 2>/dev/null | tr '\n' ' ')"
m "summary ${verdicts[*]}"
GUEST

payload_mb=$(($(du -sm "$run/payload" | cut -f1) + 32))
mkfs.ext4 -q -L v2payload -E root_owner=0:0 -d "$run/payload" "$run/payload.ext4" "${payload_mb}M" \
  >"$run/mkfs.log" 2>&1 || { cat "$run/mkfs.log" >&2; die "mkfs.ext4 -d of the payload failed"; }

# KVM where it runs this kernel. Nested KVM may refuse -cpu host's IA32_ARCH_CAPABILITIES
# MSR ("failed to set MSR 0x10a"), or start and never run the guest (a Firecracker VM's
# /dev/kvm: KVM_CREATE_VM works, the guest hangs before its first line). So the probe is
# a real boot of the kernel with no root disk, which must print and panic within 20 s;
# else software emulation (TCG). The verdict is cached per host kernel and qemu.
kvm_works() { # CPU
  local plog=$run/kvm-probe.log
  : >"$plog"
  # (A subshell: qemu aborting on the MSR must not print the shell's "Aborted" line.)
  (timeout 20 qemu-system-x86_64 -accel kvm -cpu "$1" -m 256 -nographic -monitor none \
    -serial "file:$plog" -no-reboot -kernel "$img/vmlinuz" \
    -append "console=ttyS0 panic=-1 root=/dev/nonexistent" </dev/null >/dev/null 2>&1
    exit 0) 2>/dev/null
  grep -aq 'Linux version' "$plog"
}
accel=(-accel tcg,thread=multi -cpu max)
if [ "$force_tcg" = 0 ] && [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
  probe_file=$cache/kvm-probe-$(printf '%s\n' "$(uname -r)" "$(qemu-system-x86_64 --version | head -1)" "$recipe_key" | sha256sum | cut -c1-12)
  if [ -f "$probe_file" ]; then
    kvm_cpu=$(cat "$probe_file")
  else
    say "probing KVM (a 20 s boot at most)"
    kvm_cpu=none
    for cpu in host host,-arch-capabilities; do
      if kvm_works "$cpu"; then kvm_cpu=$cpu; break; fi
    done
    echo "$kvm_cpu" >"$probe_file"
  fi
  if [ "$kvm_cpu" = none ]; then
    say "KVM does not run the guest here (/dev/kvm opens, the guest never prints): TCG (cached in $probe_file)"
  else
    accel=(-accel kvm -cpu "$kvm_cpu")
  fi
fi
if [ -z "$timeout_s" ]; then
  case ${accel[1]} in kvm) timeout_s=300 ;; *) timeout_s=900 ;; esac
fi

log=$run/serial.log
boot() {
  say "booting ($*, 2 vCPUs, 2 GiB; serial log $log; limit ${timeout_s}s)"
  : >"$log"
  t0=$(now)
  timeout --kill-after=10 "$timeout_s" qemu-system-x86_64 "$@" -smp 2 -m 2048 \
    -nographic -monitor none -serial "file:$log" -no-reboot \
    -kernel "$img/vmlinuz" -initrd "$img/initrd.img" \
    -append "console=ttyS0 root=/dev/vda rw systemd.unified_cgroup_hierarchy=1 panic=-1 loglevel=4" \
    -drive "file=$img/root.ext4,format=raw,if=virtio,snapshot=on" \
    -drive "file=$run/payload.ext4,format=raw,if=virtio" \
    </dev/null >"$run/qemu.out" 2>&1 &
  local qpid=$! shown=0 line
  boot_s=""
  while kill -0 "$qpid" 2>/dev/null; do
    if [ -z "$boot_s" ] && grep -q 'V2HOST: guest-start' "$log"; then
      boot_s=$(since "$t0")
      say "guest script started ${boot_s}s after qemu started"
    fi
    # Follow the verdicts as they come.
    while IFS= read -r line; do
      say "  $line"
    done < <(tr -d '\r' <"$log" | grep -a '^V2HOST: verdict' | tail -n +$((shown + 1)))
    shown=$(tr -d '\r' <"$log" | grep -ac '^V2HOST: verdict' || true)
    sleep 0.2
  done
  qrc=0
  wait "$qpid" || qrc=$?
  total_s=$(since "$t0")
}

boot "${accel[@]}"
if [ "${accel[1]}" = kvm ] && ! grep -aq 'V2HOST: guest-start' "$log"; then
  say "the guest never started under KVM (qemu status $qrc: $(tail -1 "$run/qemu.out")); retrying with TCG"
  echo none >"$probe_file"
  [ "$qrc" = 124 ] && timeout_s=900
  accel=(-accel tcg,thread=multi -cpu max)
  boot "${accel[@]}"
fi

tr -d '\r' <"$log" | grep -a '^V2HOST:' >"$run/markers" || true
echo "---- guest (V2HOST lines of $log) ----"
cat "$run/markers"
echo "--------------------------------------"
cp "$log" "$cache/last-serial.log"

fail=""
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
  fail="the VM did not finish within ${timeout_s}s (boot or guest script hung; serial log $cache/last-serial.log)"
elif [ "$qrc" != 0 ]; then
  fail="qemu exited with status $qrc: $(tail -3 "$run/qemu.out" | tr '\n' ' ')"
elif ! grep -q '^V2HOST: guest-start' "$run/markers"; then
  fail="the guest script never started (see $cache/last-serial.log)"
elif ! grep -q '^V2HOST: guest-done' "$run/markers"; then
  fail="the guest script did not finish"
fi

status=0
refused=0
failed=()
required=(root user user-login)
[ "$reload_gate" = 1 ] && required+=(root-reload)
for name in "${required[@]}"; do
  v=$(grep -m1 "^V2HOST: verdict run=$name " "$run/markers" | awk '{print $4}' || true)
  case $v in
    PASS) ;;
    REFUSED) refused=1 ;;
    *) status=1; failed+=("$name") ;;
  esac
done

echo "summary:"
echo "  accel: ${accel[*]}"
echo "  image: $img (built in $(cat "$img/build-seconds" 2>/dev/null || echo '?')s)"
echo "  guest: $(grep -m1 '^V2HOST: kernel' "$run/markers" | cut -d' ' -f2-), cgroupfs $(grep -m1 '^V2HOST: cgroupfs' "$run/markers" | cut -d' ' -f3-)"
echo "  boot (qemu start to guest script): ${boot_s:-never}s; VM total ${total_s}s; script total $(since "$t_script")s"
for name in root root-reload user user-login; do
  echo "  $name: $(grep -m1 "^V2HOST: verdict run=$name " "$run/markers" | cut -d' ' -f3- || true)"
done

if [ -n "$fail" ]; then
  echo "v2-host: FAIL: $fail" >&2
  status=1
elif [ "$status" = 0 ] && [ "$refused" = 1 ]; then
  echo "v2-host: REFUSED: blobrace refused the cap on the v2 host (see the refusal above)" >&2
  status=2
elif [ "$status" != 0 ]; then
  echo "v2-host: FAIL: ${failed[*]}: the cap asked for was not recorded, or not kept while the run went on (see the verdicts above)" >&2
fi
if [ "$reload_gate" = 0 ] && ! grep -q '^V2HOST: verdict run=root-reload PASS' "$run/markers"; then
  echo "v2-host: WARNING: root-reload did not pass (not counted: --no-reload-check)" >&2
fi
if [ "$status" = 0 ] && [ "$keep" = 0 ]; then
  rm -rf "$run"
  echo "v2-host: OK: every run recorded the cap asked for on a real cgroup v2 host"
else
  echo "v2-host: run directory kept: $run" >&2
fi
exit "$status"
