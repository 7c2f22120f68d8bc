#!/bin/sh
# Launch one guest: serial console on stdio (for expect), guest RAM in a
# host file (so the host can read what the guest left in memory), no
# display, no reboot (a reboot or a panic with panic=-1 ends QEMU).
#
# usage: run-qemu.sh KERNEL INITRD RAMFILE "APPEND"
# environment: ACCEL (tcg|kvm, default from qemu-boot/probe-accel.sh's
# result or tcg), TCG_THREAD (multi|single, default multi: one host thread
# per vCPU; single is what -icount needs, QEMU refuses MTTCG with it),
# MEM (MiB, default 512), SMP (default 2), ARCH (an arch of policy/kernels,
# default x86_64: policy/arches says which QEMU, machine, CPU),
# MACHINE_OPTS (more -machine options, comma-separated: mte=on), QEMU_EXTRA.
set -eu

if [ $# -ne 4 ]; then
	echo "usage: $0 KERNEL INITRD RAMFILE APPEND" >&2
	exit 2
fi
kernel=$1 initrd=$2 ramfile=$3 append=$4
mem=${MEM:-512}
smp=${SMP:-2}
accel=${ACCEL:-tcg}
tcg_thread=${TCG_THREAD:-multi}

for f in "$kernel" "$initrd"; do
	[ -r "$f" ] || { echo "run-qemu: cannot read $f" >&2; exit 2; }
done
mkdir -p "$(dirname "$ramfile")"

case "$tcg_thread" in
multi|single) ;;
*) echo "run-qemu: TCG_THREAD must be multi or single, not '$tcg_thread'" >&2; exit 2 ;;
esac
# (A failing command substitution inside eval would not stop set -e.)
how=$(python3 -m harness arch "${ARCH:-x86_64}") || exit 2
eval "$how"
# KVM runs the host's architecture only.
[ -z "$karch" ] || accel=tcg
case "$accel" in
kvm) qemu_cpu=host ;;
*) accel=tcg,thread=$tcg_thread ;;
esac

# shellcheck disable=SC2086 # QEMU_EXTRA is a list of words on purpose
exec "$qemu" \
	-accel "$accel" -cpu "$qemu_cpu" -smp "$smp" -m "${mem}M" \
	-object "memory-backend-file,id=ram0,size=${mem}M,mem-path=$ramfile,share=on" \
	-machine "$qemu_machine,memory-backend=ram0${MACHINE_OPTS:+,$MACHINE_OPTS}" \
	-nodefaults -display none -serial stdio -no-reboot \
	-kernel "$kernel" -initrd "$initrd" -append "$append" \
	${QEMU_EXTRA:-}
