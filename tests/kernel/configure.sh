#!/bin/sh
# Configure one kernel build: allnoconfig, then the given fragments merged
# with the kernel's own scripts/kconfig/merge_config.sh, then olddefconfig.
# merge_config.sh only warns when Kconfig drops a requested option (an unmet
# dependency, a renamed symbol); here every line of every fragment is checked
# against the final .config and a dropped option is an error that names it.
# Nothing is redone while the tree and the fragments are unchanged, so an
# unchanged build stays a no-op.
#
# A fragment given as "--unchecked FILE" is merged like the others but its
# lines are not required to hold: the Debian fragment of the distro
# flavours, where a dependency the minimal base lacks may drop an option
# ("make config-diff" reports each one and why).  A later fragment
# overrides an earlier one, and is what the check requires.
#
# usage: configure.sh SRCDIR OBJDIR [--unchecked] FRAGMENT...
set -eu

usage() { echo "usage: $0 SRCDIR OBJDIR [--unchecked] FRAGMENT..." >&2; exit 2; }
[ $# -ge 3 ] || usage
src=$1 obj=$2
shift 2
fragments= unchecked=
while [ $# -gt 0 ]; do
	case "$1" in
	--unchecked) [ $# -ge 2 ] || usage; unchecked="$unchecked $2"; fragments="$fragments $2"; shift 2 ;;
	*) fragments="$fragments $1"; shift ;;
	esac
done
# shellcheck disable=SC2086 # file names without blanks, a list on purpose
set -- $fragments

mkdir -p "$obj"
inputs=$( (git -C "$src" rev-parse HEAD; cat "$@") | sha256sum | cut -d' ' -f1)
if [ -f "$obj/.config" ] && [ "$(cat "$obj/.fragments.sha256" 2>/dev/null)" = "$inputs" ]; then
	exit 0
fi

echo "configure: $(basename "$obj"): allnoconfig + $(for f; do printf '%s ' "$(basename "$f")"; done)" >&2
rm -f "$obj/.fragments.sha256"
make -s -C "$src" O="$obj" allnoconfig >/dev/null
"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$@" >"$obj/merge_config.log" 2>&1 || {
	cat "$obj/merge_config.log" >&2
	echo "configure: merge_config.sh failed" >&2
	exit 1
}
make -s -C "$src" O="$obj" olddefconfig >/dev/null

# The line each option must have: the one of the last checked fragment
# that names it, unless an unchecked fragment later overrides it.
wanted=$obj/.fragments.wanted
: > "$wanted"
for frag; do
	case " $unchecked " in *" $frag "*) check=0 ;; *) check=1 ;; esac
	sed -n -e 's/^\(CONFIG_[A-Za-z0-9_]*\)=.*/\1/p' \
		-e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1/p' "$frag" |
	while read -r opt; do
		line=$(grep -E "^($opt=|# $opt is not set$)" "$frag" | tail -n 1)
		printf '%s\t%s\t%s\t%s\n' "$opt" "$check" "$frag" "$line"
	done >> "$wanted"
done
dropped=0
# Last mention of each option wins (tac + first occurrence).
tac "$wanted" | awk -F'\t' '!seen[$1]++' | while IFS="$(printf '\t')" read -r opt check frag line; do
	[ "$check" = 1 ] || continue
	case "$line" in
	CONFIG_*=*)
		grep -qxF "$line" "$obj/.config" && continue
		now=$(grep -E "^($opt=|# $opt is not set)" "$obj/.config" || echo "absent")
		;;
	*)
		grep -q "^$opt=" "$obj/.config" || continue
		now=$(grep "^$opt=" "$obj/.config")
		;;
	esac
	echo "configure: $frag asks for '$line' but the final .config has '$now' (unmet dependency or unknown symbol)" >&2
	echo x
done > "$obj/.fragments.dropped"
dropped=$(grep -c x "$obj/.fragments.dropped" || true)
rm -f "$wanted" "$obj/.fragments.dropped"
if [ "$dropped" -gt 0 ]; then
	echo "configure: $dropped requested option(s) were dropped; fix the fragment" >&2
	exit 1
fi
echo "$inputs" > "$obj/.fragments.sha256"
