#!/bin/sh
# Every option of the distro areas where a built distro kernel differs
# from Debian's configuration, and why (debian.py diff), for each kernel
# named that takes Debian's values (@debian); the others are skipped.
#
# usage: config-diff.sh [--brief] KERNEL...
# environment: OBJ (build/obj), PRISTINE and PATCHED (the two trees),
# DEBIAN_CONFIG (Debian's config file), OUT (one KERNEL.txt each).
# Prints each report, or with --brief only its last line (the count).
set -eu

brief=
[ "${1:-}" = --brief ] && { brief=1; shift; }
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
fragments_dir=$top/Kconfig-fragments
: "${OBJ:?}" "${PRISTINE:?}" "${PATCHED:?}" "${DEBIAN_CONFIG:?}" "${OUT:?}"
mkdir -p "$OUT"

for k in "$@"; do
	eval "$(python3 -m harness kernel "$k")"
	case "$fragments" in *@debian*) ;; *) continue ;; esac
	case "$tree" in vanilla) src=$PRISTINE ;; *) src=$PATCHED ;; esac
	frags=
	for f in $fragments; do
		[ "$f" = @debian ] || frags="$frags $fragments_dir/$f"
	done
	# $frags: one path per fragment, split on purpose.
	# shellcheck disable=SC2086
	python3 "$here/debian.py" diff "$src" "$fragments_dir/distro.areas" "$DEBIAN_CONFIG" \
		"$OBJ/$k/.config" "$k" $frags >"$OUT/$k.txt" || {
		echo "config-diff: debian.py diff failed for $k" >&2
		exit 1
	}
	if [ -n "$brief" ]; then
		echo "$(tail -n 1 "$OUT/$k.txt") ($OUT/)"
	else
		cat "$OUT/$k.txt"
	fi
done
