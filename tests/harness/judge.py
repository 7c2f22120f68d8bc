"""Judge one matrix cell from what its boot left: the console log, the
expect driver's status and the RAM scan (lifetime.json).

The expect driver (tests/harness/run-cell.exp) only knows whether the guest got
through its stages in time.  Everything else is decided here, from the
saved console log, so it is tested on saved logs without booting
(tests/selftest/test_harness.py): boot health (panic, oops, BUG, WARNING,
timeout), the policy the kernel reported against policy/matrix, every
KTAP result (KUnit suites and guest programs) and the secrets' copies
against policy/lifetime.  judge_dir() writes the cell's result.json
(through tests/harness/result_json.py) and prints one line.

Statuses follow KCIDB: PASS, FAIL, ERROR, MISS (an expected suite never
reported), SKIP (reported as skipped by the test itself, with its reason).
Standard library only.
"""

import json
import os
import re

from harness import result_json
from harness.ktap import clean_lines, parse_ktap
from harness.manifest import skip_allowed

# A line the kernel prints when something went wrong (including a write to
# scrubbed memory found by sanitize_verify=1).  Any of them fails the
# boot test of a cell, unless a KUnit case that is declared to provoke a
# report (expect "report=<suite>.<case>") printed it.
FATAL = re.compile(
    r"Kernel panic|\bOops\b|\bBUG:|kernel BUG at|WARNING:|Call Trace:|"
    r"KASAN:|KFENCE:|UBSAN:|general protection fault|Unable to handle|"
    r"sanitize_mem: write after free"
)
BOOT_LINE = re.compile(r"sanitize_mem: policy=(?P<policy>\S+) \((?P<parts>[^)]*)\)"
                       r"(?: clear-once=(?P<clear_once>[a-z,]+))?"
                       r"(?: requested=(?P<requested>[a-z,]+))?")
REJECT_LINE = re.compile(r'sanitize_mem: invalid value "(?P<value>[^"]*)"')
# A policy is a word of the design's vocabulary (docs/design.md) or a comma list of them: a
# kernel warning printed on the serial console while the guest writes this
# line can follow it with no line break ("pages,stackclocksource: ...").
REPORTED = re.compile(r"^HARNESS: policy=(?P<policy>(?:none|off|full|pages|slab|stack)"
                      r"(?:,(?:pages|slab|stack))*)")
# The same for /sys/kernel/mm/sanitize/clear_once.
REPORTED_CLEAR_ONCE = re.compile(r"^HARNESS: clear-once=(?P<value>none|(?:pages|slab)"
                                 r"(?:,(?:pages|slab))*)")
# The same for /sys/kernel/mm/sanitize/requested.
REPORTED_REQUESTED = re.compile(r"^HARNESS: requested=(?P<value>(?:off|full|pages|slab|stack)"
                                r"(?:,(?:pages|slab|stack))*)")


def find_cell(cells, name):
    for c in cells:
        if c["cell"] == name:
            return c
    raise SystemExit(f"no cell named {name!r} in the matrix")


# --- the attacker's view: secrets left in guest RAM --------------------------

def copies(counts):
    """Copies of a secret: a half is a leak too (keys are the first half)."""
    return max(counts.get("head", 0), counts.get("tail", 0), counts.get("full", 0))


def judge_lifetime(cell, cell_dir, expectations, guest=None):
    """The scan's counts against policy/lifetime.  guest: the guest's own
    KTAP result per channel ({channel: leaf of parse_ktap}); a SKIP there
    says the kernel lacks what the channel needs, which only "n/a" allows,
    and "n/a" requires it: a skip is never a pass of a 0 or a found, and an
    expected skip is reported as a SKIP, not a PASS."""
    guest = guest or {}
    path = os.path.join(cell_dir, "lifetime.json")
    if not os.path.isfile(path):
        return [("lifetime", "MISS", "the guest never asked for a RAM scan "
                 "(no lifetime.json)", "")]
    with open(path, encoding="utf-8") as f:
        scan = json.load(f)["channels"]
    want = expectations.get(cell["cell"])
    if want is None:
        return [("lifetime", "ERROR", f"policy/lifetime has no column for {cell['cell']}", "")]
    out = []
    for channel, counts in scan.items():
        n = copies(counts)
        expected = want.get(channel)
        detail = f"{n} copies (full {counts.get('full', 0)}, head {counts.get('head', 0)}, " \
                 f"tail {counts.get('tail', 0)})"
        ran = guest.get(channel)
        skipped = ran is not None and ran["status"] == "SKIP"
        why = re.sub(r"^SKIP\s*", "", ran["message"], flags=re.I) if skipped else ""
        if expected is None:
            out.append((f"lifetime.{channel}", "ERROR",
                        f"{detail}; policy/lifetime has no row for {channel}", ""))
        elif expected == "n/a":
            if not skipped:
                how = f"reported it {ran['status']}" if ran else "did not report it"
                out.append((f"lifetime.{channel}", "FAIL",
                            f"{detail}; policy/lifetime says this kernel lacks what the "
                            f"channel needs, but the guest {how} instead of a SKIP", ""))
            elif n:
                out.append((f"lifetime.{channel}", "FAIL",
                            f"{detail}, expected none: the guest skipped it ({why})", ""))
            else:
                # Nothing was tested: a skip, not a pass, whatever the table
                # expected.  Only copies found after a skip can fail it.
                out.append((f"lifetime.{channel}", "SKIP",
                            f"{detail}; n/a on this kernel, the guest skipped it ({why})", ""))
        elif skipped and expected != "-":
            out.append((f"lifetime.{channel}", "FAIL",
                        f"{detail}; the guest skipped it ({why}), but "
                        f"policy/lifetime expects {expected} on this kernel", ""))
        elif expected == "-":
            out.append((f"lifetime.{channel}", "SKIP", f"{detail}; not asserted here", ""))
        elif expected == "0":
            out.append((f"lifetime.{channel}", "PASS" if n == 0 else "FAIL",
                        f"{detail}, expected none", ""))
        else:
            out.append((f"lifetime.{channel}", "PASS" if n > 0 else "FAIL",
                        f"{detail}, expected the secret to be found", ""))
    for channel in sorted(set(want) - set(scan)):
        out.append((f"lifetime.{channel}", "MISS", "the scan did not count this channel", ""))
    return out


def read_status(path):
    status = {}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                key, _, value = line.rstrip("\n").partition("=")
                status[key] = value
    except FileNotFoundError:
        status = {"result": "error", "reason": "the expect driver wrote no status"}
    return status


def quote(lines, i, before=5, after=15):
    lo, hi = max(0, i - before), min(len(lines), i + after + 1)
    return "\n".join(lines[lo:hi])


def judge_cell(cell, lines, status, cell_dir=None, lifetime=None, cases=None, skips=None):
    """The list of test results of one cell.  cases: {suite: [case, ...]}
    (manifest.kunit_cases()): a case of a suite the cell runs that never
    reported is a MISS.  skips: policy/skips (manifest.read_skips()): a
    skip it does not allow fails."""
    expect = cell["expect"]
    tests = []

    def add(path, result, message="", context=""):
        tests.append(result_json.test(path, result, message, context))

    plans = []
    ktap = parse_ktap(lines, plans)

    # Reports a KUnit case provokes on purpose are exempt, in its own region.
    allowed = []
    # "report=<suite>" exempts each case of a suite whose cases provoke
    # reports by design (KFENCE's own suite), each in its own region.
    for want in expect.get("report", "").split():
        region = [r for r in ktap if ".".join(r["path"]) == want] or \
            [r for r in ktap if ".".join(r["path"]).startswith(want + ".")]
        if not region:
            add("report." + want, "MISS", f"the case {want} that should provoke a "
                "report never reported")
            continue
        spans = [range(r["first_line"], r["line"] + 1) for r in region]
        if any(FATAL.search(lines[i]) for span in spans for i in span):
            allowed.extend(spans)
            add("report." + want, "PASS", "the provoked report was printed")
        else:
            add("report." + want, "FAIL", f"{want} printed no report")

    def exempt(i):
        return any(i in span for span in allowed)

    fatal = [i for i, line in enumerate(lines) if FATAL.search(line) and not exempt(i)]
    if fatal:
        i = fatal[0]
        add("boot", "FAIL", f"kernel reported: {lines[i].strip()}", quote(lines, i))
    elif status.get("result") != "pass":
        tail = len(lines) - 1
        add("boot", "FAIL", status.get("reason") or status.get("result", "unknown"),
            quote(lines, tail, before=15, after=0))
    else:
        add("boot", "PASS", f"guest reached its end marker in {status.get('seconds', '?')} s")

    want = expect.get("policy")
    if want is not None:
        add("policy", *judge_policy(want, lines))
    if "clear-once" in expect:
        add("clear_once", *judge_clear_once(expect["clear-once"], lines))
    if "requested" in expect:
        add("requested", *judge_requested(expect["requested"], lines))
    if "error" in expect:
        add("invalid_value", *judge_reject(expect["error"], lines))
    elif any(REJECT_LINE.search(line) for line in lines):
        line = next(line for line in lines if REJECT_LINE.search(line))
        add("invalid_value", "FAIL", f"a valid command line was rejected: {line.strip()}")

    booted = status.get("result") == "pass"
    must_run = expect.get("run", "").split()
    if "guest:lifetime" in cell["tests"] and cell_dir is not None:
        guest = {r["path"][2]: r for r in ktap
                 if r["path"][:2] == ["guest", "lifetime"] and len(r["path"]) == 3}
        for path, result, message, context in judge_lifetime(cell, cell_dir, lifetime or {},
                                                             guest):
            add(path, result, message, context)
    for spec in cell["tests"]:
        kind, _, name = spec.partition(":")
        if kind == "kunit":
            root = [name]
        elif kind == "guest":
            root = ["guest", name]
        else:
            add(spec, "ERROR", f"unknown test kind {kind!r} in the matrix")
            continue
        found = [r for r in ktap if r["path"][:len(root)] == root]
        if not found:
            why = "never reported" + ("" if booted else " (the guest did not finish)")
            add(kind + "." + name, "MISS", f"{spec} {why}")
        elif kind == "kunit" and cases and name in cases:
            ran = {r["path"][1] for r in found if len(r["path"]) > 1}
            for case in cases[name]:
                if case not in ran:
                    add(f"kunit.{name}.{case}", "MISS",
                        f"a case of the series (src-patches) that never reported"
                        f"{'' if booted else ' (the guest did not finish)'}")
        for p in plans:
            if p["path"][:len(root)] == root:
                add(kind + "." + ".".join(p["path"][len(root) - 1:]) + ".plan", "MISS",
                    f"its plan announced {p['plan']} results, {p['reported']} reported",
                    quote(lines, p["line"], before=10, after=0))
        for r in found:
            path = kind + "." + ".".join(r["path"][len(root) - 1:])
            status, message = r["status"], r["message"]
            why = re.sub(r"^SKIP\s*", "", message, flags=re.I)
            # A case that needs what only this cell sets up (KFENCE sampling,
            # say) proves nothing when it skips here.
            if status == "SKIP" and ".".join(r["path"]) in must_run:
                status, message = "FAIL", f"must run in this cell, but skipped: {why}"
            # Any other skip must be one policy/skips allows for this
            # kernel: a config drift that turns a case into a skip fails.
            # The lifetime channels' skips are policy/lifetime's (n/a).
            elif (status == "SKIP" and skips is not None and not path.startswith("guest.lifetime.")
                  and not skip_allowed(skips, cell["kernel"], path, why)):
                status, message = "FAIL", (f"skipped ({why}), and policy/skips allows no such "
                                           f"skip on kernel {cell['kernel']}")
            context = quote(lines, r["line"], before=20, after=0) if status == "FAIL" else ""
            add(path, status, message, context)
    for want in must_run:
        if not any(".".join(r["path"]) == want for r in ktap):
            add("run." + want, "MISS", f"the case {want} this cell must run never reported")
    return tests


def judge_policy(want, lines):
    booted = [m.group("policy") for m in map(BOOT_LINE.search, lines) if m]
    reported = [m.group("policy") for m in map(REPORTED.match, lines) if m]
    got = reported[-1] if reported else None
    if want == "none":
        if booted:
            return "FAIL", f"expected no sanitize_mem, the kernel says policy={booted[0]}"
        if got != "none":
            return "FAIL", f"expected no /sys/kernel/mm/sanitize, guest reported {got!r}"
        return "PASS", "no sanitize_mem in this kernel"
    if len(booted) != 1:
        return "FAIL", f"expected one 'sanitize_mem: policy=' boot line, found {len(booted)}"
    if booted[0] != want:
        return "FAIL", f"boot line says policy={booted[0]}, expected {want}"
    if got != want:
        return "FAIL", f"/sys/kernel/mm/sanitize/policy says {got!r}, expected {want!r}"
    return "PASS", f"policy={want} in the boot line and in sysfs"


def boot_and_sysfs(key, sysfs, said, reported, want):
    """One value the kernel states twice: on its boot line (key=said) and in
    /sys/kernel/mm/sanitize/<sysfs> (the guest's HARNESS lines, reported)."""
    if said != want:
        return "FAIL", f"boot line says {key}={said}, expected {want}"
    if not reported or reported[-1] != want:
        got = reported[-1] if reported else None
        return "FAIL", f"/sys/kernel/mm/sanitize/{sysfs} says {got!r}, expected {want!r}"
    return "PASS", f"{key}={want} in the boot line and in sysfs"


def judge_clear_once(want, lines):
    """Which alloc-time clears the kernel skips: the boot line's clear-once=
    and /sys/kernel/mm/sanitize/clear_once."""
    booted = [m.group("clear_once") for m in map(BOOT_LINE.search, lines) if m]
    reported = [m.group("value") for m in map(REPORTED_CLEAR_ONCE.match, lines) if m]
    if len(booted) != 1 or booted[0] is None:
        return "FAIL", "expected one boot line with clear-once=, found " \
            f"{len(booted)} ({', '.join(map(str, booted)) or 'none'})"
    return boot_and_sysfs("clear-once", "clear_once", booted[0], reported, want)


def judge_requested(want, lines):
    """What sanitize_mem= asked for, before init_on_free=1 added to it: the
    boot line's requested= (printed only where it differs from policy=)
    and /sys/kernel/mm/sanitize/requested."""
    booted = [m for m in map(BOOT_LINE.search, lines) if m]
    reported = [m.group("value") for m in map(REPORTED_REQUESTED.match, lines) if m]
    if len(booted) != 1:
        return "FAIL", f"expected one 'sanitize_mem: policy=' boot line, found {len(booted)}"
    said = booted[0].group("requested") or booted[0].group("policy")
    return boot_and_sysfs("requested", "requested", said, reported, want)


def judge_reject(value, lines):
    for line in lines:
        m = REJECT_LINE.search(line)
        if m and m.group("value") == value:
            if "full" not in line:
                return "FAIL", f"the rejection does not say full is applied: {line.strip()}"
            return "PASS", f"rejected {value!r} and applied full"
    return "FAIL", f'no \'sanitize_mem: invalid value "{value}"\' line'


def judge_dir(cell, cell_dir, root, lifetime, cases=None, skips=None):
    """Judge a cell from what its boot left in cell_dir (console.log, status,
    lifetime.json, ...); write cell_dir/result.json and print one line.
    cases and skips: as judge_cell's (the Makefile's commands pass the
    series' cases and policy/skips)."""
    log = os.path.join(cell_dir, "console.log")
    try:
        with open(log, encoding="utf-8", errors="replace", newline="") as f:
            lines = clean_lines(f.read())
    except FileNotFoundError:
        lines = []
    status = read_status(os.path.join(cell_dir, "status"))
    tests = judge_cell(cell, lines, status, cell_dir, lifetime, cases, skips)
    meta = {}
    for key in ("cmdline", "qemu-version", "accel", "arch"):
        try:
            with open(os.path.join(cell_dir, key), encoding="utf-8") as f:
                meta[key] = f.read().strip()
        except FileNotFoundError:
            meta[key] = ""
    rel_log = os.path.relpath(log, root) if root else log
    result_json.write(cell_dir, cell=cell["cell"], kernel=cell["kernel"], args=cell["args"],
                     log=rel_log, expect=cell["expect"], seconds=status.get("seconds"),
                     config=os.path.join(os.path.dirname(rel_log), "config"), **meta,
                     tests=tests)
    bad = [t for t in tests if t["status"] in ("FAIL", "ERROR", "MISS")]
    verdict = "PASS" if not bad else "FAIL"
    line = f"cell {cell['cell']}: {verdict} ({len(tests) - len(bad)}/{len(tests)} tests, " \
           f"{status.get('seconds', '?')} s)"
    if bad:
        line += f" first problem: {bad[0]['path']}: {bad[0]['message']}"
    print(line, flush=True)
    for t in bad[:1]:
        if t["context"]:
            print("    | " + t["context"].replace("\n", "\n    | "))
