#!/bin/sh
# Check the series the way a maintainer bisects it: apply the patches one by
# one to a pristine tree and, after each, run checkpatch.pl --strict on the
# patch, check its form (a "subsystem: summary" subject, a body, a
# Signed-off-by) and build the kernel with no warning.  One KTAP line per
# patch, to stderr and LOG.  A patch that fails a check is reported and the
# next ones are still checked; a patch that does not apply ends the run, and
# the ones after it are reported as not checked.  Builds share one object
# directory and ccache, so each step only rebuilds what the patch touched.
#
# environment: SRC, PATCHES, STAMP (as for trees.sh), OBJ (object directory),
# FRAGMENTS (config fragments), JOBS, LOG (where to write the report).
set -eu
# ccache, except for assembler sources (tests/kernel/ccache-cc says why).
ccache_cc=$(cd "$(dirname "$0")/../kernel" && pwd)/ccache-cc

: "${SRC:?}" "${PATCHES:?}" "${OBJ:?}" "${FRAGMENTS:?}" "${JOBS:=2}" "${LOG:?}"
pristine=$SRC/linux-6.12
tree=$SRC/linux-series
git="git -c user.name=sanitize-mem-harness -c user.email=harness@localhost"

say() { echo "$*" | tee -a "$LOG" >&2; }
die() { echo "series-check: $*" >&2; exit 1; }

patches=$(grep -v '^#' "$PATCHES/series" || true)
[ -n "$patches" ] || die "$PATCHES/series is empty"
total=$(echo "$patches" | wc -l)

if [ ! -e "$tree/.git" ]; then
	git -C "$pristine" worktree prune
	git -C "$pristine" worktree add -q -f -B series-check "$tree" pristine
fi
git -C "$tree" checkout -q -f -B series-check pristine
mkdir -p "$(dirname "$LOG")" "$OBJ"
: > "$LOG"
start_all=$(date +%s)
say "KTAP version 1"
say "1..$total"

# check PATCH-FILE: the patch's form, checkpatch, then apply it and build.
# Prints the reason of the first failure; returns 2 if the patch did not
# apply (nothing after it can be checked), 1 on any other failure.  Every
# failure is tested for explicitly: set -e does not hold in a function
# called from a command substitution the same way in every shell.
check() {
	file=$1
	subject=$(sed -n 's/^Subject: \[PATCH[^]]*\] //p' "$file" | head -n 1)
	form=''
	echo "$subject" | grep -Eq '^[a-z0-9/_.-]+( [a-z0-9/_.-]+)*: [^ ]' ||
		form="subject '$subject' is not 'subsystem: summary'"
	grep -q '^Signed-off-by: ' "$file" || form="no Signed-off-by"
	body=$(awk '/^$/ && !b { b = 1; next } b && /^---$/ { exit } b' "$file" |
		grep -v -e '^Signed-off-by:' -e '^$' | wc -l)
	[ "$body" -ge 2 ] || form="the commit message has no body saying why"
	style=''
	(cd "$tree" && perl scripts/checkpatch.pl --strict -q "$file") >"$OBJ/checkpatch.out" 2>&1 ||
		{ cat "$OBJ/checkpatch.out" >&2; style="checkpatch.pl --strict found problems (above)"; }
	if ! (cd "$tree" && $git am -q "$file") >"$OBJ/am.out" 2>&1; then
		cat "$OBJ/am.out" >&2
		git -C "$tree" am --abort 2>/dev/null || true
		echo "does not apply on top of the patches before it"
		return 2
	fi
	# Options of later patches do not exist yet: merge leniently here; the
	# strict check of every option runs on the whole series (make kernel).
	if ! { make -s -C "$tree" O="$OBJ" allnoconfig &&
		"$tree/scripts/kconfig/merge_config.sh" -m -O "$OBJ" "$OBJ/.config" $FRAGMENTS &&
		make -s -C "$tree" O="$OBJ" olddefconfig; } >"$OBJ/config.out" 2>&1; then
		tail -n 20 "$OBJ/config.out" >&2
		echo "the kernel could not be configured (tail above)"
		return 1
	fi
	start=$(date +%s)
	if ! timeout 3600 make -s -C "$tree" O="$OBJ" -j"$JOBS" CC="$ccache_cc gcc" \
			HOSTCC="ccache gcc" bzImage >"$OBJ/build.out" 2>&1; then
		tail -n 30 "$OBJ/build.out" >&2
		echo "the kernel does not build with the patches up to it (tail above)"
		return 1
	fi
	# A warning in code the patch touched is a defect too.
	if grep -E '(warning|error):' "$OBJ/build.out" >&2; then
		echo "the build printed warnings (above)"
		return 1
	fi
	for why in "$form" "$style"; do
		[ -z "$why" ] || { echo "$why"; return 1; }
	done
	echo "checkpatch clean, built in $(( $(date +%s) - start )) s"
}

n=0 fails=0 stopped=''
for p in $patches; do
	n=$((n + 1))
	if [ -n "$stopped" ]; then
		say "not ok $n $p # not checked: $stopped did not apply"
		fails=$((fails + 1))
		continue
	fi
	echo "series-check: [$n/$total] $p" >&2
	rc=0
	why=$(check "$PATCHES/$p") || rc=$?
	if [ "$rc" -eq 0 ]; then
		say "ok $n $p # $why"
	else
		say "not ok $n $p # $why"
		fails=$((fails + 1))
		[ "$rc" -ne 2 ] || stopped=$p
	fi
done
say "# series-check: $total patches, $fails failed, $(( $(date +%s) - start_all )) s"
[ "$fails" -eq 0 ]
