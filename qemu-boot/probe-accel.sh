#!/bin/sh
# Print the accelerator the matrix should use: "kvm" only when a short KVM
# boot of our own kernel really reaches the guest's end marker, else "tcg".
# /dev/kvm existing proves nothing: on some hosts (nested virtualisation
# without the right CPU features) a KVM guest hangs forever, so the probe
# runs under a hard timeout and never waits longer than PROBE_SECONDS.
#
# usage: probe-accel.sh KERNEL INITRD
set -eu

kernel=$1 initrd=$2
here=$(dirname "$0")
seconds=${PROBE_SECONDS:-30}

if [ ! -w /dev/kvm ]; then
	echo "probe-accel: /dev/kvm is not usable, using TCG" >&2
	echo tcg
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmdline=$("$here/base-cmdline.sh")
if ACCEL=kvm MEM=256 SMP=1 timeout -k 5 "$seconds" \
	"$here/run-qemu.sh" "$kernel" "$initrd" "$tmp/ram" "$cmdline" </dev/null >"$tmp/log" 2>&1 &&
	grep -q '^HARNESS: END' "$tmp/log"; then
	echo "probe-accel: a KVM guest booted, using KVM" >&2
	echo kvm
else
	echo "probe-accel: a KVM guest did not finish within ${seconds}s, using TCG" >&2
	echo tcg
fi
