#!/bin/sh
# The accelerator the guests boot with, kept in FILE: ACCEL (tcg or kvm)
# when set, else what FILE already says, else KVM only if a short probe
# boot of IMAGE reaches the end marker (probe-accel.sh).  Prints it.
#
# usage: accel.sh FILE IMAGE INITRD
# environment: ACCEL (empty: probe once)
set -u

[ $# -eq 3 ] || { echo "usage: $0 FILE IMAGE INITRD" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
file=$1
if [ -n "${ACCEL:-}" ]; then
	echo "$ACCEL" > "$file"
elif [ ! -s "$file" ]; then
	"$here/probe-accel.sh" "$2" "$3" > "$file"
fi
echo "accel: $(cat "$file")"
