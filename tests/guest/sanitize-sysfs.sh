#!/bin/sh
# /sys/kernel/mm/sanitize/ as docs/design.md promises it: the policy is
# read-only, every component has objects and bytes counters, and the
# counters of the components the policy enables really move; the wipe of
# free memory (scrub_free, SysRq W) is root's, takes "1" and nothing else,
# and counts its runs, whatever the policy.
dir=/sys/kernel/mm/sanitize
. /usr/libexec/harness/ktap.sh

ktap_plan 12
policy=$(cat $dir/policy 2>/dev/null)
[ -n "$policy" ]; ktap_check $? policy_readable "policy is '$policy'"

mode=$(stat -c %a $dir/policy 2>/dev/null)
[ "$mode" = 444 ]; ktap_check $? policy_mode_0444 "mode $mode"

# Even root must not change the policy after boot.
if echo off > $dir/policy 2>/dev/null; then r=1; else r=0; fi
[ "$(cat $dir/policy)" = "$policy" ] && [ $r = 0 ]; ktap_check $? policy_write_refused

missing=
for c in pages slab stack; do
	for f in objects bytes; do
		v=$(cat $dir/$c/$f 2>/dev/null)
		case "$v" in ''|*[!0-9]*) missing="$missing $c/$f" ;; esac
	done
done
[ -z "$missing" ]; ktap_check $? counters_present "missing or not a number:$missing"

# Make every component do work: allocate and free memory, exit a task.
sh -c 'x=$(head -c 1000000 /dev/zero | tr "\0" a); echo ${#x} > /dev/null'

component_on() {
	case ",$policy," in
	,full,) return 0 ;;
	*",$1,"*) return 0 ;;
	esac
	return 1
}
moved=
still=
for c in pages slab; do
	if component_on $c; then
		[ "$(cat $dir/$c/objects)" -gt 0 ] && moved="$moved $c" || still="$still $c"
	fi
done
[ -z "$still" ]; ktap_check $? enabled_counters_move "no scrub counted for:$still"

stack_before=$(cat $dir/stack/objects)
/bin/true
stack_after=$(cat $dir/stack/objects)
if component_on stack; then
	[ "$stack_after" -gt "$stack_before" ]
	ktap_check $? stack_counter_moves_on_exit "$stack_before -> $stack_after"
else
	ktap_skip stack_counter_moves_on_exit "stack is not in policy $policy"
fi

# The kernel's own "mem auto-init" line keeps its mainline meaning:
# "heap free:on" only when init_on_free=1 is in force (it promises slab
# objects too), not when the sanitize_mem "pages" component shares its key.
want=off
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	init_on_free=1|init_on_free=on|init_on_free=y) want=on ;;
	init_on_free=*) want=off ;;
	esac
done
case " $(cat /proc/cmdline) " in *" page_poison=1 "*|*" page_poison=on "*) want=off ;; esac
line=$(dmesg | grep -o 'mem auto-init: stack:.*' | head -n 1)
case "$line" in
*"heap free:$want") r=0 ;;
*) r=1 ;;
esac
ktap_check $r meminit_line_heap_free "want heap free:$want with policy $policy, got '${line:-no mem auto-init line}'"

# The marks cost no memory: no page_ext table (a kernel of this harness
# has no other page_ext user, so any allocation would be sanitize_mem's).
ext=$(dmesg | grep -o 'allocated [0-9]* bytes of page_ext' | head -n 1)
[ -z "$ext" ]; ktap_check $? no_page_ext "${ext:-}"

# The wipe of free memory (issue 35): write-only, root's alone.
mode=$(stat -c %a $dir/scrub_free 2>/dev/null)
[ "$mode" = 200 ]; ktap_check $? scrub_free_mode_0200 "mode ${mode:-absent}"

runs=$(cat $dir/scrub_free_runs 2>/dev/null)
if echo 2 > $dir/scrub_free 2>/dev/null; then r=1; else r=0; fi
[ $r = 0 ] && [ "$(cat $dir/scrub_free_runs 2>/dev/null)" = "$runs" ]
ktap_check $? scrub_free_refuses_2 "runs ${runs:-absent} -> $(cat $dir/scrub_free_runs 2>/dev/null)"

# The twin of the refusal: "1" runs a wipe, its figures are numbers.
if echo 1 > $dir/scrub_free; then r=0; else r=1; fi
after=$(cat $dir/scrub_free_runs 2>/dev/null)
figures=
for f in pages objects bytes skipped ns; do
	v=$(cat $dir/scrub_free_$f 2>/dev/null)
	case "$v" in ''|*[!0-9]*) figures="$figures $f" ;; esac
done
[ $r = 0 ] && [ "$after" = $((runs + 1)) ] && [ -z "$figures" ]
ktap_check $? scrub_free_runs_a_wipe "write status $r, runs $runs -> $after, not a number:$figures"

# SysRq W queues the same wipe: it runs within a few seconds.
echo W > /proc/sysrq-trigger
n=0
while [ "$(cat $dir/scrub_free_runs)" = "$after" ] && [ $n -lt 100 ]; do
	usleep 100000
	n=$((n + 1))
done
[ "$(cat $dir/scrub_free_runs)" = $((after + 1)) ]
ktap_check $? sysrq_w_runs_a_wipe "runs $after -> $(cat $dir/scrub_free_runs) after $n tenths of a second"

ktap_done
