#!/bin/bash
# The sanitize_mem benchmarks (issue 6): boot every configuration of
# policy/bench, one guest at a time, run the process workloads of
# tests/guest/bench.c in it, and write build/results/bench.{md,json,svg}.
#
# usage: run-bench.sh [--smoke] [CONFIG...]
#
# Each configuration is booted
#   - once with "-icount shift=0,sleep=off": the guest clock counts
#     instructions, so the figures are repeatable on a noisy host;
#   - on the patched kernel, once more under icount for the in-kernel
#     microbenchmarks of the series (mm/sanitize_bench.c) alone;
#   - BENCH_RUNS times without icount, for wall-clock medians, min and max
#     (timed by the host as the workload's start and end lines arrive);
#   - if policy/bench-wipe names it, once more without icount in a guest of
#     BENCH_WIPE_MEM MiB that dirties most of its free memory and wipes it
#     (/sys/kernel/mm/sanitize/scrub_free, issue 35), BENCH_WIPE_REPS
#     times; the host's memset of as many bytes is measured once per run
#     (MEMSET_BW), for the report to set the guest's GB/s beside.
# Guests run sequentially so the configurations do not disturb each other.
#
# The figures travel on the bench channel, not the console: each guest gets
# a second serial port (ttyS1, "bench.clock=/dev/ttyS1" tells bench.c) whose
# host end is a FIFO, read by "report.py stamp" started before QEMU, which
# writes every line with its arrival time to <boot>.clock.  Lines carry a
# seq number and a CRC-32 (see tests/guest/bench.c), so a lost or damaged
# line is detected, not misread.  The console still goes to <boot>.log.
# Every step is bounded: QEMU by "timeout", the reader by its own --timeout
# and, once QEMU has exited, by 10 s more.
#
# A boot that hangs, panics, loses a workload or a channel line is an
# error naming the configuration and the workload; the run goes on, the
# report lists it, the exit status is 1.
#
# --smoke   (for make check) only vanilla and off, small scale, one wall
#           run, a small wipe guest; fails if a workload or a wipe did not
#           report on an intact channel, a microbenchmark did not report,
#           or a boot failed; never on time.
#
# Environment (defaults in brackets):
#   OBJ           the kernels of policy/kernels: OBJ/<kernel>/arch/x86/boot/bzImage
#                 and, for the size comparison, OBJ/<kernel>/vmlinux [build/obj]
#   INITRD        the initramfs with bench in it [build/initramfs.cpio]
#   RAMDIR        where guest RAM files live during a boot [build/ram]
#   OUT           results directory [build/results]
#   BENCH_SCALE   work per workload in the wall runs [40; smoke: 3]
#   BENCH_RUNS    wall-clock runs per configuration [3; smoke: 1]
#   BENCH_ICOUNT_SCALE, BENCH_ICOUNT_REPS  work per workload and repetitions
#                 of each workload in the icount boot [20, 5; smoke: 3, 1]
#   BENCH_MICRO_ITERS  operations per in-kernel microbenchmark, in the
#                 micro boot of each patched configuration [4096; smoke: 256]
#   BENCH_POLICY  the configurations [policy/bench]
#   BENCH_WIPE    the configurations that get a wipe boot [policy/bench-wipe]
#   BENCH_WIPE_MEM   guest MiB of the wipe boot, and the most it dirties
#                 [1024; smoke: 256]
#   BENCH_WIPE_REPS  dirty-then-wipe rounds in the wipe boot [3; smoke: 1]
#   MEMSET_BW     the host's memset timer, tests/uml/memset-bw.c built
#                 [build/tools/memset-bw]
#   BENCH_TIMEOUT seconds per boot [icount 900, wall 400, wipe 600;
#                 smoke 400/200/200]
#   BENCH_WAIT_KERNEL  seconds to wait for a kernel image still being built [0]
#   MEM, SMP      passed to qemu-boot/run-qemu.sh
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
B=$top/build

smoke=
configs_wanted=
for a; do
	case "$a" in
	--smoke) smoke=1 ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run-bench: unknown option $a" >&2; exit 2 ;;
	*) configs_wanted="$configs_wanted $a" ;;
	esac
done

OBJ=${OBJ:-$B/obj}
INITRD=${INITRD:-$B/initramfs.cpio}
RAMDIR=${RAMDIR:-$B/ram}
OUT=${OUT:-$B/results}
BENCH_POLICY=${BENCH_POLICY:-$top/policy/bench}
BENCH_WIPE=${BENCH_WIPE:-$top/policy/bench-wipe}
MEMSET_BW=${MEMSET_BW:-$B/tools/memset-bw}

if [ -n "$smoke" ]; then
	name=bench-smoke
	scale=${BENCH_SCALE:-3}
	runs=${BENCH_RUNS:-1}
	iscale=${BENCH_ICOUNT_SCALE:-3}
	ireps=${BENCH_ICOUNT_REPS:-1}
	micro_iters=${BENCH_MICRO_ITERS:-256}
	t_icount=${BENCH_TIMEOUT:-400}
	t_wall=${BENCH_TIMEOUT:-200}
	t_wipe=${BENCH_TIMEOUT:-200}
	wipe_mem=${BENCH_WIPE_MEM:-256}
	wipe_reps=${BENCH_WIPE_REPS:-1}
	[ -n "$configs_wanted" ] || configs_wanted="vanilla off"
else
	name=bench
	scale=${BENCH_SCALE:-40}
	runs=${BENCH_RUNS:-3}
	iscale=${BENCH_ICOUNT_SCALE:-20}
	ireps=${BENCH_ICOUNT_REPS:-5}
	micro_iters=${BENCH_MICRO_ITERS:-4096}
	t_icount=${BENCH_TIMEOUT:-900}
	t_wall=${BENCH_TIMEOUT:-400}
	t_wipe=${BENCH_TIMEOUT:-600}
	wipe_mem=${BENCH_WIPE_MEM:-1024}
	wipe_reps=${BENCH_WIPE_REPS:-3}
fi
for v in runs:BENCH_RUNS scale:BENCH_SCALE iscale:BENCH_ICOUNT_SCALE ireps:BENCH_ICOUNT_REPS \
	micro_iters:BENCH_MICRO_ITERS wipe_mem:BENCH_WIPE_MEM wipe_reps:BENCH_WIPE_REPS; do
	eval "x=\$${v%%:*}"
	case "$x" in ''|*[!0-9]*) echo "run-bench: ${v#*:} must be a number" >&2; exit 2 ;; esac
done
[ "$scale" -gt 0 ] && [ "$iscale" -gt 0 ] && [ "$ireps" -gt 0 ] && [ "$micro_iters" -gt 0 ] &&
	[ "$wipe_mem" -gt 0 ] && [ "$wipe_reps" -gt 0 ] ||
	{ echo "run-bench: scales and repetitions must be > 0" >&2; exit 2; }

[ -r "$BENCH_POLICY" ] || { echo "run-bench: no $BENCH_POLICY" >&2; exit 2; }
# The configurations to boot, as the loader reads and checks them
# (python3 -m harness bench): one line of shell assignments each (config=,
# kernel=, tree=, args=, wipe=yes|no), for eval.  A malformed policy/bench (or a
# policy/bench-targets its report could not read) stops the run here,
# naming file and line, before anything boots.
# shellcheck disable=SC2086 # configs_wanted is a list of names
rows=$(python3 -m harness bench --bench "$BENCH_POLICY" --wipe "$BENCH_WIPE" $configs_wanted) || {
	echo "run-bench: cannot read the configurations of $BENCH_POLICY (see above)" >&2
	exit 2
}
echo "$rows" | grep -q '^config=vanilla ' ||
	echo "run-bench: warning: no 'vanilla' configuration selected: no ratios" >&2
total=$(echo "$rows" | wc -l)

[ -r "$INITRD" ] || { echo "run-bench: no initramfs at $INITRD (make initramfs)" >&2; exit 2; }
# The initramfs must carry the bench program (make initramfs builds it
# from tests/guest/bench.c).
if ! grep -q 'usr/libexec/harness/bench$' "$INITRD.list" 2>/dev/null &&
   ! cpio -t < "$INITRD" 2>/dev/null | grep -q '^usr/libexec/harness/bench$'; then
	echo "run-bench: $INITRD has no usr/libexec/harness/bench (make initramfs)" >&2
	exit 2
fi

dir=$OUT/$name
rm -rf "$dir"
mkdir -p "$dir" "$RAMDIR" || exit 2
qemu-system-x86_64 --version | head -n 1 > "$dir/qemu-version"
echo "$(uname -srm), $(nproc) cpus, load at start: $(cut -d' ' -f1-3 /proc/loadavg)" > "$dir/host"

# Every boot of the run uses the same files even if a build replaces them
# meanwhile: a copy of the initramfs taken now, and of each kernel when a
# configuration first needs it.
mkdir -p "$dir/images"
cp "$INITRD" "$dir/images/initramfs.cpio" || exit 2
INITRD=$dir/images/initramfs.cpio
# frozen_kernel KERNEL: print the path of the run's copy of its image
frozen_kernel() {
	local img=$OBJ/$1/arch/x86/boot/bzImage copy=$dir/images/bzImage-$1
	if [ ! -e "$copy" ]; then
		# a build may still be writing it: wait (BENCH_WAIT_KERNEL s at most)
		# until it exists and its size holds still for 10 s
		local waited=0 size=
		while [ "$waited" -lt "${BENCH_WAIT_KERNEL:-0}" ]; do
			if [ -r "$img" ]; then
				[ "$(stat -c %s "$img")" = "$size" ] && break
				size=$(stat -c %s "$img")
			else
				[ "$waited" = 0 ] && echo "bench: waiting for $img" >&2
			fi
			sleep 10
			waited=$((waited + 10))
		done
		[ -r "$img" ] || return 1
		cp "$img" "$copy" || return 1
		echo "$img sha256:$(sha256sum < "$img" | cut -c1-16) $(date -r "$img" '+%F %T')" \
			> "$copy.from"
	fi
	echo "$copy"
}

command -v qemu-system-x86_64 >/dev/null || { echo "run-bench: no qemu-system-x86_64" >&2; exit 2; }
# The FIFO of the bench channel lives here (QEMU_EXTRA is split on spaces,
# so not under a results path that might hold one).
fifodir=$(mktemp -d "${TMPDIR:-/tmp}/bench-clock.XXXXXX") || exit 2
ramfile=
reader=
cleanup() {
	[ -z "$reader" ] || kill "$reader" 2>/dev/null
	[ -z "$ramfile" ] || rm -f "$ramfile"
	rm -rf "$fifodir"
}
trap cleanup EXIT
trap 'echo "run-bench: interrupted" >&2; exit 130' INT TERM

# What makes an icount boot exactly repeatable (and every boot comparable):
# no RDRAND/RDSEED (host entropy would seed the guest's RNG), an RTC that
# starts at a fixed date and follows the guest clock, and no address space
# randomization of user processes (norandmaps; allnoconfig has no KASLR).
# kunit.enable=0: the kernels of the matrix run their KUnit suites at
# boot, the patched one more of them; that work (and the memory it leaves
# behind) is not what is measured here.
# A later -cpu replaces run-qemu.sh's "-cpu max".
DETERMINISM_QEMU="-cpu max,-rdrand,-rdseed -rtc base=2025-01-01T00:00:00,clock=vm"
DETERMINISM_ARGS="norandmaps kunit.enable=0"
base_cmdline=$("$top/qemu-boot/base-cmdline.sh") || exit 2

# reap PID SECONDS: wait for our background process PID, killing it if it
# is still running after SECONDS; its exit status.
reap() {
	local pid=$1 n=0
	while kill -0 "$pid" 2>/dev/null && [ "$n" -lt "$2" ]; do
		sleep 1
		n=$((n + 1))
	done
	kill "$pid" 2>/dev/null
	wait "$pid"
}

errors=0
# boot CONFIG KERNEL_IMAGE ARGS MODE LOG TIMEOUT: one guest; 0 if every
# workload reported on an intact channel.
boot() {
	local cfg=$1 image=$2 args=$3 mode=$4 log=$5 budget=$6
	local cmdline="$base_cmdline harness.tests=bench bench.clock=/dev/ttyS1 $DETERMINISM_ARGS"
	local mem=${MEM:-}
	case $mode in
	icount) cmdline="$cmdline bench.scale=$iscale bench.reps=$ireps" ;;
	wall) cmdline="$cmdline bench.scale=$scale" ;;
	wipe) cmdline="$cmdline bench.wipe=$wipe_mem bench.reps=$wipe_reps"
	      mem=$wipe_mem
	      # what ran the guest: the report's text depends on it (TCG or KVM)
	      echo "${ACCEL:-tcg}" > "${log%.log}.accel" ;;
	esac
	[ -n "$args" ] && cmdline="$cmdline $args"
	echo "$cmdline" > "${log%.log}.cmdline"
	ramfile=$RAMDIR/bench-$cfg.ram
	local start rc rrc why='' boot_name fifo=$fifodir/clock
	boot_name=$(basename "${log%.log}")
	start=$(date +%s)
	# The reader first: QEMU opens the FIFO (-serial file:) for writing,
	# which blocks until the reader has it open, so no line can go unread
	# or be stamped late.  The reader ends when QEMU closes its end.
	rm -f "$fifo"
	mkfifo "$fifo" || exit 2
	python3 "$here/report.py" stamp --timeout $((budget + 30)) "$fifo" "${log%.log}.clock" \
		2>"$fifodir/reader.err" &
	reader=$!
	local qemu_extra="$DETERMINISM_QEMU -serial file:$fifo ${QEMU_EXTRA:-}"
	if [ "$mode" = icount ]; then
		# icount is TCG only, whatever ACCEL the caller has, and
		# single-threaded TCG only ("No MTTCG when icount is enabled")
		ACCEL=tcg TCG_THREAD=single QEMU_EXTRA="$qemu_extra -icount shift=0,sleep=off" \
			timeout -k 10 "$budget" "$top/qemu-boot/run-qemu.sh" \
			"$image" "$INITRD" "$ramfile" "$cmdline" </dev/null >"$log" 2>&1
	else
		MEM=$mem QEMU_EXTRA="$qemu_extra" \
			timeout -k 10 "$budget" "$top/qemu-boot/run-qemu.sh" \
			"$image" "$INITRD" "$ramfile" "$cmdline" </dev/null >"$log" 2>&1
	fi
	rc=$?
	# QEMU has exited, so the reader has its EOF; it is still waiting only
	# if QEMU never opened the FIFO.
	reap "$reader" 10
	rrc=$?
	reader=
	rm -f "$ramfile" "$fifo"
	ramfile=
	case $rrc in
	0) ;;
	143) why="QEMU never opened the bench channel (its reader, still waiting, was stopped)" ;;
	*) why="the bench channel's reader failed (exit status $rrc):"
	   why="$why $(paste -sd' ' "$fifodir/reader.err" 2>/dev/null)" ;;
	esac
	case $rc in
	0) ;;
	124|137) why="timed out after $budget s${why:+; $why}" ;;
	*) why="QEMU exited with status $rc ($(tail -n 1 "$log" | cut -c1-200))${why:+; $why}" ;;
	esac
	# What the harness saw goes to errors (report.py finds the rest again
	# in the logs); all of it to stderr, naming the configuration.
	[ -z "$why" ] || echo "$boot_name: $why" >> "$(dirname "$log")/errors"
	local probs check_how=
	[ "$mode" = wipe ] && check_how=--wipe
	probs=$(python3 "$here/report.py" check $check_how "$log")
	why="$why${why:+${probs:+
}}$probs"
	if [ -n "$why" ]; then
		echo "$why" | sed "s/^/bench: ERROR: $cfg ($boot_name): /" >&2
		errors=$((errors + 1))
		return 1
	fi
	echo "bench:        $cfg $mode done in $(( $(date +%s) - start )) s"
	return 0
}

# micro_boot CONFIG KERNEL_IMAGE ARGS LOG TIMEOUT: one icount guest that
# runs only the in-kernel microbenchmarks of the series (mm/sanitize_bench.c,
# built in by CONFIG_SANITIZE_MEM_BENCH) at late_initcall and powers off.
# A boot of its own, so that the allocations it makes do not change the
# state the process workloads start from, and vanilla and patched boots
# stay comparable.  0 if every announced benchmark reported.
micro_boot() {
	local cfg=$1 image=$2 args=$3 log=$4 budget=$5
	local cmdline="$base_cmdline $DETERMINISM_ARGS sanitize_bench.run=1 sanitize_bench.iters=$micro_iters"
	[ -n "$args" ] && cmdline="$cmdline $args"
	echo "$cmdline" > "${log%.log}.cmdline"
	ramfile=$RAMDIR/bench-$cfg.ram
	local start rc why='' probs
	start=$(date +%s)
	ACCEL=tcg TCG_THREAD=single QEMU_EXTRA="$DETERMINISM_QEMU -icount shift=0,sleep=off ${QEMU_EXTRA:-}" \
		timeout -k 10 "$budget" "$top/qemu-boot/run-qemu.sh" \
		"$image" "$INITRD" "$ramfile" "$cmdline" </dev/null >"$log" 2>&1
	rc=$?
	rm -f "$ramfile"
	ramfile=
	case $rc in
	0) ;;
	124|137) why="timed out after $budget s" ;;
	*) why="QEMU exited with status $rc ($(tail -n 1 "$log" | cut -c1-200))" ;;
	esac
	[ -z "$why" ] || echo "micro: $why" >> "$(dirname "$log")/errors"
	probs=$(python3 "$here/report.py" check --micro "$log")
	why="$why${why:+${probs:+
}}$probs"
	if [ -n "$why" ]; then
		echo "$why" | sed "s/^/bench: ERROR: $cfg (micro): /" >&2
		errors=$((errors + 1))
		return 1
	fi
	echo "bench:        $cfg micro done in $(( $(date +%s) - start )) s"
	return 0
}

# The host's memset of as many bytes as the wipe guest has, once per run,
# before any guest: the physical limit the guest's wipe is set beside.
# Its output ("SIZE <bytes> libc <ns> stosb <ns>") goes to host-memset.
if echo "$rows" | grep -q " wipe=yes"; then
	echo "bench: host memset of $wipe_mem MiB ($MEMSET_BW)"
	if [ ! -x "$MEMSET_BW" ]; then
		echo "bench: ERROR: no host memset timer $MEMSET_BW (make $MEMSET_BW)" >&2
		errors=$((errors + 1))
	elif ! timeout 300 "$MEMSET_BW" $((wipe_mem * 1024 * 1024)) > "$dir/host-memset" \
			2> "$dir/host-memset.err"; then
		echo "bench: ERROR: $MEMSET_BW failed: $(paste -sd' ' "$dir/host-memset.err")" >&2
		rm -f "$dir/host-memset"
		errors=$((errors + 1))
	fi
fi

i=0
config= kernel= tree= args= wipe=	# each row of python3 -m harness bench sets them
while read -r row; do
	eval "$row"
	cfg=$config
	i=$((i + 1))
	# "make all" and "make check" start with rm -rf build/results: if that
	# happened under us, the figures so far are gone; say so and stop.
	if [ ! -e "$INITRD" ]; then
		echo "bench: ERROR: $dir was removed during the run (make all/check resets" \
			"build/results); run the bench alone, or with OUT elsewhere" >&2
		exit 1
	fi
	mkdir -p "$dir/$cfg"
	if ! image=$(frozen_kernel "$kernel"); then
		image=$OBJ/$kernel/arch/x86/boot/bzImage
		echo "no kernel image $image" >> "$dir/$cfg/errors"
		echo "bench: ERROR: $cfg: no kernel image $image" >&2
		errors=$((errors + 1))
		continue
	fi
	cat "$image.from" > "$dir/$cfg/kernel" 2>/dev/null || echo "$image" > "$dir/$cfg/kernel"
	echo "bench: [$i/$total] $cfg icount"
	boot "$cfg" "$image" "$args" icount "$dir/$cfg/icount.log" "$t_icount"
	if [ "$tree" = patched ]; then
		echo "bench: [$i/$total] $cfg micro"
		micro_boot "$cfg" "$image" "$args" "$dir/$cfg/micro.log" "$t_icount"
	fi
	r=1
	while [ "$r" -le "$runs" ]; do
		echo "bench: [$i/$total] $cfg wall $r/$runs"
		boot "$cfg" "$image" "$args" wall "$dir/$cfg/wall-$r.log" "$t_wall"
		r=$((r + 1))
	done
	if [ "$wipe" = yes ]; then
		echo "bench: [$i/$total] $cfg wipe ($wipe_mem MiB guest, $wipe_reps round(s))"
		boot "$cfg" "$image" "$args" wipe "$dir/$cfg/wipe.log" "$t_wipe"
	fi
done <<EOF
$rows
EOF

vml=
for k in $(echo "$rows" | while read -r row; do eval "$row"; echo "$kernel"; done | sort -u); do
	[ -e "$OBJ/$k/vmlinux" ] && vml="$vml --vmlinux $k=$OBJ/$k/vmlinux"
done
# shellcheck disable=SC2086 # vml is a list of options
python3 "$here/report.py" report --dir "$dir" --policy "$BENCH_POLICY" \
	--out "$OUT/$name" $vml || errors=$((errors + 1))
timeout 120 python3 "$here/plot.py" "$OUT/$name.json" "$OUT/$name.svg" || {
	echo "bench: ERROR: the plot of $OUT/$name.json failed" >&2
	errors=$((errors + 1))
}

if [ "$errors" -gt 0 ]; then
	echo "bench: $errors error(s); see $OUT/$name.md" >&2
	exit 1
fi
echo "bench: all configurations reported; see $OUT/$name.md"
