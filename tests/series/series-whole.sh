#!/bin/sh
# The checks a maintainer's build bots run on a whole series, beyond
# building each patch (tests/series/series-check.sh): on the patched tree
# (PATCHED) against the pristine one (PRISTINE), with the lab kernel's
# configuration (FRAGMENTS).  One KTAP line per check, to stdout and LOG:
#
#   sanitize_mem_n_builds   CONFIG_SANITIZE_MEM=n builds with no warning
#   flags_compile_to_0      with =n, __GFP_SENSITIVE and SLAB_SANITIZE are 0,
#                           so no caller needs an #ifdef (a module with
#                           static_assert()s; the same module must fail to
#                           build against the =y kernel, or the check
#                           proves nothing)
#   w1_no_new_warnings      make W=1 on every .c file the series touches:
#                           no warning the pristine tree does not have
#   sparse_no_new_warnings  the same with sparse (C=2)
#   i386_highmem_builds     ARCH=i386 with HIGHMEM4G builds with no warning,
#                           and the code that clears and checks pages maps
#                           them with kmap_local_page() (a highmem page has
#                           no linear address: page_address() is NULL); the
#                           x86_64 objects, which need no mapping, are the
#                           control that the test tells the two apart
#   arm64_builds            ARCH=arm64 (gcc-aarch64-linux-gnu) builds with
#                           no warning
#   gfp_bits_as_vanilla     __GFP_SENSITIVE takes no gfp bit: on arm64 with
#                           MTE (KASAN_HW_TAGS), LOCKDEP and SLAB_OBJ_EXT,
#                           where 6.12's __GFP_BITS_SHIFT is highest and
#                           leaves one bit beside the xarray's three marks,
#                           the patched tree's shift is the pristine one's
#                           (read from a probe compiled in each), and
#                           lib/radix-tree.c, whose BUILD_BUG_ON holds the
#                           sum to 32, builds
#
# Warnings are compared without line and column numbers, per file, as a
# multiset: a warning the series adds is new even if the file had others.
#
# environment: PRISTINE, PATCHED (trees), OBJ (scratch object directories
# go under it), FRAGMENTS, MTE_FRAGMENTS (the arm64 MTE kernel's, for the
# gfp bits), JOBS, LOG.
set -u

: "${PRISTINE:?}" "${PATCHED:?}" "${OBJ:?}" "${FRAGMENTS:?}" "${MTE_FRAGMENTS:?}" "${JOBS:=2}" "${LOG:?}"
mkdir -p "$OBJ" "$(dirname "$LOG")"
# make -C runs in the tree: O= must not be relative
OBJ=$(cd "$OBJ" && pwd)
: > "$LOG"
start_all=$(date +%s)
n=0
fails=0
say() { echo "$*" | tee -a "$LOG"; }
result() { # status name detail
	n=$((n + 1))
	if [ "$1" = ok ]; then
		say "ok $n $2${3:+ # $3}"
	else
		say "not ok $n $2${3:+ # $3}"
		fails=$((fails + 1))
	fi
}
progress() { echo "series-whole: $*" >&2; }
# The architecture of the next kmake and configure calls: the host's, or
# ARCH= and CROSS_COMPILE= of another.
ARCH_ARGS='' CROSS=''
kmake() { # tree obj args...
	t=$1 o=$2
	shift 2
	# shellcheck disable=SC2086 # ARCH_ARGS: variable assignments on purpose
	timeout 3600 make -s -C "$t" O="$o" -j"$JOBS" $ARCH_ARGS CC="ccache ${CROSS}gcc" \
		HOSTCC="ccache gcc" "$@"
}
configure() { # tree obj extra-kconfig-lines
	mkdir -p "$2"
	# the extra lines as a last fragment, so that they override the others
	printf '%s\n' "$3" > "$2/extra.config"
	kmake "$1" "$2" allnoconfig >/dev/null 2>&1 &&
	"$1/scripts/kconfig/merge_config.sh" -m -O "$2" "$2/.config" $FRAGMENTS \
		"$2/extra.config" >/dev/null 2>&1 &&
	kmake "$1" "$2" olddefconfig >/dev/null 2>&1
}

say "KTAP version 1"
say "1..7"

# --- CONFIG_SANITIZE_MEM=n ----------------------------------------------------
objn=$OBJ/sanitize-mem-n
progress "CONFIG_SANITIZE_MEM=n: configuring and building $objn"
if ! configure "$PATCHED" "$objn" "# CONFIG_SANITIZE_MEM is not set"; then
	result fail sanitize_mem_n_builds "configuration failed"
elif grep -q '^CONFIG_SANITIZE_MEM=y' "$objn/.config"; then
	result fail sanitize_mem_n_builds "CONFIG_SANITIZE_MEM stayed y"
elif ! kmake "$PATCHED" "$objn" bzImage > "$objn/build.out" 2>&1; then
	tail -n 20 "$objn/build.out" >&2
	result fail sanitize_mem_n_builds "the build failed (tail above, $objn/build.out)"
elif grep -E '(warning|error):' "$objn/build.out" >&2; then
	result fail sanitize_mem_n_builds "the build printed warnings (above)"
else
	result ok sanitize_mem_n_builds "built in $(( $(date +%s) - start_all )) s"
fi

# --- the flags are 0 without the option ----------------------------------------
mod=$OBJ/flags-module
rm -rf "$mod" && mkdir -p "$mod"
cat > "$mod/flags.c" <<'EOF'
// SPDX-License-Identifier: GPL-2.0
/* Callers use the flags without #ifdef: they must be 0 without the option. */
#include <linux/gfp.h>
#include <linux/module.h>
#include <linux/slab.h>
static_assert((__force unsigned long)__GFP_SENSITIVE == 0);
static_assert((__force unsigned long)SLAB_SANITIZE == 0);
MODULE_LICENSE("GPL");
EOF
echo 'obj-m := flags.o' > "$mod/Kbuild"
flags_build() { # obj: builds the module against that kernel
	rm -f "$mod/flags.o"
	kmake "$PATCHED" "$1" M="$mod" flags.o > "$mod/build-$(basename "$1").out" 2>&1
}
lab=$(dirname "$OBJ")/lab-patched
if [ ! -f "$objn/vmlinux" ]; then
	result fail flags_compile_to_0 "no CONFIG_SANITIZE_MEM=n kernel to build against"
elif ! flags_build "$objn"; then
	grep -E 'error' "$mod/build-$(basename "$objn").out" | head -n 5 >&2
	result fail flags_compile_to_0 "static_assert failed with CONFIG_SANITIZE_MEM=n"
elif [ ! -f "$lab/vmlinux" ]; then
	result fail flags_compile_to_0 "no lab-patched kernel ($lab) for the =y control"
elif flags_build "$lab"; then
	result fail flags_compile_to_0 "the check passes with CONFIG_SANITIZE_MEM=y too: it proves nothing"
elif ! grep -q 'static assertion failed' "$mod/build-lab-patched.out"; then
	tail -n 5 "$mod/build-lab-patched.out" >&2
	result fail flags_compile_to_0 "the =y control failed, but not on the static_assert()s"
else
	result ok flags_compile_to_0 "0 with =n; the same static_assert()s fail with =y"
fi

# --- W=1 and sparse on the files the series touches ------------------------------
files=$(git -C "$PATCHED" diff --name-only pristine..HEAD -- '*.c' | sort)
# Only the files the lab configuration compiles: the others have no rule.
built=
for f in $files; do
	[ -f "$lab/${f%.c}.o" ] && built="$built ${f%.c}.o"
done
progress "W=1 and sparse on:$built"
objv=$OBJ/warnings-vanilla
objp=$OBJ/warnings-patched
configure "$PRISTINE" "$objv" "" && kmake "$PRISTINE" "$objv" prepare >/dev/null 2>&1
configure "$PATCHED" "$objp" "" && kmake "$PATCHED" "$objp" prepare >/dev/null 2>&1

# warnings TREE OBJ ARGS: "file: warning text" lines, numbers dropped.
warnings() {
	t=$1 o=$2
	shift 2
	for f in $built; do
		# objects the vanilla tree does not have: nothing to compare with
		[ -f "$t/${f%.o}.c" ] || continue
		kmake "$t" "$o" "$@" "$f" 2>&1
	done | sed -n -E 's#^(\.\./)*([^ :]*/)?((arch|block|crypto|drivers|fs|include|init|kernel|lib|mm|net|security)/[^:]+):[0-9]+(:[0-9]+)?: (warning|error): #\3: \6: #p' |
		sed -E 's/[0-9]+/N/g' | sort
}
new_warnings() { # label args...
	label=$1
	shift
	warnings "$PRISTINE" "$objv" "$@" > "$OBJ/$label-vanilla.txt"
	warnings "$PATCHED" "$objp" "$@" > "$OBJ/$label-patched.txt"
	# multiset difference: patched lines not matched by a vanilla one
	awk 'NR == FNR { seen[$0]++; next } seen[$0]-- > 0 { next } { print }' \
		"$OBJ/$label-vanilla.txt" "$OBJ/$label-patched.txt" > "$OBJ/$label-new.txt"
}
# judge_new CHECK LABEL DETAIL: CHECK fails on LABEL's new warnings.
judge_new() {
	if [ -s "$OBJ/$2-new.txt" ]; then
		sed 's/^/    /' "$OBJ/$2-new.txt" >&2
		result fail "$1" "$(wc -l < "$OBJ/$2-new.txt") new (above; $OBJ/$2-new.txt)"
	else
		result ok "$1" "$3vanilla $(wc -l < "$OBJ/$2-vanilla.txt") warnings, patched $(wc -l < "$OBJ/$2-patched.txt")"
	fi
}

new_warnings w1 W=1
# The control: the objects were built with W=1's flags, or "no new
# warning" would prove nothing.
if ! grep -q -- '-Wmissing-prototypes' "$objp/mm/.slub.o.cmd" 2>/dev/null; then
	result fail w1_no_new_warnings "mm/slub.o was not built with W=1's flags"
else
	judge_new w1_no_new_warnings w1 "$(echo $built | wc -w) objects; "
fi
if ! command -v sparse >/dev/null; then
	result fail sparse_no_new_warnings "sparse is not installed (make deps PACKAGES=sparse)"
else
	new_warnings sparse C=2 CHECK=sparse
	# The control: sparse has something to say about 6.12's mm/ (lock
	# context annotations), so silence on both trees means it did not run.
	if [ ! -s "$OBJ/sparse-vanilla.txt" ]; then
		result fail sparse_no_new_warnings "sparse reported nothing on the pristine tree: did it run?"
	else
		judge_new sparse_no_new_warnings sparse ""
	fi
fi

# --- other architectures ----------------------------------------------------------
# build_arch CHECK OBJ TARGET EXTRA-KCONFIG: the lab configuration on the
# architecture of ARCH_ARGS/CROSS, built with no warning.  Its options that
# the architecture lacks (the x86 serial console, GCC plugins a cross
# compiler has no headers for) drop out; SANITIZE_MEM must not.
build_arch() {
	progress "$1: configuring and building $2"
	if ! configure "$PATCHED" "$2" "$4"; then
		result fail "$1" "configuration failed"
		return 1
	elif ! grep -q '^CONFIG_SANITIZE_MEM=y' "$2/.config"; then
		result fail "$1" "CONFIG_SANITIZE_MEM did not stay y"
		return 1
	elif ! kmake "$PATCHED" "$2" "$3" > "$2/build.out" 2>&1; then
		tail -n 20 "$2/build.out" >&2
		result fail "$1" "the build failed (tail above, $2/build.out)"
		return 1
	elif grep -E '(warning|error):' "$2/build.out" >&2; then
		result fail "$1" "the build printed warnings (above)"
		return 1
	fi
}

# The page clears and checks of the series, and what they must call on a
# HIGHMEM kernel to reach a page: kmap_local_page() is inline and calls
# this out of line when the kernel has highmem.
page_objects="mm/sanitize_mem.o mm/sanitize_mem_report.o"
kmap_symbol=__kmap_local_page_prot
# uses_kmap OBJDIR: the page objects there that call it
uses_kmap() {
	for f in $page_objects; do
		nm -u "$1/$f" 2>/dev/null | grep -qw "$kmap_symbol" && printf '%s ' "$f"
	done
}
start=$(date +%s)
obj32=$OBJ/i386-highmem
ARCH_ARGS=ARCH=i386 CROSS=''
if build_arch i386_highmem_builds "$obj32" bzImage "CONFIG_HIGHMEM4G=y"; then
	mapped=$(uses_kmap "$obj32")
	control=$(uses_kmap "$lab")
	if ! grep -q '^CONFIG_HIGHMEM=y' "$obj32/.config"; then
		result fail i386_highmem_builds "CONFIG_HIGHMEM is not set: nothing to map"
	elif [ "$mapped" != "$(printf '%s ' $page_objects)" ]; then
		result fail i386_highmem_builds "only '${mapped}' of $page_objects call $kmap_symbol(): the others use page_address(), NULL for a highmem page"
	elif [ -n "$control" ] || [ ! -f "$lab/mm/sanitize_mem.o" ]; then
		result fail i386_highmem_builds "the x86_64 control ${control:-is missing}: the symbol test tells nothing apart"
	else
		result ok i386_highmem_builds "built in $(( $(date +%s) - start )) s; $page_objects call $kmap_symbol() (x86_64: none)"
	fi
fi

start=$(date +%s)
obj64=$OBJ/arm64
ARCH_ARGS="ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-" CROSS=aarch64-linux-gnu-
if ! command -v aarch64-linux-gnu-gcc >/dev/null; then
	result fail arm64_builds "aarch64-linux-gnu-gcc is not installed (make deps PACKAGES=gcc-aarch64-linux-gnu)"
elif build_arch arm64_builds "$obj64" Image ""; then
	result ok arm64_builds "built in $(( $(date +%s) - start )) s"
fi

# --- the gfp bits ---------------------------------------------------------------
start=$(date +%s)
gfp_conf='CONFIG_PROVE_LOCKING=y
CONFIG_CGROUPS=y
CONFIG_MEMCG=y'
probe=$OBJ/gfp-probe
mkdir -p "$probe"
printf '#include <linux/gfp_types.h>\nint gfp_bits_shift = __GFP_BITS_SHIFT;\n' > "$probe/probe.c"
echo 'obj-m := probe.o' > "$probe/Kbuild"
# gfp_shift TREE OBJ: __GFP_BITS_SHIFT there, with gfp_conf; nothing if the
# configuration lacks an option or the probe did not build.
gfp_shift() {
	rm -f "$probe/probe.s"
	lab_fragments=$FRAGMENTS FRAGMENTS=$MTE_FRAGMENTS
	configure "$1" "$2" "$gfp_conf"
	ok=$? FRAGMENTS=$lab_fragments
	[ "$ok" = 0 ] || return
	for o in KASAN_HW_TAGS LOCKDEP SLAB_OBJ_EXT; do
		grep -q "^CONFIG_$o=y" "$2/.config" || return
	done
	kmake "$1" "$2" modules_prepare > "$2/prepare.out" 2>&1 &&
		kmake "$1" "$2" M="$probe" probe.s > "$2/probe.out" 2>&1 &&
		awk '/^gfp_bits_shift:/ { getline; print $2; exit }' "$probe/probe.s"
}
if command -v aarch64-linux-gnu-gcc >/dev/null; then
	progress "gfp bits: arm64 with MTE, LOCKDEP and SLAB_OBJ_EXT, pristine and patched"
	shift_v=$(gfp_shift "$PRISTINE" "$OBJ/gfp-vanilla")
	shift_p=$(gfp_shift "$PATCHED" "$OBJ/gfp-patched")
	if [ -z "$shift_v" ] || [ -z "$shift_p" ]; then
		result fail gfp_bits_as_vanilla "no shift read (pristine '${shift_v}', patched '${shift_p}'): a missing option or a failed probe ($OBJ/gfp-*/)"
	elif [ "$shift_p" != "$shift_v" ]; then
		result fail gfp_bits_as_vanilla "__GFP_BITS_SHIFT $shift_p, vanilla $shift_v: the series takes a gfp bit"
	elif ! kmake "$PATCHED" "$OBJ/gfp-patched" lib/radix-tree.o > "$OBJ/gfp-patched/radix.out" 2>&1; then
		result fail gfp_bits_as_vanilla "lib/radix-tree.o does not build ($OBJ/gfp-patched/radix.out)"
	else
		result ok gfp_bits_as_vanilla "__GFP_BITS_SHIFT $shift_p as vanilla's: $((32 - 3 - shift_p)) bit(s) left beside the xarray's marks; $(( $(date +%s) - start )) s"
	fi
else
	result fail gfp_bits_as_vanilla "aarch64-linux-gnu-gcc is not installed (make deps PACKAGES=gcc-aarch64-linux-gnu)"
fi
ARCH_ARGS='' CROSS=''

say "# series-whole: $n checks, $fails failed, $(( $(date +%s) - start_all )) s"
[ "$fails" -eq 0 ]
