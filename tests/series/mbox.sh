#!/bin/sh
# The series as one mbox, as git send-email would post it: a cover letter
# whose text is src-patches/cover-letter.txt followed by the base it applies to,
# the distro-kernel line and the measured tables (build/results/bench.md
# from "make bench", build/results/lifetime.md from "make lifetime"), then
# one mail per patch.  A missing measurement is named in the letter rather
# than silently left out.
#
# Every mail carries its recipients: scripts/get_maintainer.pl of the
# patched tree, run on that patch alone, with the flags b4 prep uses
# (no git history): people (maintainers, reviewers) in To:, lists in Cc:.
# The cover letter goes to the union.  The series' own authors are the
# senders and are left out.  A patch for which get_maintainer.pl fails or
# names nobody stops the script: no mail goes out without recipients.
#
# The mails are threaded (Message-Id, In-Reply-To the cover letter), so
# that b4 and git send-email see one series.  OUT.head names the commit
# of the patched tree the mbox was made from.
#
# usage: mbox.sh OUT     environment: SRC, RESULTS
set -eu

out=$1
: "${SRC:?}" "${RESULTS:?}"
tree=$SRC/linux-patched
top=$(cd "$(dirname "$0")/../.." && pwd)

# The series as it is now: the tree may move while this runs.
head=$(git -C "$tree" rev-parse HEAD)
n=$(git -C "$tree" rev-list --count "pristine..$head")
[ "$n" -gt 0 ] || { echo "mbox: $tree has no patches on top of pristine" >&2; exit 1; }
[ -f "$tree/scripts/get_maintainer.pl" ] ||
	{ echo "mbox: $tree/scripts/get_maintainer.pl is missing" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out.tmp" "$out.head.tmp"' EXIT
trap 'exit 1' HUP INT PIPE TERM
mkdir "$tmp/patches" "$tmp/to"

git -C "$tree" format-patch -q --cover-letter --zero-commit --thread=shallow \
	--subject-prefix=PATCH -o "$tmp/patches" "pristine..$head"

# Recipients of each patch, one address a line (no roles, no git history:
# the MAINTAINERS file of the patched tree alone decides).
for p in "$tmp"/patches/0*.patch; do
	name=$(basename "$p")
	case $name in 0000-cover-letter.patch) continue ;; esac
	if ! (cd "$tree" && perl scripts/get_maintainer.pl --no-rolestats --no-git \
		--no-git-fallback --no-git-chief-penguins "$p") \
		> "$tmp/to/$name" 2> "$tmp/to/$name.err"; then
		echo "mbox: get_maintainer.pl failed on $name: $(head -n 1 "$tmp/to/$name.err")" >&2
		exit 1
	fi
done

base=$(git -C "$tree" log -1 --format=%s pristine | sed 's/ (pristine)$//')
python3 - "$tmp/patches" "$tmp/to" "$top" "$RESULTS" "$base" "$out.tmp" <<'PY'
import email.utils
import json
import os
import sys
import textwrap

pdir, todir, top, results, base, out = sys.argv[1:]
from harness.policy import read_kernels

SUBJECT = "mm: sanitize_mem: clear freed memory by boot-time policy"


def die(msg):
    sys.exit("mbox: " + msg)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def split_mail(text):
    """(header lines, body) of one format-patch file."""
    head, sep, body = text.partition("\n\n")
    if not sep:
        die("a mail of git format-patch has no body")
    return head.split("\n"), body


def header(lines, name):
    """The value of header name, unfolded, or None."""
    for i, line in enumerate(lines):
        if line.lower().startswith(name.lower() + ":"):
            value = line.split(":", 1)[1]
            for cont in lines[i + 1:]:
                if not cont[:1] in (" ", "\t"):
                    break
                value += " " + cont.strip()
            return value.strip()
    return None


def addresses(path):
    """get_maintainer.pl's output as (name, addr) pairs, in its order."""
    out = []
    for line in read(path).splitlines():
        line = line.strip()
        if not line:
            continue
        name, addr = email.utils.parseaddr(line)
        if "@" not in addr:
            die(f"get_maintainer.pl printed {line!r}, not an address "
                f"({os.path.basename(path)})")
        out.append((name, addr, "<" in line))
    return out


def fold(name, addrs):
    """A To:/Cc: header, one address a line, non-ASCII names encoded."""
    shown = [email.utils.formataddr((n, a), charset="utf-8") for n, a in addrs]
    return [f"{name}: " + (",\n\t".join(shown))] if shown else []


# --- the cover letter's text ---------------------------------------------

def flavour_of(kernel, kernels):
    return kernels.get(kernel, {}).get("flavour")


def distro_line():
    """What the results hold for the distro kernels, or that they are
    missing: the cells of lifetime.json and the bench configurations that
    booted a kernel of flavour distro (policy/kernels)."""
    kernels = read_kernels()
    life, bench = [], []
    path = os.path.join(results, "lifetime.json")
    if os.path.isfile(path):
        for cell in json.loads(read(path)).get("cells", {}):
            rpath = os.path.join(results, cell, "result.json")
            kernel = json.loads(read(rpath)).get("kernel") if os.path.isfile(rpath) else None
            if flavour_of(kernel, kernels) == "distro":
                life.append(cell)
    path = os.path.join(results, "bench.json")
    if os.path.isfile(path):
        for c in json.loads(read(path)).get("configs", []):
            if flavour_of(c.get("kernel"), kernels) == "distro":
                bench.append(c.get("name"))
    text = ("Distro kernel (Debian's own configuration of every memory-management, "
            "slab, hardening, memcg, KFENCE, IPC and swap option): ")
    text += ("secrets left in RAM measured in the cells " + ", ".join(life) +
             " (their columns of the lifetime table below)" if life else
             "secrets left in RAM not measured in this run (make lifetime)")
    text += "; " + ("cost measured in the bench configurations " + ", ".join(bench) +
                    " (tables below)" if bench else
                    "cost not measured (no bench configuration on a distro kernel "
                    "in this run: make bench)")
    return textwrap.fill(text + ".", 72)


def blurb():
    parts = [read(os.path.join(top, "src-patches", "cover-letter.txt")).rstrip("\n"), "",
             f"The series applies to Debian's {base}.", "",
             "Measured results", "================", "", distro_line()]
    for part in ("bench", "lifetime"):
        path = os.path.join(results, part + ".md")
        parts.append("")
        parts.append(read(path).rstrip("\n") if os.path.isfile(path) else
                     f"({part} results not measured in this run: make {part})")
    return "\n".join(parts)


# --- the mails -----------------------------------------------------------

files = sorted(f for f in os.listdir(pdir) if f.endswith(".patch"))
if not files or files[0] != "0000-cover-letter.patch":
    die("git format-patch wrote no cover letter")
mails = {f: split_mail(read(os.path.join(pdir, f))) for f in files}
senders = {email.utils.parseaddr(header(h, "From") or "")[1].lower() for h, _ in mails.values()}

recipients = {}
for f in files[1:]:
    got = [(n, a, person) for n, a, person in addresses(os.path.join(todir, f))
           if a.lower() not in senders]
    if not got:
        die(f"get_maintainer.pl names nobody but the series' authors for {f}; "
            "not writing a mail without recipients")
    to = [(n, a) for n, a, person in got if person]
    cc = [(n, a) for n, a, person in got if not person]
    recipients[f] = (to, cc) if to else (cc, [])


def union(i):
    seen, out = set(), []
    for f in files[1:]:
        for n, a in recipients[f][i]:
            if a.lower() not in seen:
                seen.add(a.lower())
                out.append((n, a))
    return out


cover_to = union(0)
cover_cc = [(n, a) for n, a in union(1) if a.lower() not in {x.lower() for _, x in cover_to}]
recipients[files[0]] = (cover_to, cover_cc)

text = []
for f in files:
    head, body = mails[f]
    if f == files[0]:
        if "*** SUBJECT HERE ***" not in "\n".join(head) or "*** BLURB HERE ***" not in body:
            die("git format-patch wrote no cover letter template")
        head = [h.replace("*** SUBJECT HERE ***", SUBJECT, 1) for h in head]
        body = body.replace("*** BLURB HERE ***", blurb(), 1)
        # The tables carry non-ASCII (–, ✗): say so, or send-email asks.
        if not body.isascii() and header(head, "Content-Type") is None:
            head += ["MIME-Version: 1.0", "Content-Type: text/plain; charset=UTF-8",
                     "Content-Transfer-Encoding: 8bit"]
    to, cc = recipients[f]
    text.append("\n".join(head + fold("To", to) + fold("Cc", cc)) + "\n\n" + body)

with open(out, "w", encoding="utf-8") as fh:
    fh.write("".join(text))

for f in files[1:]:
    to, cc = recipients[f]
    print(f"mbox: {f[:4]}: {len(to)} To, {len(cc)} Cc: "
          + ", ".join(a for _, a in to + cc), file=sys.stderr)
print(f"mbox: 0000 (cover letter): {len(cover_to)} To, {len(cover_cc)} Cc", file=sys.stderr)
PY
# Which commit the mbox is of, for make mbox-check.
echo "$head" > "$out.head.tmp"
mv "$out.tmp" "$out"
mv "$out.head.tmp" "$out.head"
echo "mbox: $n patches and a cover letter in $out" >&2
