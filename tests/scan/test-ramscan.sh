#!/bin/bash
# Test the attacker's-view scanner (tests/scan/ramscan.c) without a guest:
# build a 64 MiB "RAM" file holding a known number of copies of derived
# secrets and of their halves at known offsets (aligned, unaligned, across
# page boundaries, back to back, inside text, at both ends of the file),
# and check every count exactly.  Also pins the derivation with a known
# answer, checks the error exits, and checks that tests/scan/channels and
# the guest program's table (lifetime --list) name the same channels.
#
# usage: tests/scan/test-ramscan.sh
# environment: RAMSCAN (scanner binary; default build/tools/ramscan, built
# into a temporary directory if missing), LIFETIME (guest program binary;
# default build/guest/lifetime, built likewise if gcc -static works),
# BENCH=1 also times a scan of a 512 MiB file.
# Prints KTAP; exits 0 if every test passed, 1 otherwise.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-ramscan.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

results=()
failed=0
ntests=0
ok() { ntests=$((ntests + 1)); results+=("ok $ntests $1"); }
not_ok() { ntests=$((ntests + 1)); results+=("not ok $ntests $1 # $2"); failed=1; }
skip() { ntests=$((ntests + 1)); results+=("ok $ntests $1 # SKIP $2"); }
check() { # name, command...: ok if the command succeeds
	local name=$1; shift
	if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$(echo "$out" | tail -n 1)"; fi
}
finish() {
	echo "KTAP version 1"
	echo "1..$ntests"
	printf '%s\n' "${results[@]}"
	exit $failed
}

# --- the binaries ----------------------------------------------------------
ramscan=${RAMSCAN:-$top/build/tools/ramscan}
if [ ! -x "$ramscan" ] || [ "$ramscan" -ot "$here/ramscan.c" ] ||
   [ "$ramscan" -ot "$top/tests/guest/secrets.h" ]; then
	ramscan=$tmp/ramscan
	if out=$(gcc -O2 -Wall -Wextra -Werror -I"$top/tests/guest" -o "$ramscan" \
		"$here/ramscan.c" 2>&1); then
		ok "build ramscan (gcc -O2 -Wall -Wextra -Werror)"
	else
		not_ok "build ramscan (gcc -O2 -Wall -Wextra -Werror)" "$(echo "$out" | head -n 1)"
		finish
	fi
fi
lifetime=${LIFETIME:-$top/build/guest/lifetime}
stale=
for f in "$top"/tests/guest/lifetime/* "$top/tests/scan/channels" "$top/tests/scan/channels-real"; do
	[ "$lifetime" -ot "$f" ] && stale=1
done
if [ ! -x "$lifetime" ] || [ -n "$stale" ]; then
	lifetime=$tmp/lifetime
	{ python3 "$top/tests/guest/channels-h.py" "$top/tests/scan/channels" \
		>"$tmp/channels.h" &&
	  python3 "$top/tests/guest/channels-h.py" --real "$top/tests/scan/channels-real" \
		>"$tmp/channels-real.h" &&
	  gcc -static -O2 -Wall -Wextra -Werror -I"$top/tests/guest/lifetime" -I"$top/tests/guest" \
		-I"$tmp" -o "$lifetime" "$top"/tests/guest/lifetime/*.c; } >"$tmp/lifetime.build" 2>&1 ||
		lifetime=
	# Without a static libc there is nothing to check against; with one, a
	# lifetime that does not build (a channel listed without its
	# function does not link) is a failure, not a skip.
	lifetime_broken=
	if [ -z "$lifetime" ] && echo 'int main(void) { return 0; }' |
		gcc -static -x c -o "$tmp/static-probe" - 2>/dev/null; then
		lifetime_broken=$(grep -m 1 -i 'undefined reference\|error' "$tmp/lifetime.build" || head -n 1 "$tmp/lifetime.build")
	fi
fi

# --- derivation --------------------------------------------------------------
# A known answer: changing secrets.h changes it, on both sides at once.
check "derive: known answer for (tty, 0123456789abcdef)" \
	test "$("$ramscan" derive tty 0123456789abcdef)" = BJKwQZZfMU7Lc7HBvWteuvii8FcMjEPY
check "derive: 0x prefix and short seeds are the same seed" \
	test "$("$ramscan" derive heap 0x00000000000000ff)" = "$("$ramscan" derive heap ff)"
s1=$("$ramscan" derive heap 1) s2=$("$ramscan" derive heap 2) s3=$("$ramscan" derive stack 1)
if [[ $s1 =~ ^[A-Za-z0-9]{32}$ ]] && [ "$s1" != "$s2" ] && [ "$s1" != "$s3" ]; then
	ok "derive: 32 alphanumerics, differ by seed and by channel"
else
	not_ok "derive: 32 alphanumerics, differ by seed and by channel" "got '$s1' '$s2' '$s3'"
fi

# --- a 64 MiB RAM file with copies at known places ---------------------------
seed=5eed0123456789ab
ram=$tmp/ram
size=$((64 << 20))
truncate -s $size "$ram"
# Some text (alphanumerics everywhere, the scanner's slow path) and some
# binary noise, so the copies are not only found in zeroes.
head -c 1500000 /dev/urandom | base64 -w 0 | head -c 2000000 |
	dd of="$ram" bs=1M seek=8 conv=notrunc status=none
head -c $((2 << 20)) /dev/urandom | dd of="$ram" bs=1M seek=16 conv=notrunc status=none

cat > "$tmp/channels" <<'EOF'
# test channels
t-full     full copies only
t-head     heads only
t-tail     tails, and one full copy
t-split    a head and a tail apart, and near misses
t-none     never placed
t-wep      key=13 a 13-character head (a WEP-104 key), counted apart
EOF

put() { # channel, what (full|head|tail|bad-first|bad-last), offset
	local s
	s=$("$ramscan" derive "$1" $seed) || exit 2
	case $2 in
	full) ;;
	head) s=${s:0:16} ;;
	tail) s=${s:16:16} ;;
	bad-first) s=-${s:1} ;;	# full with its first byte changed: tail only
	bad-last) s=${s:0:31}- ;;	# full with its last byte changed: head only
	key13) s=${s:0:13} ;;
	key12) s=${s:0:12} ;;	# one short of the key: not counted
	esac
	printf '%s' "$s" | dd of="$ram" bs=1 seek="$3" conv=notrunc status=none
}
page=4096
put t-full full 0					# first byte of the file
put t-full full $((5 * page - 7))			# across a page boundary
put t-full full 1234567					# unaligned
put t-full full 2000000					# back to back...
put t-full full 2000032					# ...with this one
put t-full full $((8 * 1048576 + 333333))		# inside text
put t-full full $((size - 32))				# last possible offset
put t-head head $((3 * page - 5))			# across a page boundary
put t-head head $((16 * 1048576 + 4097))		# inside binary noise
put t-head head $((size - 4096 - 16))			# ends at a page boundary
put t-tail tail 777					# unaligned
put t-tail tail $((7 * page - 1))			# across, one byte before
put t-tail full $((9 * 1048576 + 12345))		# inside text
put t-split head 3000001
put t-split tail 3000101
put t-split bad-last 3500000
put t-split bad-first 3600003
put t-split bad-first $((32 * 1048576 - 1))		# across a 2 MiB boundary
put t-wep key13 101					# unaligned
put t-wep key13 $((6 * page - 6))			# across a page boundary
put t-wep key12 4000000
put t-wep full $((size - 64))				# a full copy holds the key

expect='t-full 7 7 7
t-head 0 3 0
t-tail 1 1 3
t-split 0 2 3
t-none 0 0 0
t-wep 1 3 1'

json=$tmp/out.json
if "$ramscan" --seed $seed --channels "$tmp/channels" --json "$json" "$ram" \
	>"$tmp/table" 2>"$tmp/err"; then
	ok "scan of a 64 MiB file exits 0"
	results+=("# $(head -n 1 "$tmp/table")")
else
	not_ok "scan of a 64 MiB file exits 0" "$(cat "$tmp/err")"
fi
got=$(python3 - "$json" <<'EOF' 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
for name, c in d["channels"].items():
    print(name, c["full"], c["head"], c["tail"])
EOF
)
if [ "$got" = "$expect" ]; then
	ok "exact full/head/tail counts in the JSON"
else
	not_ok "exact full/head/tail counts in the JSON" "got: $(echo $got)"
fi
# The same file with no holes (every block allocated): same counts.
cp --sparse=never "$ram" "$tmp/dense"
got=$("$ramscan" --seed $seed --channels "$tmp/channels" "$tmp/dense" 2>&1 |
	awk '/^t-/ { print $1, $2, $3, $4 }')
if [ "$got" = "$expect" ]; then
	ok "the same counts in the same file without holes"
else
	not_ok "the same counts in the same file without holes" "got: $(echo $got)"
fi
rm -f "$tmp/dense"
check "JSON seed and ram_bytes" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["seed"] == sys.argv[2], d["seed"]
assert d["ram_bytes"] == int(sys.argv[3]), d["ram_bytes"]' "$json" $seed $size
tgot=$(awk '/^t-/ { print $1, $2, $3, $4 }' "$tmp/table")
if [ "$tgot" = "$expect" ]; then
	ok "the table on stdout says the same"
else
	not_ok "the table on stdout says the same" "got: $(echo $tgot)"
fi
check "another seed finds nothing" sh -c '
	"$1" --seed 1 --channels "$2" --json "$3" "$4" >/dev/null &&
	python3 -c "import json,sys; d=json.load(open(sys.argv[1]))
assert all(v == 0 for c in d[\"channels\"].values() for v in c.values()), d" "$3"' \
	sh "$ramscan" "$tmp/channels" "$tmp/other.json" "$ram"
# Odd sizes: the last bytes of a file that is not a multiple of 8 or 16.
for extra in 1 7 9 15 31; do
	odd=$tmp/odd
	head -c $((page + extra)) /dev/zero > "$odd"
	s=$("$ramscan" derive t-full $seed)
	printf '%s' "$s" | dd of="$odd" bs=1 seek=$((page + extra - 32)) conv=notrunc status=none
	printf '%s' "${s:0:16}" | dd of="$odd" bs=1 seek=3 conv=notrunc status=none
	"$ramscan" --seed $seed --channels "$tmp/channels" --json "$tmp/odd.json" "$odd" >/dev/null
	r=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["channels"]["t-full"]
print(c["full"], c["head"], c["tail"])' "$tmp/odd.json")
	if [ "$r" = "1 2 1" ]; then ok "file of $((page + extra)) bytes: copy at the very end"
	else not_ok "file of $((page + extra)) bytes: copy at the very end" "got $r"; fi
done

# --key NAME=HEX: a binary key the host cannot derive (a WPA2 temporal key),
# counted as that channel's head: 3 copies, one across a page boundary, one
# with a byte changed (not counted); the derived secret still gives full/tail.
key=00ff10e3a5c7d90102f3e4d5c6b7a8ff
keyram=$tmp/keyram
unhex() { python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex(sys.argv[1]))' "$1"; }
head -c $((4 * page)) /dev/zero > "$keyram"
for off in 100 $((2 * page - 7)) $((3 * page + 1)); do
	unhex "$key" | dd of="$keyram" bs=1 seek=$off conv=notrunc status=none
done
unhex 00ff10e3a5c7d90102f3e4d5c6b7a8fe |
	dd of="$keyram" bs=1 seek=$((3 * page + 100)) conv=notrunc status=none
put_s=$("$ramscan" derive t-none $seed)
printf '%s' "$put_s" | dd of="$keyram" bs=1 seek=2000 conv=notrunc status=none
if "$ramscan" --seed $seed --channels "$tmp/channels" --key t-none=$key --json "$tmp/key.json" \
	"$keyram" >/dev/null 2>"$tmp/err"; then
	r=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["channels"]
print(c["t-none"]["full"], c["t-none"]["head"], c["t-none"]["tail"], c["t-full"]["head"])' "$tmp/key.json")
	if [ "$r" = "1 3 1 0" ]; then ok "--key: a binary key counted as the channel's head"
	else not_ok "--key: a binary key counted as the channel's head" "got $r, want 1 3 1 0"; fi
else
	not_ok "--key: a binary key counted as the channel's head" "$(cat "$tmp/err")"
fi

# aes=OTHER: the AES-128 key schedules of OTHER's two halves (dm-crypt's
# XTS keys), as the kernel's crypto_aes_ctx holds them.  The expansion is
# pinned by FIPS-197's own example (Appendix A.1); in a file, the head
# key's whole schedule once (full 1, head 1), its round keys once more
# after a changed round key 0 (head 2), the tail key's round keys once
# across a page boundary and once with one byte changed (tail 1); the
# keys themselves, which are OTHER's, count nothing here.
fips=$("$ramscan" aes128 2b7e151628aed2a6abf7158809cf4f3c 2>&1)
case $fips in
2b7e151628aed2a6abf7158809cf4f3ca0fafe17*d014f9a8c9ee2589e13f0cc8b6630ca6)
	[ ${#fips} = 352 ] && ok "aes128: FIPS-197 A.1 key expansion" ||
		not_ok "aes128: FIPS-197 A.1 key expansion" "${#fips} hex digits"
	;;
*) not_ok "aes128: FIPS-197 A.1 key expansion" "got $fips" ;;
esac
printf 't-key plain secret\nt-key-schedule aes=t-key its schedules\n' > "$tmp/aes-channels"
aesram=$tmp/aesram
head -c $((4 * page)) /dev/zero > "$aesram"
k=$("$ramscan" derive t-key $seed)
khex=$(printf '%s' "$k" | od -An -tx1 | tr -d ' \n')
hs=$("$ramscan" aes128 "${khex:0:32}")
ts=$("$ramscan" aes128 "${khex:32:32}")
unhex "$hs" | dd of="$aesram" bs=1 seek=1000 conv=notrunc status=none
unhex "00${hs:2}" | dd of="$aesram" bs=1 seek=3000 conv=notrunc status=none
unhex "${ts:32}" | dd of="$aesram" bs=1 seek=$((2 * page - 50)) conv=notrunc status=none
unhex "${ts:32:318}00" | dd of="$aesram" bs=1 seek=$((3 * page + 9)) conv=notrunc status=none
printf '%s' "$k" | dd of="$aesram" bs=1 seek=$((3 * page + 2000)) conv=notrunc status=none
if "$ramscan" --seed $seed --channels "$tmp/aes-channels" --json "$tmp/aes.json" \
	"$aesram" >/dev/null 2>"$tmp/err"; then
	r=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["channels"]
s, k = c["t-key-schedule"], c["t-key"]
print(s["full"], s["head"], s["tail"], k["full"], k["head"], k["tail"])' "$tmp/aes.json")
	# t-key: its own copy, and its head once more as round key 0 of the
	# whole schedule.
	if [ "$r" = "1 2 1 1 2 1" ]; then ok "aes=: key schedules counted, the keys alone not"
	else not_ok "aes=: key schedules counted, the keys alone not" "got $r, want 1 2 1 1 2 1"; fi
else
	not_ok "aes=: key schedules counted, the keys alone not" "$(cat "$tmp/err")"
fi

# --- the real channel list ---------------------------------------------------
check "tests/scan/channels parses, every channel counts 0 in this file" sh -c '
	"$1" --seed $2 --channels "$3" --json "$4" "$5" >/dev/null &&
	python3 -c "import json,sys; d=json.load(open(sys.argv[1]))
assert len(d[\"channels\"]) >= 10, d
assert all(v == 0 for c in d[\"channels\"].values() for v in c.values()), d" "$4"' \
	sh "$ramscan" $seed "$here/channels" "$tmp/real.json" "$ram"
# The two lists: make check's, and the real programs' (lifetime --real).
for list in channels:--list channels-real:"--real --list"; do
	file=${list%%:*} args=${list#*:}
	name="tests/scan/$file and lifetime $args name the same channels"
	if [ -n "$lifetime" ]; then
		want=$(awk '!/^[[:space:]]*(#|$)/ { print $1 }' "$here/$file")
		# shellcheck disable=SC2086
		have=$("$lifetime" $args 2>&1)
		if [ "$want" = "$have" ]; then
			ok "$name"
		else
			not_ok "$name" "$(diff <(echo "$want") <(echo "$have") | grep '^[<>]' | tr '\n' ' ')"
		fi
	elif [ -n "${lifetime_broken:-}" ]; then
		not_ok "$name" "tests/guest/lifetime/ does not build: $lifetime_broken"
	else
		skip "$name" "no lifetime binary ($(head -n 1 "$tmp/lifetime.build" 2>/dev/null))"
	fi
done

# --- errors: exit status 2 and a message --------------------------------------
err() { # name, command...: ok if it exits 2 and says something on stderr
	local name=$1 rc; shift
	"$@" >/dev/null 2>"$tmp/err"; rc=$?
	if [ $rc = 2 ] && [ -s "$tmp/err" ]; then ok "$name"
	else not_ok "$name" "exit $rc, stderr '$(head -c 100 "$tmp/err")'"; fi
}
: > "$tmp/empty"
printf 'a x\nb y\na z\n' > "$tmp/dup"
printf 'a key=4 too short\n' > "$tmp/shortkey"
err "error: missing RAM file" "$ramscan" --seed 1 --channels "$tmp/channels" "$tmp/nonexistent"
err "error: empty RAM file" "$ramscan" --seed 1 --channels "$tmp/channels" "$tmp/empty"
err "error: bad seed" "$ramscan" --seed xyz --channels "$tmp/channels" "$ram"
err "error: seed too long" "$ramscan" --seed 0123456789abcdef0 --channels "$tmp/channels" "$ram"
err "error: missing channel list" "$ramscan" --seed 1 --channels "$tmp/nope" "$ram"
err "error: empty channel list" "$ramscan" --seed 1 --channels "$tmp/empty" "$ram"
err "error: channel listed twice" "$ramscan" --seed 1 --channels "$tmp/dup" "$ram"
err "error: key=N shorter than 5" "$ramscan" --seed 1 --channels "$tmp/shortkey" "$ram"
err "error: no arguments" "$ramscan"
err "error: --key for a channel not listed" "$ramscan" --seed 1 --channels "$tmp/channels" --key nope=0011223344 "$ram"
err "error: --key not hex" "$ramscan" --seed 1 --channels "$tmp/channels" --key t-none=00112233zz "$ram"
err "error: derive with a bad seed" "$ramscan" derive tty 12g
printf 'a aes=b schedules of a later channel\nb x\n' > "$tmp/aes-later"
printf 'a x\nb aes=a y\nc aes=b schedules of schedules\n' > "$tmp/aes-chain"
err "error: aes= of a channel not listed before" "$ramscan" --seed 1 --channels "$tmp/aes-later" "$ram"
err "error: aes= of an aes= channel" "$ramscan" --seed 1 --channels "$tmp/aes-chain" "$ram"
err "error: --key for an aes= channel" "$ramscan" --seed 1 --channels "$tmp/aes-channels" --key t-key-schedule=0011223344 "$ram"
err "error: aes128 of a short key" "$ramscan" aes128 0011

# --- optional: speed on 512 MiB -------------------------------------------------
if [ -n "${BENCH:-}" ]; then
	big=$tmp/big
	# No holes (the worst case): 64 MiB of text, then zeroes written out.
	{ head -c $((48 << 20)) /dev/urandom | base64 -w 0
	  head -c $((448 << 20)) /dev/zero; } > "$big"
	start=$(date +%s%N)
	"$ramscan" --quiet --seed 1 --channels "$here/channels" "$big"
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	results+=("# $(du -h "$big" | cut -f1) allocated of 512 MiB")
	if [ $ms -lt 1000 ]; then ok "512 MiB in under a second ($ms ms)"
	else not_ok "512 MiB in under a second" "$ms ms"; fi
fi

finish
