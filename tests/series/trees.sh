#!/bin/sh
# Kernel source trees for the build, all under build/src/:
#
#   trees.sh pristine  unpack Debian's linux-source-6.12 into linux-6.12/, a
#                      git repository whose one commit (branch "pristine") is
#                      exactly the installed package; redone only when the
#                      installed package version changes.
#   trees.sh patched   make linux-patched/ (a worktree of it, branch
#                      "sanitize") the pristine tree plus src-patches/series,
#                      applied with git am.  A patch that does not apply is
#                      reported by name with the files it failed on, and the
#                      tree is reset so no half-patched tree is ever built.
#   trees.sh refresh   write the commits of linux-patched/ back to
#                      src-patches/ (after editing them there with git).
#
# environment: SRC (build/src), PATCHES (src-patches), STAMP (build/stamp).
set -eu

: "${SRC:?}" "${PATCHES:?}" "${STAMP:?}"
PATCHES=$(cd "$PATCHES" && pwd)
package=linux-source-6.12
tarball=/usr/src/$package.tar.xz
pristine=$SRC/linux-6.12
patched=$SRC/linux-patched
git="git -c user.name=sanitize-mem-harness -c user.email=harness@localhost"

die() { echo "trees: $*" >&2; exit 1; }

installed_version() {
	dpkg-query -W -f='${Version}' "$package" 2>/dev/null ||
		die "$package is not installed (run 'make deps')"
}

pristine_version() {
	git -C "$pristine" log -1 --format=%s pristine 2>/dev/null |
		sed -n "s/^$package \([^ ]*\) (pristine)$/\1/p"
}

cmd_pristine() {
	version=$(installed_version)
	[ "$(pristine_version)" = "$version" ] && return 0
	[ -r "$tarball" ] || die "$tarball is missing although $package $version is installed"
	if [ -d "$pristine" ]; then
		echo "trees: $package changed to $version, unpacking it again" >&2
		rm -rf "$pristine" "$patched" "$STAMP/patched"
	fi
	echo "trees: unpacking $package $version" >&2
	tmp=$SRC/.unpack.$$
	rm -rf "$tmp"
	mkdir -p "$tmp"
	tar -xf "$tarball" -C "$tmp" || { rm -rf "$tmp"; die "cannot unpack $tarball"; }
	(
		cd "$tmp"/linux-source-6.12
		# Debian's .gitignore ignores the whole top level: add with -f.
		git init -q -b pristine
		git add -f -A
		$git commit -q -m "$package $version (pristine)"
	) || { rm -rf "$tmp"; die "cannot make a git tree of $tarball"; }
	mv "$tmp"/linux-source-6.12 "$pristine"
	rmdir "$tmp"
}

series_hash() {
	(cd "$PATCHES" && cat series $(grep -v '^#' series)) | sha256sum | cut -d' ' -f1
}

cmd_patched() {
	[ -f "$PATCHES/series" ] || die "$PATCHES/series is missing"
	want=$(series_hash)
	mkdir -p "$STAMP"
	if [ ! -d "$patched/.git" ] && [ ! -f "$patched/.git" ]; then
		rm -rf "$patched" "$STAMP/patched"
		git -C "$pristine" worktree prune
		git -C "$pristine" worktree add -q -f -B sanitize "$patched" pristine
	elif [ -f "$STAMP/patched" ]; then
		read -r applied head < "$STAMP/patched"
		now=$(git -C "$patched" rev-parse HEAD)
		if [ "$now" != "$head" ]; then
			die "$patched has commits not in $PATCHES (HEAD $now, series applied as $head): run 'make refresh' to keep them, or 'git -C $patched reset --hard $head' to drop them"
		fi
		if [ -n "$(git -C "$patched" status --porcelain -uno)" ]; then
			die "$patched has uncommitted changes: commit them and run 'make refresh', or 'git -C $patched checkout -- .' to drop them"
		fi
		[ "$applied" = "$want" ] && return 0
	fi

	echo "trees: applying $PATCHES/series to $package $(pristine_version)" >&2
	rm -f "$STAMP/patched"
	git -C "$patched" checkout -q -f -B sanitize pristine
	for p in $(grep -v '^#' "$PATCHES/series"); do
		[ -r "$PATCHES/$p" ] || die "$PATCHES/series names $p, which does not exist"
		if ! out=$(cd "$patched" && $git am -q "$PATCHES/$p" 2>&1); then
			git -C "$patched" am --abort >/dev/null 2>&1 || true
			git -C "$patched" checkout -q -f -B sanitize pristine
			files=$(echo "$out" | sed -n 's/^error: patch failed: \(.*\)$/\1/p; s/^error: \(.*\): does not exist in index$/\1 (missing)/p' | tr '\n' ' ')
			echo "$out" | sed 's/^/    /' >&2
			die "$PATCHES/$p does not apply to $package $(pristine_version)${files:+ (failed at: $files)}; the patched tree was reset to pristine"
		fi
	done
	echo "$want $(git -C "$patched" rev-parse HEAD)" > "$STAMP/patched"
}

cmd_refresh() {
	[ -d "$patched" ] || die "there is no $patched to refresh from (run 'make kernel')"
	n=$(git -C "$patched" rev-list --count pristine..HEAD)
	[ "$n" -gt 0 ] || die "$patched has no commits on top of pristine"
	rm -f "$PATCHES"/*.patch
	git -C "$patched" format-patch -q --zero-commit -o "$PATCHES" pristine..HEAD
	(cd "$PATCHES" && ls ./*.patch | sed 's|^\./||' > series)
	echo "$(series_hash) $(git -C "$patched" rev-parse HEAD)" > "$STAMP/patched"
	echo "trees: wrote $n patches to $PATCHES/" >&2
}

case "${1:-}" in
pristine) cmd_pristine ;;
patched) cmd_pristine; cmd_patched ;;
refresh) cmd_refresh ;;
*) echo "usage: $0 pristine|patched|refresh" >&2; exit 2 ;;
esac
