#!/bin/sh
# How a kernel of one architecture of policy/kernels is built and booted,
# as shell assignments for eval (Kconfig-fragments/build-kernel.sh,
# tests/run-cell.sh, qemu-boot/run-qemu.sh):
#
#   karch         ARCH= of the kernel's make (empty: the host's)
#   cross         CROSS_COMPILE= (the Debian cross compiler's prefix)
#   target        the make target that builds the boot image
#   image         the boot image, relative to the object directory
#   qemu          the QEMU system emulator
#   qemu_machine  its -machine (run-qemu.sh adds the RAM file's backend)
#   qemu_cpu      its -cpu under TCG
#
# The console is qemu-boot/cmdline's, the guest programs' compiler the
# Makefile's (GUEST_PROGRAMS_ARM64).
#
# usage: arch.sh ARCH     (x86_64 or arm64, policy/kernels's arch column)
# environment: QEMU_ARM64, another qemu-system-aarch64 to boot arm64 with
# (make check-arm64-mte: Debian backports', qemu-boot/backports-qemu.sh)
set -eu

[ $# -eq 1 ] || { echo "usage: $0 x86_64|arm64" >&2; exit 2; }
case "$1" in
x86_64)
	echo "karch= cross= target=bzImage image=arch/x86/boot/bzImage"
	echo "qemu=qemu-system-x86_64 qemu_machine=pc qemu_cpu=max"
	;;
arm64)
	# pauth-impdef: QEMU's own pointer-authentication hash instead of
	# QARMA, which TCG spends most of an arm64 boot computing.
	qemu=${QEMU_ARM64:-qemu-system-aarch64}
	case "$qemu" in
	*[!A-Za-z0-9_./+-]*)
		echo "arch.sh: QEMU_ARM64 '$qemu' is not a plain path" >&2
		exit 2
		;;
	esac
	echo "karch=arm64 cross=aarch64-linux-gnu- target=Image image=arch/arm64/boot/Image"
	echo "qemu=$qemu qemu_machine=virt qemu_cpu=max,pauth-impdef=on"
	;;
*)
	echo "arch.sh: unknown architecture '$1' (x86_64 or arm64)" >&2
	exit 2
	;;
esac
