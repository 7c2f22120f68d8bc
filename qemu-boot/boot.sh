#!/bin/sh
# A guest with a shell on this terminal (make boot): the base command line
# of qemu-boot/cmdline, harness.shell, sanitize_mem=POLICY and ARGS; its
# RAM file is removed when QEMU exits.  No timeout: a person is typing.
#
# usage: boot.sh KERNEL IMAGE INITRD RAMFILE POLICY [ARGS]
# environment: ACCEL, ARCH (the kernel's, default x86_64), and what
# run-qemu.sh reads
set -u

[ $# -ge 5 ] && [ $# -le 6 ] || { echo "usage: $0 KERNEL IMAGE INITRD RAMFILE POLICY [ARGS]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
kernel=$1 image=$2 initrd=$3 ram=$4 policy=$5 args=${6:-}
echo "boot: $kernel kernel, sanitize_mem=$policy $args; type 'exit' to power off"
"$here/run-qemu.sh" "$image" "$initrd" "$ram" \
	"$("$here/base-cmdline.sh" "${ARCH:-x86_64}") harness.shell sanitize_mem=$policy $args"
rm -f "$ram"
