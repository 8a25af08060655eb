#!/usr/bin/env bash
# nbdkit >= 1.40 for --disk-latency below a millisecond: its delay filter parses "500us"
# (nbdkit_parse_delay, added in 1.40); Debian 12's 1.32 takes whole milliseconds only.
# Built from Debian's own source package (the upstream tarball, its checksum from the
# .dsc of trixie's nbdkit 1.42.3-1): the server, the file plugin and the delay filter,
# nothing optional (about 30 s on 2 cores), installed under PREFIX (default /usr/local;
# $HOME/.local where that is not writable). Does nothing where nbdkit >= 1.40 is found.
set -euo pipefail
version=1.42.3
sha256=cc6e451f7f6e33243ade6a5451465734bbd90142b84630bde0e0747f5656c2eb
url=http://deb.debian.org/debian/pool/main/n/nbdkit/nbdkit_$version.orig.tar.gz

new_enough() {
  local v
  v=$(nbdkit --version 2>/dev/null | awk '{print $2}') || return 1
  [ -n "$v" ] && [ "$(printf '%s\n1.40\n' "$v" | sort -V | head -1)" = 1.40 ]
}
if new_enough; then
  exit 0
fi
prefix=${PREFIX:-/usr/local}
[ -w "$prefix" ] || prefix=$HOME/.local
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
curl -sSfL -o nbdkit.tar.gz "$url"
echo "$sha256  nbdkit.tar.gz" | sha256sum -c --quiet
tar xzf nbdkit.tar.gz
cd "nbdkit-$version"
./configure --prefix="$prefix" \
  --disable-dependency-tracking --disable-static --disable-valgrind \
  --disable-perl --disable-python --disable-ocaml --disable-rust --disable-tcl \
  --disable-lua --disable-golang --disable-nbd-plugin --disable-libguestfs-tests \
  --disable-linuxdisk --disable-torrent --disable-vddk \
  --without-selinux --without-gnutls --without-bash-completions --without-manpages \
  --without-libblkio --without-curl --without-ssh --without-iso --without-libvirt \
  --without-bzip2 --without-zlib --without-zlib-ng --without-libnbd --without-liblzma \
  --without-libzstd --without-libguestfs --without-ext2 >configure.log 2>&1 ||
  { tail -20 configure.log >&2; echo "build-nbdkit: configure failed" >&2; exit 1; }
jobs=$(nproc)
for d in include common/include common/protocol common/replacements common/utils server \
         plugins/file filters/delay; do
  make -s -j"$jobs" -C "$d" >/dev/null
done
for d in include server plugins/file filters/delay; do
  make -s -C "$d" install >/dev/null
done
hash -r
if ! new_enough; then
  echo "build-nbdkit: nbdkit $version is in $prefix/sbin, but 'nbdkit' on PATH is $(command -v nbdkit || echo none): put $prefix/sbin first on PATH for --disk-latency below 1 ms" >&2
  exit 0
fi
echo "build-nbdkit: $(nbdkit --version) in $prefix"
