#!/bin/sh
# Boot one cell of a matrix and judge it.
#
# usage: run-cell.sh MATRIX CELL RESULTS_DIR
# environment (set by the Makefile): OBJ (build/obj: the cell's kernel, a
# name of policy/kernels, is OBJ/<kernel>/), INITRD (and INITRD_ARM64 for
# the cells of an arm64 kernel), ACCEL, TIMEOUT,
# RAMDIR (where guest RAM files live while a guest runs), RAMSCAN (the
# host's RAM scanner, for cells whose guest asks for a scan), CHANNELS and
# LIFETIME_TABLE (default tests/scan/channels and policy/lifetime).
#
# Writes RESULTS_DIR/CELL/{console.log,status,cmdline,config,qemu-version,
# accel,arch,result.json} and prints one line with the verdict.  Exits non-zero
# only if the harness itself could not run; a failing cell is a result.
set -eu

matrix=$1 cell=$2 results=$3
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

# The cell's fields as the loader reads and checks them (tests/harness/policy.py):
# kernel, args, tests, and mem and timeout from its expect column.
fields=$(python3 -m harness cell --matrix "$matrix" "$cell") || {
	echo "run-cell: cannot read cell '$cell' of $matrix (see above)" >&2
	exit 2
}
eval "$fields"

# The boot image and QEMU of the kernel's architecture; an arm64
# cell boots the arm64 initramfs (INITRD_ARM64) under TCG.
how=$(python3 -m harness arch "$arch") || exit 2
eval "$how"
export ARCH="$arch"
case "$arch" in
x86_64) initrd=${INITRD:?} ;;
*) initrd=${INITRD_ARM64:?} ACCEL=tcg ;;
esac
[ -r "$initrd" ] || {
	echo "run-cell: cell $cell: no $arch initramfs $initrd (make initramfs-$arch)" >&2
	exit 2
}
image=${OBJ:?}/$kernel/$image config=$OBJ/$kernel/.config
[ -r "$image" ] || {
	echo "run-cell: cell $cell: no kernel image $image (make kernel KERNELS=$kernel)" >&2
	exit 2
}

# mem=<MiB>: guest RAM for this cell (run-qemu.sh's MEM, default 512);
# machine=: more -machine options (mte=on).
[ -z "$mem" ] || export MEM="$mem"
[ -z "$machine" ] || export MACHINE_OPTS="$machine"
budget=${timeout:-${TIMEOUT:-300}}

guest_tests=$(for t in $tests; do case "$t" in guest:*) printf '%s,' "${t#guest:}" ;; esac; done)
guest_tests=${guest_tests%,}

# The base every guest shares (qemu-boot/cmdline): its panic=-1 and
# oops=panic turn any crash into an immediate exit of QEMU (-no-reboot);
# the end marker, not QEMU's exit status, says it went well.
cmdline=$("$top/qemu-boot/base-cmdline.sh" "$arch")
[ -n "$guest_tests" ] && cmdline="$cmdline harness.tests=$guest_tests"
[ -n "$args" ] && cmdline="$cmdline $args"

dir=$results/$cell
rm -rf "$dir"
mkdir -p "$dir" "${RAMDIR:?}"
echo "$cmdline" > "$dir/cmdline"
cp "$config" "$dir/config"
"$qemu" --version | head -n 1 > "$dir/qemu-version"
echo "${ACCEL:-tcg}" > "$dir/accel"
echo "$arch" > "$dir/arch"

echo "cell $cell: booting $kernel kernel, args: ${args:-(none)}" >&2
ramfile=$RAMDIR/$cell.ram
export RAMFILE="$ramfile" CELL="$cell" CELL_DIR="$dir"
# The channel list and the table (make lifetime-real: channels-real and
# policy/lifetime-real).
export SECRET_HOOK="$top/tests/scan/secret-hook.sh" CHANNELS="${CHANNELS:-$top/tests/scan/channels}"
expect -f "$here/run-cell.exp" "$dir/console.log" "$dir/status" "$budget" \
	"$top/qemu-boot/run-qemu.sh" "$image" "$initrd" "$ramfile" "$cmdline" \
	</dev/null
[ -n "${KEEP_RAM:-}" ] || rm -f "$ramfile"

python3 -m harness judge-cell --matrix "$matrix" --cell "$cell" --dir "$dir" \
	--root "$(dirname "$results")" --lifetime "${LIFETIME_TABLE:-$top/policy/lifetime}"
