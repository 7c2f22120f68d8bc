#!/bin/sh
# Print the base kernel command line of every harness guest on one line:
# the architecture's own arguments (policy/arches's cmdline: console,
# clock), then qemu-boot/cmdline's lines (comments dropped, lines joined).
#
# usage: base-cmdline.sh [ARCH]     (default x86_64; an arch of policy/arches)
set -eu

arch=${1:-x86_64}
own=$(python3 -m harness arch "$arch" cmdline) || exit 2
file=$(dirname "$0")/cmdline
[ -r "$file" ] || { echo "base-cmdline: cannot read $file" >&2; exit 2; }
{
	echo "$own"
	sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$/d' "$file"
} | paste -sd' ' -
