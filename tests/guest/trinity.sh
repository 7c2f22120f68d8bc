#!/bin/sh
# Debian's trinity, the system call fuzzer (issue 34): a budget of random
# system calls from trinity's children, all of them an unprivileged user,
# under a hard time limit.  The kernel must report nothing (the judge reads
# every KASAN, KFENCE, UBSAN, lockdep, WARNING and sanitize_verify report
# on the console, tests/harness/judge.py FATAL), the sanitize_mem policy
# must be what it was, and the budget must be spent before the limit: a
# run still going at the limit is a hang.
#
# usage: trinity              the run
#        trinity --count LOG  what trinity's output LOG says (below; tested
#                             on the host by tests/selftest/test_guest.py)
# kernel command line:
#   harness.trinity=SYSCALLS,SECONDS  the budget and the time limit
#                                     (default 100000,600)
set -u

# What trinity prints on its stdout with -q (its "[main]" lines; the calls
# themselves only go to its log files, which -l off turns off):
#   [main] 10003 iterations. [F:7123 S:2880 HI:1234]    every 10000 calls
#   [main] Bailing main loop because Completed maximum number of operations..
#                       (the reason, then a full stop of its own)
#   [main] Ran 1000004 syscalls. Successes: 301234  Failures: 698770
# Printed, a line each: ran=, ok=, failed= (its last total, empty if it
# never printed one: it was killed), progress= (its last count of
# iterations) and why= (why its main loop ended, empty if it did not).
# Its children share that stdout, so anything a fuzzed write() put there is
# in the file too: only whole lines of the main process count, the last of
# each kind.
trinity_count() {
	awk '
	/^\[main\] Ran [0-9]+ syscalls\. Successes: [0-9]+  Failures: [0-9]+$/ {
		ran = $3; ok = $6; failed = $8
	}
	/^\[main\] [0-9]+ iterations\. \[F:[0-9]+ S:[0-9]+ HI:[0-9]+/ { progress = $2 }
	/^\[main\] Bailing main loop because .+\.$/ {
		n = length("[main] Bailing main loop because ")
		why = substr($0, n + 1, length($0) - n - 1)
	}
	END {
		print "ran=" ran; print "ok=" ok; print "failed=" failed
		print "progress=" progress; print "why=" why
	}' "$1"
}

if [ "${1:-}" = --count ]; then
	trinity_count "$2"
	exit
fi

syscalls=100000 limit=600
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	harness.trinity=*,*)
		v=${arg#harness.trinity=}
		syscalls=${v%,*} limit=${v#*,}
		;;
	esac
done
sysfs=/sys/kernel/mm/sanitize
nobody=65534
# By path: busybox's setpriv, earlier on PATH, cannot change uids.
trinity=/usr/bin/trinity setpriv=/usr/bin/setpriv
out=/tmp/trinity.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT

. /usr/libexec/harness/ktap.sh

# The policy as the kernel reports it: every file of the directory that is
# not a counter.
policy_now() {
	for f in policy requested verify clear_once; do
		printf '%s=%s ' "$f" "$(cat "$sysfs/$f" 2>/dev/null || echo absent)"
	done
}
# A process that has not exited (a zombie has).
running() { grep -q '^State:[[:space:]]*[^Z]' "/proc/$1/status" 2>/dev/null; }
# The uids (real, effective, saved, filesystem) of every process that runs
# trinity's program, a line each.  By its executable, not its name: a
# child may rename itself (prctl is fuzzed too).
trinity_uids() {
	for d in /proc/[0-9]*; do
		[ "$(readlink "$d/exe" 2>/dev/null)" = $trinity ] &&
			sed -n 's/^Uid:[[:space:]]*//p' "$d/status" 2>/dev/null
	done
}
# The processes of nobody's still there, as pid:state.
leftovers() {
	for d in /proc/[0-9]*; do
		grep -q "^Uid:[[:space:]]*$nobody[[:space:]]" "$d/status" 2>/dev/null &&
			echo "${d#/proc/}:$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "$d/status")"
	done
}
meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }

# Trinity refuses to run as root, and the --dropprivs of Debian's trinity
# (1.9+git20230109) drops nothing: its children keep uid 0 (drop_privs()
# is never called; only the files it opens are chosen as nobody's).  So
# all of trinity runs as nobody, through util-linux's setpriv: no groups,
# an empty capability bounding set and no_new_privs, so nothing it executes
# gets privileges back.  As nobody it cannot reboot, kexec or load a
# module, signal or trace the harness's processes (root's), open the
# console (/dev/console and /dev/ttyS0 are root's, 0600; the guest's init
# has no controlling terminal, so /dev/tty is none either), write to the
# kernel log or change the console's log level (CAP_SYSLOG): none of that
# needs excluding.  Its stdin is /dev/null and its output a file, so what
# it and its fuzzed calls write can neither hide a kernel report on the
# console nor fake one.
as_nobody="$setpriv --reuid=$nobody --regid=$nobody --clear-groups --bounding-set=-all --no-new-privs"
# -q: not every call on stdout; -l off: no log file per child, fsync()ed
# before every call.  -a 64: the debug kernel has no IA32 emulation, and a
# 32-bit call (int 0x80) kills the child that makes it before trinity
# gives them up, in every new child.  --disable-fds=sockets: Debian's
# trinity reads past its table of 45 protocols when it sets a random
# option on a socket (rnd() % PF_MAX, 46; fixed upstream in dfa75c437,
# April 2023), and its main process does that to every socket it opens
# for its children at start-up: it segfaulted there in the first boot.
# The children still make sockets of their own (socket() is fuzzed).
# -C 16: trinity's default is 4 children a CPU, 8 here; calls that block
# leave the vCPUs idle, and 16 made 385 calls a second where 8 made 231
# (40000 calls each, one boot each, the host shared with other builds).
trinity_args="-q -l off -a 64 --disable-fds=sockets -C 16"

# Trinity's own failures, after which another trinity carries on with
# what is left of the budget: its bookkeeping in shared memory, which
# its fuzzed children can overwrite, and its main process killed by a
# signal (no reason printed).  Any other early stop ends the run: "kernel
# became tainted." (a report), "UID changed.", a fork() failure, ...
own_failure() {
	case "$1" in
	"" | "some kind of locking catastrophe" | "Lost track of a child." | \
	"shm corruption - Found a pid out of range." | "SHM was corrupted!" | \
	"Child reparenting problem" | "Main process disappeared.") return 0 ;;
	esac
	return 1
}

ktap_plan 5

if $trinity -L > "$out/version" 2>&1 && $setpriv --version >> "$out/version" 2>&1; then
	ktap_check 0 trinity_runs "$(grep -m 1 '^Trinity ' "$out/version"), $(tail -n 1 "$out/version")"
else
	ktap_check 1 trinity_runs "trinity, setpriv or their libraries missing: $(tail -n 1 "$out/version" 2>/dev/null)"
	for t in finished syscalls_issued children_unprivileged policy_unchanged; do
		ktap_skip $t "trinity did not run"
	done
	ktap_done
	exit
fi

policy_before=$(policy_now)
taint_before=$(cat /proc/sys/kernel/tainted)
start=$(date +%s)
deadline=$((start + limit))
mem_start=$(meminfo MemAvailable)
memmin=$mem_start
: > "$out/uids"

# One trinity for what is left of the budget ($1), until the deadline.
# In a mount namespace of its own, the rootfs read-only and /tmp a small
# tmpfs of its own (its working directory): what it creates cannot fill
# the guest's RAM through the rootfs or the guest's /tmp, nor touch the
# files of this script, and it is gone with trinity.  While it runs, who
# its processes are and how low free memory gets, every 10 s.  At the
# deadline: SIGINT, which makes trinity stop its children and print its
# total; a minute later, and after any trinity, SIGKILL to every process
# of nobody's (kill -1 as nobody reaches those and nothing else).
# Sets seed, rc (trinity's exit status) and stopped (empty: trinity ended
# before the deadline).
round() {
	seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
	# shellcheck disable=SC2086 # word lists on purpose
	unshare -m --propagation private sh -c '
		mount -o remount,bind,ro / &&
		mount -t tmpfs -o size=64m,mode=1777 trinity-tmp /tmp &&
		cd /tmp || exit 125
		exec "$@"' trinity-ns $as_nobody $trinity $trinity_args -N "$1" -s "$seed" \
		< /dev/null > "$out/trinity.log" 2>&1 &
	pid=$!
	stopped=
	while running "$pid"; do
		trinity_uids >> "$out/uids"
		m=$(meminfo MemAvailable)
		[ "$m" -ge "$memmin" ] || memmin=$m
		if [ "$(date +%s)" -ge "$deadline" ]; then
			stopped=1
			kill -INT "$pid"
			for i in $(seq 60); do running "$pid" && sleep 1; done
			break
		fi
		sleep 10
	done
	$as_nobody kill -KILL -1 2>/dev/null
	# Not wait for one stuck in the kernel: that would hang this test
	# instead of reporting it (leftovers, below).
	for i in $(seq 10); do running "$pid" && sleep 1; done
	if running "$pid"; then
		rc="none (still running after SIGKILL)"
	else
		wait "$pid"
		rc=$?
	fi
}

# Rounds until the budget is spent, the deadline passes, or a round stops
# for a reason that is not trinity's own.  A round that printed no total
# counts its last progress line (a lower bound).
total=0 rounds=0 why= stop=
while [ "$total" -lt "$syscalls" ]; do
	rounds=$((rounds + 1))
	round $((syscalls - total))
	trinity_count "$out/trinity.log" > "$out/count"
	ran=$(sed -n 's/^ran=//p' "$out/count")
	progress=$(sed -n 's/^progress=//p' "$out/count")
	why=$(sed -n 's/^why=//p' "$out/count")
	n=${ran:-${progress:-0}}
	total=$((total + n))
	# Only lines of known forms reach the console: trinity prints others,
	# like "WARNING: please grow IOCTL_GROUPS_MAX.", that the judge would
	# take for the kernel's.
	[ "$rounds" -gt 1 ] || sed -nE 's/^\[main\] (32-bit syscalls: [0-9a-z ,.]+  64-bit syscalls: [0-9a-z ,]+\.|Enabled [0-9]+\/[0-9]+ fd providers\.)/# trinity: \1/p' \
		"$out/trinity.log"
	echo "# trinity: round $rounds (seed $seed): ${ran:-no total printed, at least ${progress:-0}} syscalls${ran:+ ($(sed -n 's/^ok=//p' "$out/count") succeeded, $(sed -n 's/^failed=//p' "$out/count") failed)}, exit status $rc, ${why:-no reason printed}"
	if [ -n "$stopped" ]; then
		stop="still running at the limit of $limit s"
	elif [ "$rc" = 125 ]; then
		stop="could not set up the mount namespace"
	elif [ "$why" = "Completed maximum number of operations." ]; then
		continue
	elif ! own_failure "$why"; then
		stop="trinity stopped: $why"
	elif [ "$n" = 0 ]; then
		stop="trinity stopped before its first system call: ${why:-exit status $rc}"
	else
		continue
	fi
	break
done
elapsed=$(($(date +%s) - start))
# SIGKILL takes effect when a task next leaves the kernel: a few seconds
# for the last ones, unless one is stuck there.
sleep 5
left=$(leftovers)

echo "# trinity: $total syscalls in $rounds round(s) and $elapsed s, $((total / elapsed)) a second; taint $taint_before -> $(cat /proc/sys/kernel/tainted); MemAvailable $((mem_start / 1024)) MiB, at least $((memmin / 1024)) MiB during the run"

# --- verdicts ----------------------------------------------------------------------
if [ -n "$stop" ]; then
	ktap_check 1 finished "$stop (round $rounds, $total syscalls by then)"
elif [ -n "$left" ]; then
	ktap_check 1 finished "processes of uid $nobody left after SIGKILL (pid:state): $(echo $left)"
else
	ktap_check 0 finished "in $elapsed s of $limit"
fi

[ "$total" -ge "$syscalls" ]; ktap_check $? syscalls_issued "$total of at least $syscalls"

n=$(wc -l < "$out/uids")
bad=$(grep -cv "^$nobody[[:space:]]*$nobody[[:space:]]*$nobody[[:space:]]*$nobody\$" "$out/uids")
[ "$n" -gt 0 ] && [ "$bad" = 0 ]; ktap_check $? children_unprivileged \
	"$n sightings of trinity's processes, $bad not uid $nobody$(grep -vm 1 "^$nobody[[:space:]]" "$out/uids" | sed 's/^/: /')"

policy_after=$(policy_now)
[ "$policy_after" = "$policy_before" ]; ktap_check $? policy_unchanged "$policy_before-> $policy_after"

ktap_done
