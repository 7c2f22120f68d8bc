#!/bin/sh
# make judge's part for the broken cells of make harness-tests: when make
# check left them (CELLS/ and RESULTS/harness/result.json), judge their
# saved logs again without booting, and check each was failed for the
# right reason (test_harness.py --cells), rewriting RESULTS/harness/.
#
# usage: judge-cells.sh CELLS RESULTS
set -u

[ $# -eq 2 ] || { echo "usage: $0 CELLS RESULTS" >&2; exit 2; }
cells=$1 results=$2
[ -f "$results/harness/result.json" ] && [ -d "$cells" ] || exit 0
# From the top, so that the results name tests/selftest/broken.matrix as
# make harness-tests does.
cd "$(dirname "$0")/../.." || exit 2
python3 -m harness judge --matrix tests/selftest/broken.matrix \
	--results "$cells" >/dev/null
python3 tests/selftest/test_harness.py --cells "$cells" \
	--matrix tests/selftest/broken.matrix --out "$results/harness"
