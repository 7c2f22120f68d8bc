#!/bin/sh
# Debian's static busybox for another architecture's guest (make
# initramfs-arm64): busybox-static of that architecture, downloaded with
# apt-get download (dpkg's multiarch: the architecture is added to dpkg
# once, nothing of it is installed) and unpacked to OUT.  The download
# stays under build/, never in the repository.
#
# usage: foreign-busybox.sh ARCH OUT     (ARCH: a Debian architecture, arm64)
# environment: SUDO (sudo when not root)
set -eu

[ $# -eq 2 ] || { echo "usage: $0 ARCH OUT" >&2; exit 2; }
arch=$1 out=$2
case "$arch" in
arm64) machine=AArch64 ;;
*) echo "foreign-busybox: no guest architecture '$arch' (arm64)" >&2; exit 2 ;;
esac

if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
	echo "foreign-busybox: adding $arch to dpkg's architectures, for apt-get download"
	${SUDO:-} dpkg --add-architecture "$arch"
	${SUDO:-} timeout 600 apt-get update -q >/dev/null ||
		{ echo "foreign-busybox: apt-get update failed" >&2; exit 1; }
fi
dir=$(dirname "$out")
mkdir -p "$dir"
tmp=$(mktemp -d "$dir/busybox.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# apt's sandbox user must be able to write where it downloads.
chmod 0777 "$tmp"
(cd "$tmp" && timeout 600 apt-get download -q "busybox-static:$arch" >/dev/null 2>&1) || {
	echo "foreign-busybox: apt-get download busybox-static:$arch failed" >&2
	exit 1
}
dpkg-deb -x "$tmp"/busybox-static_*_"$arch".deb "$tmp/root"
readelf -h "$tmp/root/bin/busybox" | grep -q "Machine:.*$machine" || {
	echo "foreign-busybox: the $arch package's bin/busybox is not an $machine program" >&2
	exit 1
}
cp "$tmp/root/bin/busybox" "$out.tmp"
mv "$out.tmp" "$out"
echo "foreign-busybox: $out ($(dpkg-deb -f "$tmp"/busybox-static_*_"$arch".deb Version), $arch)"
