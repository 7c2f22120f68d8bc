#!/bin/sh
# The series as one mbox for git send-email, with a cover letter whose text
# is docs/cover-letter.txt followed by the measured costs (build/results/
# bench.md from "make bench") and the attacker-view table (build/results/
# lifetime.md from "make lifetime").  A missing measurement is named in the
# letter rather than silently left out.
#
# usage: mbox.sh OUT     environment: SRC, RESULTS
set -eu

out=$1
: "${SRC:?}" "${RESULTS:?}"
tree=$SRC/linux-patched
top=$(cd "$(dirname "$0")/.." && pwd)

n=$(git -C "$tree" rev-list --count pristine..HEAD)
[ "$n" -gt 0 ] || { echo "mbox: $tree has no patches on top of pristine" >&2; exit 1; }

blurb=$(mktemp)
trap 'rm -f "$blurb"' EXIT
{
	cat "$top/docs/cover-letter.txt"
	for part in bench lifetime; do
		echo
		if [ -f "$RESULTS/$part.md" ]; then
			cat "$RESULTS/$part.md"
		else
			echo "($part results not measured in this run: make $part)"
		fi
	done
} > "$blurb"

git -C "$tree" format-patch -q --stdout --cover-letter --zero-commit \
	--subject-prefix=PATCH pristine..HEAD > "$out.tmp"
python3 - "$out.tmp" "$blurb" <<'PY'
import sys
mbox, blurb = sys.argv[1], open(sys.argv[2], encoding="utf-8").read().rstrip("\n")
text = open(mbox, encoding="utf-8").read()
subject = "mm: sanitize_mem: clear freed memory by boot-time policy"
if "*** SUBJECT HERE ***" not in text or "*** BLURB HERE ***" not in text:
    sys.exit("mbox: git format-patch wrote no cover letter template")
text = text.replace("*** SUBJECT HERE ***", subject, 1).replace("*** BLURB HERE ***", blurb, 1)
open(mbox, "w", encoding="utf-8").write(text)
PY
mv "$out.tmp" "$out"
echo "mbox: $n patches and a cover letter in $out" >&2
