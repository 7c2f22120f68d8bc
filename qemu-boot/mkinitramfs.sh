#!/bin/sh
# Write the gen_init_cpio(1) list of the guest initramfs on stdout: the
# static busybox, our /init, every guest test program given as arguments
# (installed as /usr/libexec/harness/<basename>), /etc/mtab as the kernel's
# mount table (stress-ng looks for mounts there), and the Debian programs
# named in qemu-boot/host-programs, each at its host path with every shared
# library ldd(1) resolves for it and the ELF interpreter.  The archive
# itself is made by the kernel's own usr/gen_init_cpio from this list.
#
# usage: mkinitramfs.sh INIT BUSYBOX [GUEST_PROGRAM...] > list
#        mkinitramfs.sh --host-programs    the paths the list names, one a
#                                          line (the initramfs's prerequisites)
# environment: HOST_PROGRAMS, the list of host programs (default
# qemu-boot/host-programs beside this script; empty: none).
set -eu

hostlist=${HOST_PROGRAMS-$(dirname "$0")/host-programs}
if [ "${1:-}" = --host-programs ]; then
	[ -z "$hostlist" ] || sed -e 's/#.*//' "$hostlist" | awk 'NF { print $1 }'
	exit 0
fi

if [ $# -lt 2 ]; then
	echo "usage: $0 INIT BUSYBOX [GUEST_PROGRAM...]" >&2
	exit 2
fi
init=$1 busybox=$2
shift 2

for f in "$init" "$busybox" "$@"; do
	[ -r "$f" ] || { echo "mkinitramfs: missing $f" >&2; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/files"

# "GUEST_PATH HOST_FILE" for each host program and what it needs at run time.
if [ -n "$hostlist" ]; then
	[ -r "$hostlist" ] || { echo "mkinitramfs: cannot read $hostlist" >&2; exit 1; }
	sed -e 's/#.*//' "$hostlist" | while read -r prog pkg extra; do
		[ -n "$prog" ] || continue
		case "$prog" in
		/*) ;;
		*) echo "mkinitramfs: $hostlist: '$prog' is not an absolute path" >&2; exit 1 ;;
		esac
		if [ -z "$pkg" ] || [ -n "$extra" ]; then
			echo "mkinitramfs: $hostlist: '$prog' needs exactly one Debian package after it" >&2
			exit 1
		fi
		if [ ! -f "$prog" ]; then
			echo "mkinitramfs: $prog is missing: install the Debian package $pkg (apt-get install $pkg, or make deps)" >&2
			exit 1
		fi
		echo "$prog $(readlink -f "$prog")" >> "$tmp/files"
		# A data file a program needs (a terminfo entry): no libraries.
		[ -x "$prog" ] || continue
		# A static program has no libraries ("not a dynamic executable").
		ldd "$prog" > "$tmp/ldd" 2>&1 || {
			grep -q 'not a dynamic executable' "$tmp/ldd" && continue
			echo "mkinitramfs: ldd $prog failed:" >&2
			cat "$tmp/ldd" >&2
			exit 1
		}
		if grep -q '=> not found' "$tmp/ldd"; then
			echo "mkinitramfs: $prog needs libraries that are not installed:$(awk \
				'/=> not found/ { printf " %s", $1 }' "$tmp/ldd") (reinstall $pkg)" >&2
			exit 1
		fi
		# "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" and the
		# interpreter "/lib64/ld-linux-x86-64.so.2 (0x...)"; the vDSO has
		# no path.
		awk '$2 == "=>" && $3 ~ /^\// { print $3; next }
		     $1 ~ /^\// { print $1 }' "$tmp/ldd" | while read -r lib; do
			real=$(readlink -f "$lib")
			[ -f "$real" ] || { echo "mkinitramfs: $prog: $lib resolves to no file" >&2; exit 1; }
			echo "$lib $real" >> "$tmp/files"
		done
	done
fi
sort -u -k1,1 "$tmp/files" > "$tmp/files.sorted"

# The directories the fixed part below does not make, parents first.
fixed="/dev /bin /sbin /usr /usr/bin /usr/libexec /usr/libexec/harness /proc /sys /tmp /root /etc"
while read -r path real; do
	d=$(dirname "$path")
	while [ "$d" != / ]; do
		echo "$d"
		d=$(dirname "$d")
	done
done < "$tmp/files.sorted" | sort -u | while read -r d; do
	case " $fixed " in
	*" $d "*) ;;
	*) echo "dir $d 0755 0 0" ;;
	esac
done > "$tmp/dirs"

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
dir /etc 0755 0 0
slink /etc/mtab /proc/self/mounts 0777 0 0
file /bin/busybox $busybox 0755 0 0
file /init $init 0755 0 0
LIST
for prog in "$@"; do
	echo "file /usr/libexec/harness/$(basename "$prog") $prog 0755 0 0"
done
cat "$tmp/dirs"
while read -r path real; do
	echo "file $path $real 0755 0 0"
done < "$tmp/files.sorted"
