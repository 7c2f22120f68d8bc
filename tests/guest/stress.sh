#!/bin/sh
# Debian's stress-ng on the paths sanitize_mem changes: anonymous memory
# (vm, malloc), pipes, unix socket pairs, fork and exit, tmpfs; every
# stressor with --verify, all at once, in rounds of a time budget until
# guest RAM has gone through the page allocator twice (at most 10 rounds:
# on the debug kernel under TCG, with the host's two cores shared with a
# kernel build, 6 rounds cycled RAM 1.9 times).
# The run must end clean, find no corrupted data, leave the policy as it
# was and make the kernel report nothing.
#
# usage: stress [faults]
#   faults  also make the stressors' slab and page allocations fail at a
#           small rate (failslab, fail_page_alloc; tests/guest/faults.sh)
# kernel command line:
#   harness.stress=SECONDS            length of a round (default 20)
#   harness.faults=PERCENT,INTERVAL   fault rate (default 1,10: 1 % of every
#                                     10th allocation the stressors make)
#   failslab=, fail_page_alloc=       boot-time injection: the faults injected
#                                     since boot are counted and reported
#   harness.stress_wipe=1             wipe free memory (scrub_free) once a
#                                     second while the stressors run: one
#                                     more check, that the wipes ran, no
#                                     write to scrub_free failed but with
#                                     EBUSY, and nothing was OOM-killed
set -u

mode=${1:-plain}
secs=20
rounds_max=10
fault_rate=1,10
wipe=0
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	harness.stress_wipe=1) wipe=1 ;;
	harness.stress=*) secs=${arg#harness.stress=} ;;
	harness.faults=*) fault_rate=${arg#harness.faults=} ;;
	esac
done
sysfs=/sys/kernel/mm/sanitize
dbg=/sys/kernel/debug
fault_caps="failslab fail_page_alloc"
out=/tmp/stress.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT

. /usr/libexec/harness/ktap.sh
meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
counter() { cat "$sysfs/$1" 2>/dev/null || echo 0; }
policy_now() { cat "$sysfs/policy" 2>/dev/null || echo none; }
have_faults() { [ -d "$dbg/failslab" ] && [ -d "$dbg/fail_page_alloc" ]; }


ktap_plan $((8 + wipe))

policy_before=$(policy_now)
# What this run judges is logged after this line: earlier tests of the same
# boot (the KUnit suite's planted write after free) may have provoked
# reports on purpose, and a log that wrapped cannot be told apart by length.
marker="stress: run $$ starts"
echo "$marker" > /dev/kmsg

# --- fault injection -----------------------------------------------------------
budget=1000000
if [ "$mode" = faults ] && have_faults; then
	# failslab=<interval>,<probability>,<space>,<times> on the command line
	# has had "times" count down from its last field since boot.
	boot=0 boot_desc=
	for cap in $fault_caps; do
		for arg in $(cat /proc/cmdline); do
			case "$arg" in "$cap="*) ;; *) continue ;; esac
			want=${arg##*,}
			left=$(cat "$dbg/$cap/times")
			if [ "$want" -ge 0 ] 2>/dev/null; then
				boot=$((boot + want - left))
				boot_desc="$boot_desc $arg: $((want - left))"
			else
				boot_desc="$boot_desc $arg: not counted (times -1 counts nothing down)"
			fi
		done
	done
	[ -z "$boot_desc" ] || echo "# faults injected at boot $boot ($boot_desc )"

	# verbose=0: no "FAULT_INJECTION: forcing a failure." line, no stack
	# dump per fault; "times" counts the faults down instead.  task-filter:
	# only tasks with make-it-fail=1 (the stressors), sleeping allocations
	# too.  fail_page_alloc from order 0 (its default min-order is 1, where
	# a stressor allocates almost nothing: 0 faults were injected): page
	# tables, a fork's vmalloc'ed stack, slab pages.  User pages stay out
	# (ignore-gfp-highmem, the default): a failed fault retries forever.
	percent=${fault_rate%,*} interval=${fault_rate#*,}
	for cap in $fault_caps; do
		d=$dbg/$cap
		echo 0 > "$d/probability"
		echo 0 > "$d/verbose"
		echo Y > "$d/task-filter"
		echo N > "$d/ignore-gfp-wait"
		echo 0 > "$d/space"
		echo "$interval" > "$d/interval"
		echo "$budget" > "$d/times"
	done
	echo 0 > "$dbg/fail_page_alloc/min-order"
	# An order-0 failure under vmalloc is reported by design: warn_alloc()
	# prints "vmalloc error" and a stack at KERN_WARNING, which the host's
	# judge cannot tell from a report.  While faults are injected the
	# console shows errors and worse only (KASAN, KFENCE, UBSAN, BUG, a
	# panic on warn); the log keeps everything, and this run judges it
	# below with the stressors' own allocation failures left out.
	console_levels=$(cat /proc/sys/kernel/printk)
	echo 4 > /proc/sys/kernel/printk
	for cap in $fault_caps; do
		echo "$percent" > "$dbg/$cap/probability"
	done
	echo "# fault injection: $percent % of every ${interval}th slab and page allocation (order >= $(cat "$dbg/fail_page_alloc/min-order")) of the stressors"
fi

# --- the run ---------------------------------------------------------------------
# Sizes from what is free now, so the run never needs the OOM killer (whose
# report would fail the cell): vm a fifth, tmpfs a tenth, malloc 128 blocks
# of 256 KiB (over the mmap threshold: each free is an munmap), sockpair
# 127 pairs (--max-fd; unbounded, it fills a socket buffer per pair of the
# 2048 that RLIMIT_NOFILE allows, and the guest with it).
avail_kb=$(meminfo MemAvailable)
total_kb=$(meminfo MemTotal)
vm_kb=$((avail_kb / 5))
tmpfs_kb=$((avail_kb / 10))
stressors="vm malloc pipe sockpair fork tmpfs"

# The tmpfs stressor fills 98 % of the first writable tmpfs it finds in
# /etc/mtab (the initramfs links it to /proc/self/mounts); that would be
# the rootfs (half of RAM).  In a mount namespace of its own the rootfs is
# read-only and /tmp a tmpfs of tmpfs_kb, so the stressor gets that one;
# nothing changes for the rest of the guest.  (stress-ng 0.15's sock
# stressor cannot do unix sockets, it asks for IPPROTO_TCP, and the lab
# kernel has no INET: sockpair is the unix socket stressor.)
# Under fault injection the stressors get make-it-fail once they run, not
# stress-ng itself: its own set-up and bookkeeping (shared memory, the
# metrics, respawning) must not fail, or its exit status would mean
# nothing.  What a stressor forks inherits the flag.
# Output: stress-ng's log on stdout, its YAML on fd 3; status 125 if the
# namespace could not be set up.
one_round() {
	unshare -m --propagation private sh -c '
		mount -o remount,bind,ro / &&
		mount -t tmpfs -o size='"$tmpfs_kb"'k,mode=1777 stress-tmpfs /tmp &&
		cd /tmp || exit 125
		stress-ng --verify --timeout '"$secs"'s --metrics-brief --max-fd 256 \
			--yaml /tmp/stress.yaml \
			--vm 1 --vm-bytes '"$vm_kb"'k \
			--malloc 1 --malloc-bytes 256k --malloc-max 128 --malloc-touch \
			--pipe 1 --sockpair 1 --fork 1 --tmpfs 1 2>&1 &
		sn=$!
		if [ "$1" = faults ] && [ -e /proc/self/make-it-fail ]; then
			tries=0
			while :; do
				set -- $(for c in /proc/[0-9]*/comm; do
					read -r comm < "$c" && case "$comm" in
					stress-ng-*) echo "${c%/comm}" ;;
					esac
				done 2>/dev/null)
				[ $# -ge 6 ] || [ $tries -ge 50 ] && break
				tries=$((tries + 1))
				usleep 200000
			done
			for p in "$@"; do echo 1 > "$p/make-it-fail"; done 2>/dev/null
			echo "# faults injected into $# stressor processes" >&2
		fi
		wait $sn
		rc=$?
		cat /tmp/stress.yaml >&3 2>/dev/null
		exit $rc' stress "$mode"
}

pgfree_before=$(vmstat pgfree)
pages_before=$(counter pages/bytes) slab_before=$(counter slab/bytes) stack_before=$(counter stack/bytes)
start=$(date +%s)
# rc is the first round's status that was not 0, and rc_round its round.
rc=0 rc_round=0 round=0 times10=0 ran=
if command -v stress-ng > /dev/null && stress-ng --version > "$out/version" 2>&1; then
	ran=1
	: > "$out/stress.log"
	if [ "$wipe" = 1 ]; then
		# The wipe of free memory beside the stressors, once a second
		# until they are done; "ok", "busy" or "failed" per write.
		(
			while [ ! -e "$out/stop-wipes" ]; do
				if echo 1 2> "$out/wipe.err" > "$sysfs/scrub_free"; then
					echo ok
				elif grep -q busy "$out/wipe.err"; then
					echo busy
				else
					echo "failed $(cat "$out/wipe.err")"
				fi
				sleep 1
			done > "$out/wipes"
		) &
		wiper=$!
	fi
	while [ "$round" -lt "$rounds_max" ] && [ "$times10" -lt 20 ]; do
		round=$((round + 1))
		one_round >> "$out/stress.log" 3> "$out/stress.yaml.$round"
		r=$?
		if [ "$rc" = 0 ] && [ "$r" != 0 ]; then
			rc=$r rc_round=$round
		fi
		times10=$(( ($(vmstat pgfree) - pgfree_before) * 4096 * 10 / (total_kb * 1024) ))
		# Another round only after a clean one or, under fault injection,
		# one in which a stressor failed (2) or ran out of resources (3),
		# as injected allocation failures make them do.
		case "$r" in
		0) ;;
		2 | 3) [ "$mode" = faults ] || break ;;
		*) break ;;
		esac
	done
	if [ "$wipe" = 1 ]; then
		: > "$out/stop-wipes"
		wait "$wiper"
	fi
	ktap_check 0 stress_ng_runs "$(head -n 1 "$out/version")"
else
	rc=127
	ktap_check 1 stress_ng_runs "stress-ng or its libraries missing: $(head -n 1 "$out/version" 2>/dev/null)"
fi
elapsed=$(($(date +%s) - start))

# Faults off again before anything else runs.
injected=0 injected_desc=
if [ "$mode" = faults ] && have_faults; then
	for cap in $fault_caps; do
		echo 0 > "$dbg/$cap/probability"
		left=$(cat "$dbg/$cap/times")
		eval "injected_$cap=\$((budget - left))"
		injected=$((injected + budget - left))
		injected_desc="$injected_desc $cap $((budget - left))"
	done
	echo "$console_levels" > /proc/sys/kernel/printk
fi

[ -z "$ran" ] || sed -nE 's/^stress-ng: (fail|error|warn|metrc): *\[[0-9]+\] /# \1: /p' "$out/stress.log"

# --- verdicts ----------------------------------------------------------------------
if [ -z "$ran" ]; then
	ktap_skip exit_status "stress-ng did not run"
elif [ "$rc" = 125 ]; then
	ktap_check 1 exit_status "could not set up the mount namespace for the run"
elif [ "$rc" = 0 ]; then
	ktap_check 0 exit_status "stress-ng exited 0 in each of $round round(s)"
elif [ "$mode" = faults ] && { [ "$rc" = 2 ] || [ "$rc" = 3 ]; }; then
	# 2: a stressor failed, 3: out of resources; what an injected ENOMEM
	# does to a stressor.  Anything else (5: killed by a signal) fails.
	ktap_check 0 exit_status "stress-ng exited $rc in round $rc_round of $round, expected with allocations failing on purpose"
else
	ktap_check 1 exit_status "stress-ng exited $rc in round $rc_round of $round"
fi

# stress-ng reports a verification failure as a "fail:" line.  Under fault
# injection a system call may fail ("... errno=12 (Out of memory)"); a fail
# line without an errno is corrupted data in any mode.
if [ -n "$ran" ]; then
	if [ "$mode" = faults ]; then
		grep '^stress-ng: fail:' "$out/stress.log" | grep -v 'errno=' > "$out/verify"
	else
		grep '^stress-ng: fail:' "$out/stress.log" > "$out/verify"
	fi
	bad=$(wc -l < "$out/verify")
	[ "$bad" = 0 ]; ktap_check $? no_verification_failures \
		"$bad failure line(s)$(head -n 1 "$out/verify" | sed 's/^/: /')"
else
	ktap_skip no_verification_failures "stress-ng did not run"
fi

# Bytes cycled: pages the page allocator got back during the run (pgfree),
# against the guest's RAM.
pgfree=$(( $(vmstat pgfree) - pgfree_before ))
cycled=$((pgfree * 4096))
times10=$((cycled * 10 / (total_kb * 1024)))
ops=$(cat "$out"/stress.yaml.* 2>/dev/null | awk '
	/- stressor:/ { s = $3; if (!(s in ops)) order[++k] = s }
	/bogo-ops:/ { ops[s] += $2 }
	END { for (i = 1; i <= k; i++) printf " %s=%s", order[i], ops[order[i]] }')
echo "# stressors $stressors (1 each) x $round x $secs seconds in $elapsed s; vm-bytes $((vm_kb / 1024)) MiB, tmpfs $((tmpfs_kb / 1024)) MiB, malloc up to 32 MiB, MemAvailable $((avail_kb / 1024)) MiB"
echo "# bogo ops$ops"
echo "# bytes cycled $cycled ($pgfree pages freed to the page allocator, $((times10 / 10)).$((times10 % 10)) x guest RAM of $((total_kb / 1024)) MiB)"
echo "# bytes scrubbed pages $(( $(counter pages/bytes) - pages_before )) slab $(( $(counter slab/bytes) - slab_before )) stack $(( $(counter stack/bytes) - stack_before ))"
if [ -n "$ran" ]; then
	[ "$times10" -ge 20 ]; ktap_check $? ram_cycled \
		"$((times10 / 10)).$((times10 % 10)) x guest RAM in $round round(s) (at least 2 x; raise harness.stress= if short)"
else
	ktap_skip ram_cycled "stress-ng did not run"
fi

policy_after=$(policy_now)
[ "$policy_after" = "$policy_before" ]; ktap_check $? policy_unchanged "$policy_before -> $policy_after"

# What the kernel logged during the run: after the marker, or all of the
# log if it wrapped past the marker.
dmesg > "$out/dmesg.after"
if grep -qF "$marker" "$out/dmesg.after"; then
	awk -v m="$marker" 'seen; index($0, m) { seen = 1 }' "$out/dmesg.after" > "$out/dmesg.new"
else
	cp "$out/dmesg.after" "$out/dmesg.new"
fi
v=$(grep -c 'sanitize_mem: write after free' "$out/dmesg.new")
[ "$v" = 0 ]; ktap_check $? no_sanitize_verify_reports \
	"$v report(s); sanitize_verify=$(cat $sysfs/verify 2>/dev/null || echo absent)"
# Under fault injection a failed allocation may be reported by design:
# warn_alloc() prints "<comm>: vmalloc error: ..." or "<comm>: page
# allocation failure: ..." with a stack dump.  Those of the stressors are
# left out (and counted); anything else still counts.
if [ "$mode" = faults ]; then
	awk -v list="$out/alloc-failures" '
		/^(\[ *[0-9.]+\] )?stress-ng[^:]*: (vmalloc error|page allocation failure):/ {
			skip = 1; print > list
		}
		!skip { print }
		skip && /<\/TASK>/ { skip = 0 }' "$out/dmesg.new" > "$out/dmesg.judged"
	echo "# allocation failures reported for the stressors: $(cat "$out/alloc-failures" 2>/dev/null | wc -l)"
else
	cp "$out/dmesg.new" "$out/dmesg.judged"
fi
r=$(grep -Ec "$KTAP_KERNEL_REPORTS" "$out/dmesg.judged")
[ "$r" = 0 ]; ktap_check $? no_kernel_reports \
	"$r line(s)$(grep -Em 1 "$KTAP_KERNEL_REPORTS" "$out/dmesg.judged" | sed 's/^/: /')"

if [ "$wipe" = 1 ]; then
	ok=$(grep -c '^ok' "$out/wipes" 2>/dev/null)
	bad=$(grep -c '^failed' "$out/wipes" 2>/dev/null)
	oom=$(grep -Ec 'Out of memory|oom-kill' "$out/dmesg.new")
	[ "${ok:-0}" -gt 0 ] && [ "${bad:-0}" = 0 ] && [ "$oom" = 0 ]
	ktap_check $? wipes_beside_stressors "${ok:-0} wipe(s), ${bad:-0} failed write(s)$(grep -m 1 '^failed' "$out/wipes" | sed 's/^/: /'), $oom OOM line(s)"
fi

if [ "$mode" != faults ]; then
	ktap_skip faults_injected "no fault injection in this test (guest test faults)"
elif ! have_faults; then
	ktap_check 1 faults_injected "no $dbg/failslab or fail_page_alloc: the kernel needs CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC and CONFIG_FAULT_INJECTION_DEBUG_FS"
else
	# Each kind of fault, or its error paths went untried.
	echo "# faults injected $injected ($injected_desc )"
	[ "$injected_failslab" -gt 0 ] && [ "$injected_fail_page_alloc" -gt 0 ]
	ktap_check $? faults_injected "$injected_desc"
fi

ktap_done
