#!/bin/sh
# Check the series the way a maintainer bisects it: apply the patches one by
# one to a pristine tree and, after each, run checkpatch.pl --strict on the
# patch, check its form (a "subsystem: summary" subject, a body, a
# Signed-off-by) and build the kernel.  Stops at the first patch that fails,
# naming it.  Builds share one object directory and ccache, so each step
# only rebuilds what the patch touched.
#
# environment: SRC, PATCHES, STAMP (as for trees.sh), OBJ (object directory),
# FRAGMENTS (config fragments), JOBS, LOG (where to write the report).
set -eu

: "${SRC:?}" "${PATCHES:?}" "${OBJ:?}" "${FRAGMENTS:?}" "${JOBS:=2}" "${LOG:?}"
pristine=$SRC/linux-6.12
tree=$SRC/linux-series
git="git -c user.name=sanitize-mem-harness -c user.email=harness@localhost"

die() { echo "series-check: $*" >&2; echo "series-check: FAIL: $*" >> "$LOG"; exit 1; }

patches=$(grep -v '^#' "$PATCHES/series" || true)
[ -n "$patches" ] || die "$PATCHES/series is empty"
total=$(echo "$patches" | wc -l)

if [ ! -e "$tree/.git" ]; then
	git -C "$pristine" worktree prune
	git -C "$pristine" worktree add -q -f -B series-check "$tree" pristine
fi
git -C "$tree" checkout -q -f -B series-check pristine
mkdir -p "$(dirname "$LOG")"
: > "$LOG"
mkdir -p "$OBJ"

n=0
for p in $patches; do
	n=$((n + 1))
	file=$PATCHES/$p
	echo "series-check: [$n/$total] $p" >&2
	subject=$(sed -n 's/^Subject: \[PATCH[^]]*\] //p' "$file" | head -n 1)
	echo "$subject" | grep -Eq '^[a-z0-9/_.-]+( [a-z0-9/_.-]+)*: [^ ]' ||
		die "$p: subject '$subject' is not 'subsystem: summary'"
	grep -q '^Signed-off-by: ' "$file" || die "$p: no Signed-off-by"
	body=$(awk '/^$/ && !b { b = 1; next } b && /^---$/ { exit } b' "$file" |
		grep -v -e '^Signed-off-by:' -e '^$' | wc -l)
	[ "$body" -ge 2 ] || die "$p: the commit message has no body saying why"
	(cd "$tree" && perl scripts/checkpatch.pl --strict -q "$file") >"$OBJ/checkpatch.out" 2>&1 ||
		{ cat "$OBJ/checkpatch.out" >&2; die "$p: checkpatch.pl --strict found problems"; }
	(cd "$tree" && $git am -q "$file") >"$OBJ/am.out" 2>&1 ||
		{ cat "$OBJ/am.out" >&2; git -C "$tree" am --abort 2>/dev/null || true
		  die "$p: does not apply on top of the patches before it"; }
	# Options of later patches do not exist yet: merge leniently here; the
	# strict check of every option runs on the whole series (make kernel).
	make -s -C "$tree" O="$OBJ" allnoconfig >/dev/null
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$OBJ" "$OBJ/.config" $FRAGMENTS >/dev/null 2>&1
	make -s -C "$tree" O="$OBJ" olddefconfig >/dev/null
	start=$(date +%s)
	make -s -C "$tree" O="$OBJ" -j"$JOBS" CC="ccache gcc" HOSTCC="ccache gcc" \
		bzImage >"$OBJ/build.out" 2>&1 ||
		{ tail -n 30 "$OBJ/build.out" >&2; die "$p: the kernel does not build with the patches up to it"; }
	# A warning in code the patch touched is a defect too.
	if grep -E '(warning|error):' "$OBJ/build.out" >&2; then
		die "$p: the build printed warnings"
	fi
	echo "ok $n $p (checkpatch clean, built in $(( $(date +%s) - start )) s)" | tee -a "$LOG" >&2
done
echo "series-check: all $total patches apply, build and pass checkpatch --strict" | tee -a "$LOG" >&2
