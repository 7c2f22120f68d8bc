#!/bin/sh
# Configure one kernel build: allnoconfig, then the given fragments merged
# with the kernel's own scripts/kconfig/merge_config.sh, then olddefconfig.
# merge_config.sh only warns when Kconfig drops a requested option (an unmet
# dependency, a renamed symbol); here every line of every fragment is checked
# against the final .config and a dropped option is an error that names it.
# Nothing is redone while the tree and the fragments are unchanged, so an
# unchanged build stays a no-op.
#
# usage: configure.sh SRCDIR OBJDIR FRAGMENT...
set -eu

[ $# -ge 3 ] || { echo "usage: $0 SRCDIR OBJDIR FRAGMENT..." >&2; exit 2; }
src=$1 obj=$2
shift 2

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

dropped=0
for frag; do
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			grep -qxF "$line" "$obj/.config" && continue
			opt=${line%%=*}
			now=$(grep -E "^($opt=|# $opt is not set)" "$obj/.config" || echo "absent")
			;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }
			opt=${opt%% *}
			grep -q "^$opt=" "$obj/.config" || continue
			now=$(grep "^$opt=" "$obj/.config")
			;;
		*) continue ;;
		esac
		echo "configure: $frag asks for '$line' but the final .config has '$now' (unmet dependency or unknown symbol)" >&2
		dropped=$((dropped + 1))
	done < "$frag"
done
if [ "$dropped" -gt 0 ]; then
	echo "configure: $dropped requested option(s) were dropped; fix the fragment" >&2
	exit 1
fi
echo "$inputs" > "$obj/.fragments.sha256"
