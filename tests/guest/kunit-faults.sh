#!/bin/sh
# The series' KUnit suite run again after boot, with slab allocations
# failing on purpose (failslab), so that the series' error paths run under
# its own tests (issue 34).  The boot-time run of the suite is the judge's,
# as in every cell; this one is judged here:
#
#   suite_ran           the suite ran to its end (its result line is in
#                       /sys/kernel/debug/kunit/sanitize_mem/results)
#   only_injected       every failed expectation of every case is an
#                       allocation that came back NULL or -ENOMEM, which is
#                       what failslab does (or the case's kthread could not
#                       be made, -ENOMEM); anything else (a wrong byte, a
#                       case that faulted) fails and is named
#   faults_injected     failslab failed at least one allocation (counted)
#   no_kernel_reports   nothing the judge fails a cell on was logged during
#                       the run (a crash, KASAN, a warning, a verify report)
#
# Only the cases fail: failslab's task filter, with make-it-fail set on
# kthreadd while the suite runs, so the kthreads KUnit starts for the cases
# inherit it (and whatever else starts then: it is reset on every task
# afterwards).  While it runs the console shows emergencies only, or the
# host's judge would read the rerun's KTAP as the boot's; the log keeps it
# all and is judged here.
#
# kernel command line:
#   harness.kunit_faults=EVERY,TIMES  fail every EVERY-th allocation of the
#                                     cases, at most TIMES (default 13,60)
# Needs CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_DEBUG_FS, CONFIG_KUNIT_DEBUGFS
# (the debug flavour) and the suite built in and run at boot.
set -u

# What the rerun's results (the debugfs file, argument 1) hold, one line:
# "FAILED INJECTED OTHER FIRST".  A failed expectation prints "... FAILED
# at FILE:LINE" and then what was expected; an allocation failslab failed,
# "Expected p is not null, but is" or "is not error, but is: -12".
# FIRST is the first failure that is neither.  Tested on the host by
# tests/selftest/test_guest.py (make unit).
verdict() {
	awk '
		/^[[:space:]]*# [^:]+: (ASSERTION|EXPECTATION) FAILED at / {
			failed++; last = $0; want = 1; next
		}
		want && /is not null, but is$|is not error, but is: -12$/ { null++; want = 0; next }
		want { if (!first) first = last " / " $0; want = 0 }
		# The kthread of a case (or of its cleanup) could not be made:
		# kthreadd allocates for it with make-it-fail set, and failslab
		# failed one of its allocations.
		/internal error occurred (preventing test case from running|during test case cleanup): -12$/ {
			failed++; null++; next
		}
		/try faulted|try timed out|internal error/ { other++; if (!first) first = $0 }
		END {
			printf "%d %d %d %s\n", failed, null, other, first
		}' "$1"
}

if [ "${1:-}" = --verdict ]; then
	verdict "$2"
	exit
fi

suite=sanitize_mem
dbg=/sys/kernel/debug
fs=$dbg/failslab
every=13 times=60
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	harness.kunit_faults=*,*)
		v=${arg#harness.kunit_faults=}
		every=${v%,*} times=${v#*,}
		;;
	esac
done
out=/tmp/kunit-faults.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT

. /usr/libexec/harness/ktap.sh

ktap_plan 4
mountpoint -q "$dbg" || mount -t debugfs debugfs "$dbg" 2>/dev/null
run=$dbg/kunit/$suite/run
if [ ! -w "$run" ] || [ ! -d "$fs" ]; then
	why="no $run or $fs: needs KUNIT_DEBUGFS, FAILSLAB, FAULT_INJECTION_DEBUG_FS and the suite run at boot"
	ktap_check 1 suite_ran "$why"
	ktap_check 1 only_injected "$why"
	ktap_check 1 faults_injected "$why"
	ktap_check 1 no_kernel_reports "$why"
	ktap_done
	exit
fi

marker="kunit-faults: run $$ starts"
echo "$marker" > /dev/kmsg
echo 0 > "$fs/probability"
echo 0 > "$fs/verbose"
echo Y > "$fs/task-filter"
echo N > "$fs/ignore-gfp-wait"
echo 0 > "$fs/space"
echo "$every" > "$fs/interval"
echo "$times" > "$fs/times"
levels=$(cat /proc/sys/kernel/printk)
echo 1 > /proc/sys/kernel/printk
echo 1 > /proc/2/make-it-fail
echo 100 > "$fs/probability"
start=$(date +%s)
echo 1 > "$run"
echo 0 > "$fs/probability"
echo 0 > /proc/2/make-it-fail
for f in /proc/[0-9]*/make-it-fail; do
	[ "$(cat "$f" 2>/dev/null)" = 0 ] || echo 0 > "$f"
done 2>/dev/null
echo "$levels" > /proc/sys/kernel/printk
injected=$((times - $(cat "$fs/times")))
cat "$dbg/kunit/$suite/results" > "$out/results"
echo "# $suite rerun in $(($(date +%s) - start)) s, failslab every ${every}th allocation of its cases, $injected of at most $times failed"

# The suite's own result line ends its results; the cases' lines above.
cases=$(grep -cE '^[[:space:]]+(not )?ok [0-9]+ ' "$out/results")
grep -qE "^(not )?ok [0-9]+ $suite" "$out/results"
ktap_check $? suite_ran "$cases result line(s)$(grep -E "^(not )?ok [0-9]+ $suite" "$out/results" | sed 's/^/: /')"

verdict "$out/results" > "$out/verdict"
read -r failed null other first < "$out/verdict"
bad=$((failed - null + other))
echo "# failed expectations $failed, allocations failed on purpose $null, other $other; cases not ok $(grep -cE '^[[:space:]]+not ok [0-9]+ ' "$out/results")"
[ "$failed" -gt 0 ] && sed -n 's/^[[:space:]]*\(# [^:]*: ASSERTION FAILED at .*\)/\1/p' "$out/results" | head -n 5
[ "$bad" = 0 ]; ktap_check $? only_injected "$bad not from an injected allocation failure${first:+: $first}"
[ "$injected" -gt 0 ]; ktap_check $? faults_injected "$injected"

dmesg > "$out/dmesg"
if grep -qF "$marker" "$out/dmesg"; then
	awk -v m="$marker" 'seen; index($0, m) { seen = 1 }' "$out/dmesg" > "$out/dmesg.new"
else
	cp "$out/dmesg" "$out/dmesg.new"
fi
# A cache the case creates and failslab fails is reported by design:
# "__kmem_cache_create_args(NAME) failed with error -12" and a stack.  Those are
# left out (and counted); anything else still counts.
awk -v list="$out/create-failures" '
	/kmem_cache_create[a-z_]*\([^)]*\) failed with error -12$/ { skip = 1; print > list }
	!skip { print }
	skip && /<\/TASK>/ { skip = 0 }' "$out/dmesg.new" > "$out/dmesg.judged"
echo "# cache creations failed on purpose: $(cat "$out/create-failures" 2>/dev/null | wc -l)"
r=$(grep -Ec "$KTAP_KERNEL_REPORTS" "$out/dmesg.judged")
if [ "$r" != 0 ]; then	# the console showed none of it: the first, here
	grep -Em 1 -B 12 -A 12 "$KTAP_KERNEL_REPORTS" "$out/dmesg.judged" | sed 's/^/# /'
fi
[ "$r" = 0 ]; ktap_check $? no_kernel_reports \
	"$r line(s)$(grep -Em 1 "$KTAP_KERNEL_REPORTS" "$out/dmesg.judged" | sed 's/^/: /')"
ktap_done
