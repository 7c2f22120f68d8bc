#!/bin/sh
# make kernel: the trees (tests/series/trees.sh patched), the data of
# policy/ checked (python3 -m harness check) and every kernel named built
# (build-kernel.sh), one make at a time: two makes building into the same
# object directory corrupt each other's dependency files, so a second one
# waits for the lock (an hour at most).
#
# usage: build-kernels.sh KERNEL...
# environment: STAMP (the lock's directory), MATRIX (checked with
# policy/bench), and what trees.sh and build-kernel.sh read (SRC, PATCHES,
# OBJ, PRISTINE, PATCHED, JOBS, DEBIAN_CONFIG).
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
: "${STAMP:?}" "${MATRIX:?}"
cd "$top" || exit 2     # MATRIX and the messages relative to the top, as make runs

mkdir -p "$STAMP"
exec 9>"$STAMP/kernel.lock"
if ! flock -n 9; then
	echo "kernel: another make is building the kernels, waiting for it"
	flock -w 3600 9 || { echo "kernel: gave up waiting for the other build" >&2; exit 1; }
fi
tests/series/trees.sh patched || exit 1
python3 -m harness check --matrix "$MATRIX" --bench policy/bench || exit 1
for k; do
	"$here/build-kernel.sh" "$k" || exit 1
done
