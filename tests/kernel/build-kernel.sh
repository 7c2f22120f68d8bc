#!/bin/sh
# Configure and build one kernel of policy/kernels, out of tree in
# OBJ/NAME/ with ccache: its tree (pristine or patched), allnoconfig plus
# its fragments (configure.sh); "@debian" is made here from Debian's
# configuration for the areas of distro.areas (debian.py), written to
# OBJ/NAME/debian.config so the build shows what it took.
#
# usage: build-kernel.sh NAME
# environment: OBJ (build/obj), PRISTINE and PATCHED (the two trees),
# DEBIAN_CONFIG (Debian's config file), JOBS.
set -eu

[ $# -eq 1 ] || { echo "usage: $0 NAME" >&2; exit 2; }
name=$1
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
fragments_dir=$top/Kconfig-fragments
: "${OBJ:?}" "${PRISTINE:?}" "${PATCHED:?}"

# Each table is read before eval: a failing command substitution inside
# eval would not stop set -e.
fields=$(python3 -m harness kernel "$name") || exit 1
eval "$fields"
# Another architecture: ARCH= and CROSS_COMPILE= reach every make below,
# configure.sh's included, through the environment.
how=$(python3 -m harness arch "$arch") || exit 1
eval "$how"
if [ -n "$karch" ]; then
	command -v "${cross}gcc" >/dev/null || {
		echo "kernel: $name is an $arch kernel and ${cross}gcc is missing (make deps)" >&2
		exit 1
	}
	export ARCH="$karch" CROSS_COMPILE="$cross"
fi
case "$tree" in
vanilla) src=$PRISTINE ;;
patched) src=$PATCHED ;;
esac
obj=$OBJ/$name
mkdir -p "$obj"

# Nothing to do when nothing the build reads changed since it last
# succeeded (build-stamp.py: the tree's HEAD and a clean status, the
# fragments, these scripts, the outputs untouched): a no-op kernel make
# alone takes ~9 s.  The stamp goes before anything is rebuilt, and a new
# one is written only when the build succeeded, from the inputs as they
# were when it started.
stamp=$obj/build.stamp
# shellcheck disable=SC2086 # a list of fragment names on purpose
if why=$(python3 "$here/build-stamp.py" check "$stamp" "$src" "$obj" $fragments); then
	echo "kernel: $name up to date (nothing it is built from changed; build/obj/$name/build.stamp)"
	exit 0
fi
echo "kernel: $name: checking the build ($why)"
rm -f "$stamp"

args=
for frag in $fragments; do
	if [ "$frag" = @debian ]; then
		: "${DEBIAN_CONFIG:?}"
		python3 "$here/debian.py" fragment "$src" "$fragments_dir/distro.areas" \
			"$DEBIAN_CONFIG" > "$obj/debian.config.tmp" || exit 1
		# Rewritten only when it changed, so an unchanged kernel stays a no-op.
		if cmp -s "$obj/debian.config.tmp" "$obj/debian.config"; then
			rm -f "$obj/debian.config.tmp"
		else
			mv "$obj/debian.config.tmp" "$obj/debian.config"
		fi
		args="$args --unchecked $obj/debian.config"
	else
		args="$args $fragments_dir/$frag"
	fi
done
# shellcheck disable=SC2086 # a list of arguments on purpose
"$here/configure.sh" "$src" "$obj" $args || exit 1

echo "kernel: building $name ($tree tree, $flavour flavour, $arch; build/obj/$name, -j${JOBS:-2})"
start=$(date +%s)
make --no-print-directory -s -j"${JOBS:-2}" CC="$here/ccache-cc ${cross}gcc" HOSTCC="ccache gcc" \
	-C "$src" O="$obj" "$target" > "$obj/build.log" 2>&1 || {
	tail -n 30 "$obj/build.log" >&2
	echo "kernel: the $name build failed (full log: build/obj/$name/build.log)" >&2
	exit 1
}
python3 "$here/build-stamp.py" seal "$obj/build.stamp.inputs" "$obj" > "$stamp.tmp"
mv "$stamp.tmp" "$stamp"
rm -f "$obj/build.stamp.inputs"
echo "kernel: $name done in $(( $(date +%s) - start )) s"
