#!/bin/sh
# Debian's newer QEMU for the arm64 MTE cells (make check-arm64-mte):
# qemu-system-arm from bookworm-backports, downloaded with a private apt
# configuration under DIR (its own sources list and package lists: the
# host's apt sources are not touched, nothing is installed) and unpacked
# to DIR/root.  Prints the path of its qemu-system-aarch64.
#
# Why: bookworm's QEMU 7.2 faults on memory the kernel has just tagged
# when a KASAN_HW_TAGS kernel boots with -machine virt,mte=on (pristine
# 6.12 stops in kmem_cache_init() with "BUG: KASAN: slab-out-of-bounds in
# __kasan_slab_alloc", with 48- and 52-bit VA alike); QEMU 10.0 boots it.
# Everything else keeps the host's QEMU.
#
# usage: backports-qemu.sh DIR
set -eu

[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1
suite=bookworm-backports
mkdir -p "$dir/lists/partial" "$dir/deb"
dir=$(cd "$dir" && pwd)
echo "deb http://deb.debian.org/debian $suite main" > "$dir/sources.list"
private_apt() {
	"$@" -o Dir::Etc::sourcelist="$dir/sources.list" -o Dir::Etc::sourceparts=- \
		-o Dir::State::Lists="$dir/lists" -q
}
echo "backports-qemu: reading $suite's package list" >&2
private_apt timeout 600 apt-get update >/dev/null ||
	{ echo "backports-qemu: apt-get update of $suite failed (network?)" >&2; exit 1; }
version=$(private_apt apt-cache policy qemu-system-arm |
	sed -n 's/^ *\([0-9]*:[^ ]*bpo[^ ]*\) .*/\1/p' | head -n 1)
[ -n "$version" ] || { echo "backports-qemu: $suite has no qemu-system-arm" >&2; exit 1; }
# apt's sandbox user must be able to write where it downloads.
chmod 0777 "$dir/deb"
(cd "$dir/deb" && rm -f ./*.deb &&
	private_apt timeout 600 apt-get download "qemu-system-arm=$version" >/dev/null 2>&1) ||
	{ echo "backports-qemu: apt-get download qemu-system-arm=$version failed" >&2; exit 1; }
rm -rf "$dir/root"
dpkg-deb -x "$dir"/deb/qemu-system-arm_*.deb "$dir/root"
qemu=$dir/root/usr/bin/qemu-system-aarch64
missing=$(ldd "$qemu" | grep 'not found' || true)
[ -z "$missing" ] || { echo "backports-qemu: $qemu needs libraries this host lacks:" >&2
	echo "$missing" >&2; exit 1; }
"$qemu" --version | head -n 1 >&2
echo "$qemu"
