#!/bin/sh
# Does the mbox of "make mbox" read back as the series?  b4 (Debian's
# package) turns it into an am-ready mbox, which is applied with git am to
# the pristine tree in a throwaway clone under /tmp; the result must be the
# commit of the patched tree the mbox was made from (MBOX.head, written by
# mbox.sh), tree and commit messages alike.  Prints KTAP; exits
# non-zero on any failure.  Needs no network (b4 reads the local file).
#
# b4 0.12 (Debian 12) reads a file given as -m FILE with Python's compat32
# parser, which keeps the line breaks of folded Subject: headers and then
# fails on them; given on stdin (-m -) it parses the same file correctly.
#
# usage: mbox-check.sh MBOX     environment: SRC
set -eu

mbox=$1
: "${SRC:?}"
tree=$SRC/linux-patched
pristine=$SRC/linux-6.12
start=$(date +%s)

[ -s "$mbox" ] || { echo "mbox-check: $mbox is missing: make mbox" >&2; exit 1; }
command -v b4 >/dev/null || { echo "mbox-check: b4 is not installed (apt-get install b4)" >&2; exit 1; }
# The commit the mbox was made from (make mbox writes it beside the mbox);
# the patched tree may have moved on since.
series=$(cat "$mbox.head" 2>/dev/null || git -C "$tree" rev-parse HEAD)
n=$(git -C "$tree" rev-list --count "pristine..$series")

tmp=$(mktemp -d /tmp/mbox-check.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT PIPE TERM
# b4 wants a git identity and writes a cache under $HOME: give it its own.
mkdir "$tmp/home" "$tmp/b4"
git config --file "$tmp/home/.gitconfig" user.name "mbox check"
git config --file "$tmp/home/.gitconfig" user.email "mbox-check@localhost"

passed=0 failed=0 t=0
ok() { t=$((t + 1)); passed=$((passed + 1)); echo "ok $t $*"; }
notok() { t=$((t + 1)); failed=$((failed + 1)); echo "not ok $t $1"; shift
	for l in "$@"; do [ -z "$l" ] || printf '%s\n' "$l" | sed 's/^/# /'; done; }

echo "KTAP version 1"
echo "1..4"

# 1. Every mail has recipients and the series is threaded.
bad=$(python3 - "$mbox" <<'PY'
import email, email.policy, mailbox, sys
mails = [email.message_from_bytes(m.as_bytes(), policy=email.policy.default)
         for m in mailbox.mbox(sys.argv[1])]
bad = [f"{m['Subject']}: no To:" for m in mails if not m["To"]]
bad += [f"{m['Subject']}: not threaded" for m in mails[1:] if not m["In-Reply-To"]]
print(len(mails))
print("\n".join(bad))
PY
)
mails=$(echo "$bad" | head -n 1)
bad=$(echo "$bad" | tail -n +2)
if [ "$mails" -eq $((n + 1)) ] && [ -z "$bad" ]; then
	ok "mbox: $mails mails (a cover letter and $n patches), each with To:, threaded"
else
	notok "mbox: $mails mails for $n patches" "want $((n + 1)) mails, each with To:" "$bad"
fi

# 2. b4 reads it.
if (cd "$tmp" && HOME=$tmp/home b4 --offline-mode am -C -m - -o "$tmp/b4" < "$mbox") \
	> "$tmp/b4.log" 2>&1 && am=$(ls "$tmp"/b4/*.mbx 2>/dev/null) && [ -n "$am" ]; then
	got=$(grep -c '^From ' "$am" || true)
	if [ "$got" -eq "$n" ]; then
		ok "b4 $(b4 --version 2>/dev/null): an am-ready mbox of $got patches"
	else
		notok "b4: an am-ready mbox of $got patches, want $n"
	fi
else
	am=
	notok "b4 am could not read $mbox" "$(tail -n 3 "$tmp/b4.log")"
fi

# 3. It applies to pristine, in a clone that borrows the objects of the
# pristine tree's repository (nothing is written there).
applied=
if [ -n "$am" ]; then
	git clone -q --shared --no-checkout "$pristine" "$tmp/repo"
	git -C "$tmp/repo" checkout -q --detach origin/pristine
	git -C "$tmp/repo" config user.name "mbox check"
	git -C "$tmp/repo" config user.email "mbox-check@localhost"
	if git -C "$tmp/repo" am -q "$am" > "$tmp/am.log" 2>&1; then
		applied=1
		ok "git am: the $n patches apply to pristine"
	else
		notok "git am: the mbox does not apply to pristine" "$(head -n 3 "$tmp/am.log")"
	fi
else
	notok "git am: nothing to apply (b4 failed)"
fi

# 4. What was applied is the series: same tree, same commit messages.
if [ -n "$applied" ]; then
	want=$(git -C "$tree" rev-parse "$series^{tree}")
	got=$(git -C "$tmp/repo" rev-parse 'HEAD^{tree}')
	git -C "$tree" log --reverse --format='%an <%ae>%n%B' "pristine..$series" > "$tmp/want.msg"
	git -C "$tmp/repo" log --reverse --format='%an <%ae>%n%B' origin/pristine..HEAD > "$tmp/got.msg"
	if [ "$want" = "$got" ] && cmp -s "$tmp/want.msg" "$tmp/got.msg"; then
		ok "round trip: tree, authors and commit messages equal linux-patched $(echo "$series" | cut -c1-12)"
	else
		notok "round trip: the applied series differs from linux-patched $(echo "$series" | cut -c1-12)" \
			"trees: $want (patched) $got (applied)" \
			"$(diff "$tmp/want.msg" "$tmp/got.msg" | head -n 5)"
	fi
else
	notok "round trip: nothing applied"
fi

now=$(git -C "$tree" rev-parse HEAD)
[ "$now" = "$series" ] ||
	echo "# the mbox is of linux-patched $(echo "$series" | cut -c1-12); HEAD is now $(echo "$now" | cut -c1-12): make mbox again"
echo "# mbox-check: $passed passed, $failed failed in $(( $(date +%s) - start )) s"
[ "$failed" -eq 0 ]
