#!/bin/sh
# Write the gen_init_cpio(1) list of the guest initramfs on stdout: the
# static busybox, our /init, and every guest test program given as
# arguments (installed as /usr/libexec/harness/<basename>).  The archive
# itself is made by the kernel's own usr/gen_init_cpio from this list.
#
# usage: mkinitramfs.sh INIT BUSYBOX [GUEST_PROGRAM...] > list
set -eu

if [ $# -lt 2 ]; then
	echo "usage: $0 INIT BUSYBOX [GUEST_PROGRAM...]" >&2
	exit 2
fi
init=$1 busybox=$2
shift 2

for f in "$init" "$busybox" "$@"; do
	[ -r "$f" ] || { echo "mkinitramfs: missing $f" >&2; exit 1; }
done

cat <<LIST
dir /dev 0755 0 0
nod /dev/console 0600 0 0 c 5 1
nod /dev/null 0666 0 0 c 1 3
dir /bin 0755 0 0
dir /sbin 0755 0 0
dir /usr 0755 0 0
dir /usr/bin 0755 0 0
dir /usr/libexec 0755 0 0
dir /usr/libexec/harness 0755 0 0
dir /proc 0755 0 0
dir /sys 0755 0 0
dir /tmp 1777 0 0
dir /root 0700 0 0
file /bin/busybox $busybox 0755 0 0
file /init $init 0755 0 0
LIST
for prog in "$@"; do
	echo "file /usr/libexec/harness/$(basename "$prog") $prog 0755 0 0"
done
