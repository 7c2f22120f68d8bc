# KTAP for the guest's shell tests, sourced by them from the initramfs
# (/usr/libexec/harness/ktap.sh), so that every one prints results the
# same way and the judge (tests/harness/ktap.py) reads them alike:
#
#   ktap_plan N                 "KTAP version 1" and the plan "1..N"
#   ktap_check RC NAME [TEXT]   "ok" when RC is 0, else "not ok"; TEXT, when
#                               given, after "#" on the same line (the
#                               judge's message)
#   ktap_skip NAME REASON       "ok N NAME # SKIP REASON": never a pass
#   ktap_done                   the status to exit with: 0 only when no
#                               check failed and as many ran as planned
#                               (a test that stops early fails)
#
# busybox sh: POSIX shell only.

# The kernel lines the harness fails a cell on (tests/harness/judge.py's
# FATAL, which tests/selftest/test_guest.py holds this to), the
# sanitize_verify report among them: for the guest tests that judge the
# window of the log their own run added (grep -E, busybox).
KTAP_KERNEL_REPORTS='Kernel panic|\bOops\b|\bBUG:|kernel BUG at|WARNING:|Call Trace:|KASAN:|KFENCE:|UBSAN:|general protection fault|Unable to handle|sanitize_mem: write after free'

ktap_n=0
ktap_fails=0
ktap_planned=

ktap_plan() {
	ktap_planned=$1
	echo "KTAP version 1"
	echo "1..$1"
}

ktap_check() {
	ktap_n=$((ktap_n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $ktap_n $2${3:+ # $3}"
	else
		echo "not ok $ktap_n $2${3:+ # $3}"
		ktap_fails=$((ktap_fails + 1))
	fi
}

ktap_skip() {
	ktap_n=$((ktap_n + 1))
	echo "ok $ktap_n $1 # SKIP $2"
}

ktap_done() {
	if [ -n "$ktap_planned" ] && [ "$ktap_n" != "$ktap_planned" ]; then
		echo "# ktap: $ktap_planned planned, $ktap_n reported"
		return 1
	fi
	[ "$ktap_fails" = 0 ]
}
