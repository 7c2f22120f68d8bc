#!/bin/sh
# Print the base kernel command line of every harness guest, from
# qemu-boot/cmdline (comments dropped, lines joined), on one line: the
# lines of every architecture, and those marked "<arch>:" for ARCH's.
#
# usage: base-cmdline.sh [ARCH]     (default x86_64)
set -eu

arch=${1:-x86_64}
case "$arch" in
x86_64|arm64) ;;
*) echo "base-cmdline: unknown architecture '$arch' (x86_64 or arm64)" >&2; exit 2 ;;
esac
file=$(dirname "$0")/cmdline
[ -r "$file" ] || { echo "base-cmdline: cannot read $file" >&2; exit 2; }
sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$/d' "$file" |
	awk -v arch="$arch" '
		/^[a-z0-9_]+:/ { tag = substr($1, 1, length($1) - 1)
				 if (tag != arch) next
				 sub(/^[a-z0-9_]+:[[:space:]]*/, "") }
		{ print }' | paste -sd' ' -
