#!/bin/sh
# Print the base kernel command line of every harness guest, from
# qemu-boot/cmdline (comments dropped, lines joined), on one line.
#
# usage: base-cmdline.sh
set -eu

file=$(dirname "$0")/cmdline
[ -r "$file" ] || { echo "base-cmdline: cannot read $file" >&2; exit 2; }
sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$/d' "$file" | paste -sd' ' -
