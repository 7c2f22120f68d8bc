#!/bin/sh
# Prove one generated LAVA job end to end on this machine: generate the
# jobs from policy/matrix, run one cell's job with lava-run (the
# dispatcher's standalone runner) on the local QEMU device
# lava/devices/qemu01.yaml, and check what LAVA reported.
#
# usage: lava/lava-smoke.sh [CELL]          (default: vanilla)
# environment:
#   LAVA_TIMEOUT   seconds for the whole lava-run (default 900)
#   LAVA_INSTALL   "no": do not apt-get install lava-dispatcher if missing
#   LAVA_OUT       output root (default build/lava/out)
#
# Exits 0 only if the job finished, LAVA reported every result the job
# must report, none failed, and they agree with tests/harness/__main__.py's
# verdicts on the same console (lava/lava_verdict.py).  Needs root (lava-run
# refuses to run otherwise) and the cell's kernel and build/initramfs.cpio.
set -eu

cell=${1:-vanilla}
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
jobs=$build/lava/jobs
out=${LAVA_OUT:-$build/lava/out}/$cell
device=$top/lava/devices/qemu01.yaml
start=$(date +%s)

say() { echo "lava-smoke: $*" >&2; }

if [ "$(id -u)" != 0 ]; then
	say "lava-run must run as root"
	exit 2
fi

if ! command -v lava-run >/dev/null 2>&1; then
	if [ "${LAVA_INSTALL:-yes}" = no ] || ! command -v apt-get >/dev/null 2>&1; then
		say "lava-run is missing: install the lava-dispatcher package"
		say "(Debian 12: apt-get install lava-dispatcher, 2023.01)"
		exit 2
	fi
	# Without its recommends (a linux-image, lxc, libguestfs-tools, NFS and
	# TFTP servers, qemu-system-arm...: 440 packages more on a bare Debian
	# 12): this job only downloads file:// images (no compression, no
	# overlay) and boots qemu-system-x86, a package of make deps.
	say "lava-run is missing: installing lava-dispatcher (once)"
	"$top/tests/harness/deps.sh" lava-dispatcher >&2 || {
		say "apt-get install lava-dispatcher failed"
		exit 2
	}
fi
say "$(dpkg-query -W -f='lava-dispatcher ${Version}' lava-dispatcher 2>/dev/null || echo 'lava-dispatcher (version unknown)')"

python3 "$top/lava/make-jobs.py" --out "$jobs"
job=$jobs/$cell.yaml
[ -f "$job" ] || { say "no job for cell '$cell' (not in policy/matrix?)"; exit 2; }

# The artifacts the job downloads (file:// URLs into build/).
for url in $(sed -n 's/^ *url: "file:\/\/\(.*\)"$/\1/p' "$job"); do
	[ -r "$url" ] || {
		say "$url is missing: run 'make kernel initramfs' first"
		exit 2
	}
done

# lava-run does not render device templates: the device file must carry
# the options the job's context asks for (extra_options).
missing=$(sed -n '/^  extra_options:/,/^[a-z]/s/^  - "\(.*\)"$/\1/p' "$job" |
	while read -r opt; do grep -q -- "- $opt\$" "$device" || echo "'$opt'"; done)
if [ -n "$missing" ]; then
	say "$device lacks the job's extra options" $missing
	exit 2
fi

rm -rf "$out"
mkdir -p "$out"
say "running $job (timeout ${LAVA_TIMEOUT:-900} s), log in $out/output.yaml"
rc=0
timeout -k 30 "${LAVA_TIMEOUT:-900}" lava-run --job-id "$$" --output-dir "$out" \
	--device "$device" "$job" >"$out/lava-run.stdout" 2>"$out/output.yaml" || rc=$?
case $rc in
0) ;;
124|137) say "lava-run timed out after ${LAVA_TIMEOUT:-900} s" ;;
*) say "lava-run exited $rc" ;;
esac

vrc=0
python3 "$top/lava/lava_verdict.py" --cell "$cell" --out "$out" --jobs "$jobs" || vrc=$?
say "took $(( $(date +%s) - start )) s; console in $out/console.log"
[ "$rc" = 0 ] && [ "$vrc" = 0 ]
