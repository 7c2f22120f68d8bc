#!/usr/bin/env python3
"""Judge matrix cells from their console logs and collect the results.

The expect driver (tests/run-cell.exp) only knows whether the guest got
through its stages in time.  Everything else is decided here, from the saved
console log, so it can be tested on saved logs without booting anything
(tests/harness/test_harness.py):

  cell     judge one cell: boot health (panic, oops, BUG, WARNING, timeout),
           the policy the kernel reported against policy/matrix, and every
           KTAP result (KUnit suites and guest programs); writes
           <dir>/result.json and prints one line.
  judge    the same for every cell of a matrix whose console.log is saved
           under a results directory (make judge: no boot).
  summary  gather every build/results/*/result.json into summary.txt,
           results.json (KCIDB-shaped tests) and junit.xml; print the table
           and a final "N passed, N failed" line; exit 1 on any failure.

Statuses follow KCIDB: PASS, FAIL, ERROR, MISS (an expected suite never
reported), SKIP (reported as skipped by the test itself, with its reason).
Only standard library modules are used.
"""

import argparse
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

import resultfile
from policy import parse_expect, read_lifetime, read_matrix  # noqa: F401

ORIGIN = "sanitize_mem"

# A line the kernel prints when something went wrong (including a write to
# scrubbed memory found by sanitize_verify=1).  Any of them fails the
# boot test of a cell, unless a KUnit case that is declared to provoke a
# report (expect "report=<suite>.<case>") printed it.
FATAL = re.compile(
    r"Kernel panic|\bOops\b|\bBUG:|kernel BUG at|WARNING:|Call Trace:|"
    r"KASAN:|KFENCE:|UBSAN:|general protection fault|Unable to handle|"
    r"sanitize_mem: write after free"
)
TIMESTAMP = re.compile(r"^\[\s*\d+\.\d+\]\s?")
KTAP_RESULT = re.compile(
    r"^(?P<indent> *)(?P<ok>ok|not ok) (?P<num>\d+)(?: -)? ?(?P<name>[^#]*?)"
    r"\s*(?:#\s*(?P<directive>.*))?$"
)
KTAP_HEADER = re.compile(r"^(?P<indent> *)(KTAP version \d+|# Subtest: .*|1\.\.\d+)\s*$")
BOOT_LINE = re.compile(r"sanitize_mem: policy=(?P<policy>\S+) \((?P<parts>[^)]*)\)")
REJECT_LINE = re.compile(r'sanitize_mem: invalid value "(?P<value>[^"]*)"')
# A policy is a word of DESIGN.md's vocabulary or a comma list of them: a
# kernel warning printed on the serial console while the guest writes this
# line can follow it with no line break ("pages,stackclocksource: ...").
REPORTED = re.compile(r"^HARNESS: policy=(?P<policy>(?:none|off|full|pages|slab|stack)"
                      r"(?:,(?:pages|slab|stack))*)")


def clean_lines(text):
    """Console text to lines without CR, timestamps or trailing blanks."""
    lines = []
    for raw in text.replace("\r", "").split("\n"):
        lines.append(TIMESTAMP.sub("", raw).rstrip())
    return lines


# --- the matrix --------------------------------------------------------------

# The matrix and policy/lifetime are read and checked by tests/policy.py
# (read_matrix, parse_expect, read_lifetime, imported above; lava/ and the
# harness's tests still reach them through this module).


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
    and "n/a" requires it: a skip is never a pass of a 0 or a found."""
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
            else:
                out.append((f"lifetime.{channel}", "PASS" if n == 0 else "FAIL",
                            f"{detail}, expected none: the guest skipped it ({why})", ""))
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


# --- KTAP --------------------------------------------------------------------

def parse_ktap(lines):
    """Every leaf KTAP result in the log, as dicts with its path and the range
    of log lines that belong to it (from the end of its previous sibling to
    its own result line), so a report can be attributed to a test case.

    A subtest's name is taken from its parent's result line, which KTAP
    requires, not from the optional "# Subtest:" header; kernel lines that
    interleave with the KTAP are ignored."""
    frames = {}  # depth -> {"children": [...], "next": first line of next child}
    roots = []

    def frame(depth, i):
        return frames.setdefault(depth, {"children": [], "next": i})

    for i, line in enumerate(lines):
        m = KTAP_RESULT.match(line)
        if not m:
            h = KTAP_HEADER.match(line)
            if h:
                frame(len(h.group("indent")) // 4, i)
            continue
        depth = len(m.group("indent")) // 4
        children = frames.pop(depth + 1, {"children": []})["children"]
        for d in [d for d in frames if d > depth]:
            del frames[d]
        directive = (m.group("directive") or "").strip()
        if m.group("ok") == "not ok":
            status = "FAIL"
        elif directive.upper().startswith("SKIP"):
            status = "SKIP"
        else:
            status = "PASS"
        f = frame(depth, i)
        node = {"name": m.group("name").strip(), "status": status, "message": directive,
                "first_line": f["next"], "line": i, "children": children}
        f["next"] = i + 1
        f["children"].append(node)
        if depth == 0:
            roots.append(node)
            del frames[0]

    leaves = []

    def walk(node, prefix):
        path = prefix + [node["name"]]
        # A parent's verdict repeats its children's, except when it failed
        # on its own (a guest program that exits non-zero after printing
        # only "ok" lines): then it is a result of its own.
        own_failure = node["status"] == "FAIL" and not any(
            c["status"] == "FAIL" for c in node["children"])
        if not node["children"] or own_failure:
            leaves.append({k: node[k] for k in ("status", "message", "first_line", "line")}
                          | {"path": path})
        for child in node["children"]:
            walk(child, path)

    for node in roots:
        walk(node, [])
    return leaves


# --- judging one cell --------------------------------------------------------

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


def judge_cell(cell, lines, status, cell_dir=None, lifetime=None):
    """The list of test results of one cell."""
    expect = cell["expect"]
    tests = []

    def add(path, result, message="", context=""):
        tests.append(resultfile.test(path, result, message, context))

    ktap = parse_ktap(lines)

    # Reports a KUnit case provokes on purpose are exempt, in its own region.
    allowed = []
    for want in expect.get("report", "").split():
        region = [r for r in ktap if ".".join(r["path"]) == want]
        if not region:
            add("report." + want, "MISS", f"the case {want} that should provoke a "
                "report never reported")
            continue
        r = region[0]
        span = range(r["first_line"], r["line"] + 1)
        if any(FATAL.search(lines[i]) for i in span):
            allowed.append(span)
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
    if "error" in expect:
        add("invalid_value", *judge_reject(expect["error"], lines))
    elif any(REJECT_LINE.search(line) for line in lines):
        line = next(line for line in lines if REJECT_LINE.search(line))
        add("invalid_value", "FAIL", f"a valid command line was rejected: {line.strip()}")

    booted = status.get("result") == "pass"
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
        for r in found:
            path = kind + "." + ".".join(r["path"][len(root) - 1:])
            context = quote(lines, r["line"], before=20, after=0) if r["status"] == "FAIL" else ""
            add(path, r["status"], r["message"], context)
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


def judge_reject(value, lines):
    for line in lines:
        m = REJECT_LINE.search(line)
        if m and m.group("value") == value:
            if "full" not in line:
                return "FAIL", f"the rejection does not say full is applied: {line.strip()}"
            return "PASS", f"rejected {value!r} and applied full"
    return "FAIL", f'no \'sanitize_mem: invalid value "{value}"\' line'


def cmd_cell(args):
    cell = find_cell(read_matrix(args.matrix), args.cell)
    lifetime = read_lifetime(args.lifetime) if os.path.isfile(args.lifetime) else {}
    judge_dir(cell, args.dir, args.root, lifetime)
    return 0


def cmd_judge(args):
    """Every cell of the matrix whose console log is saved under --results,
    judged again as tests/run-cell.sh judged it after its boot."""
    cells = read_matrix(args.matrix)
    lifetime = read_lifetime(args.lifetime) if os.path.isfile(args.lifetime) else {}
    root = os.path.dirname(os.path.abspath(args.results))
    judged = 0
    for cell in cells:
        cell_dir = os.path.join(args.results, cell["cell"])
        if os.path.isfile(os.path.join(cell_dir, "console.log")):
            judge_dir(cell, cell_dir, root, lifetime)
            judged += 1
    print(f"judge: {judged} of the {len(cells)} cells of {args.matrix} judged again "
          f"from their console logs in {args.results}")
    return 0


def judge_dir(cell, cell_dir, root, lifetime):
    """Judge a cell from what its boot left in cell_dir (console.log, status,
    lifetime.json, ...); write cell_dir/result.json and print one line."""
    log = os.path.join(cell_dir, "console.log")
    try:
        with open(log, encoding="utf-8", errors="replace", newline="") as f:
            lines = clean_lines(f.read())
    except FileNotFoundError:
        lines = []
    status = read_status(os.path.join(cell_dir, "status"))
    tests = judge_cell(cell, lines, status, cell_dir, lifetime)
    meta = {}
    for key in ("cmdline", "qemu-version", "accel"):
        try:
            with open(os.path.join(cell_dir, key), encoding="utf-8") as f:
                meta[key] = f.read().strip()
        except FileNotFoundError:
            meta[key] = ""
    rel_log = os.path.relpath(log, root) if root else log
    resultfile.write(cell_dir, cell=cell["cell"], kernel=cell["kernel"], args=cell["args"],
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


# --- the whole run -----------------------------------------------------------

def load_results(root):
    results = []
    for entry in sorted(os.listdir(root)):
        path = os.path.join(root, entry, "result.json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                results.append(json.load(f))
    return results


def kcidb_tests(results):
    """Our results as KCIDB I/O schema test objects (one per leaf test)."""
    out = []
    for r in results:
        for t in r["tests"]:
            out.append({
                "id": f"{ORIGIN}:{r['cell']}:{t['path']}",
                "build_id": f"{ORIGIN}:{r['kernel']}",
                "origin": ORIGIN,
                "path": f"{r['cell']}.{t['path']}",
                "status": t["status"],
                "log_url": r.get("log", ""),
                "environment": {
                    "comment": f"QEMU x86_64 ({r.get('accel') or 'tcg'})",
                    "misc": {"qemu": r.get("qemu-version", "")},
                },
                "misc": {
                    "cell": r["cell"],
                    "kernel": r["kernel"],
                    "boot_args": r.get("cmdline", ""),
                    "config": r.get("config", ""),
                    "message": t["message"],
                },
            })
    return out


def junit(results):
    suites = ET.Element("testsuites", name=ORIGIN)
    for r in results:
        suite = ET.SubElement(suites, "testsuite", name=r["cell"],
                              tests=str(len(r["tests"])))
        counts = {"failures": 0, "errors": 0, "skipped": 0}
        for t in r["tests"]:
            case = ET.SubElement(suite, "testcase", classname=f"{ORIGIN}.{r['cell']}",
                                 name=t["path"])
            if t["status"] == "FAIL":
                counts["failures"] += 1
                el = ET.SubElement(case, "failure", message=t["message"])
                el.text = t.get("context", "")
            elif t["status"] in ("ERROR", "MISS"):
                counts["errors"] += 1
                ET.SubElement(case, "error", message=f"{t['status']}: {t['message']}")
            elif t["status"] == "SKIP":
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=t["message"])
        for k, v in counts.items():
            suite.set(k, str(v))
        out = ET.SubElement(suite, "system-out")
        out.text = f"log: {r.get('log', '')}\ncmdline: {r.get('cmdline', '')}\n"
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True)


def lifetime_report(root, results):
    """build/results/lifetime.{md,json}: copies per channel and cell."""
    scans = {}
    for r in results:
        path = os.path.join(root, r["cell"], "lifetime.json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                scans[r["cell"]] = json.load(f)["channels"]
    if not scans:
        return
    verdicts = {(r["cell"], t["path"][len("lifetime."):]): t["status"]
                for r in results for t in r["tests"] if t["path"].startswith("lifetime.")}
    # Channels the guest skipped: where that passed (policy/lifetime "n/a"),
    # the kernel lacks what they need and a count of 0 would read as clean.
    skipped = {(r["cell"], t["path"][len("guest.lifetime."):])
               for r in results for t in r["tests"]
               if t["path"].startswith("guest.lifetime.") and t["status"] == "SKIP"}
    cells = list(scans)
    channels = []
    for c in cells:
        channels += [ch for ch in scans[c] if ch not in channels]
    mark = {"PASS": "", "FAIL": " ✗", "SKIP": " (-)", "ERROR": " ?", "MISS": " ?"}
    head = "| channel | " + " | ".join(cells) + " |"
    rows = [head, "|" + "---|" * (len(cells) + 1)]
    for ch in channels:
        vals = []
        for c in cells:
            counts = scans[c].get(ch)
            verdict = verdicts.get((c, ch), "PASS")
            vals.append("–" if counts is None else
                        "n/a" if (c, ch) in skipped and verdict == "PASS" else
                        f"{copies(counts)}{mark.get(verdict, '')}")
        rows.append(f"| {ch} | " + " | ".join(vals) + " |")
    text = ["# Secrets left in guest RAM after release", "",
            "Copies of each channel's secret (the larger of its two halves' counts) found "
            "by the host in the guest's RAM file after the guest released them; "
            "✗ marks a count that breaks policy/lifetime, (-) one it does not assert; "
            "n/a: the cell's kernel lacks what the channel needs (the guest skipped it "
            "and nothing was found). Produced by `make lifetime` and `make check`.",
            ""] + rows
    with open(os.path.join(root, "lifetime.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(text) + "\n")
    with open(os.path.join(root, "lifetime.json"), "w", encoding="utf-8") as f:
        json.dump({"cells": scans, "verdicts": {f"{c}.{ch}": v for (c, ch), v in
                                                verdicts.items()}}, f, indent=2)
        f.write("\n")


def cmd_summary(args):
    results = load_results(args.results)
    # A cell that left no result.json is an error, not something to forget.
    if args.matrix:
        have = {r["cell"] for r in results}
        for c in read_matrix(args.matrix):
            if c["cell"] not in have:
                results.append({"cell": c["cell"], "kernel": c["kernel"], "args": c["args"],
                                "tests": [{"path": "harness", "status": "ERROR",
                                           "message": "the cell produced no result",
                                           "context": ""}]})
    if not results:
        print(f"no results under {args.results}", file=sys.stderr)
        print("0 passed, 1 failed")
        return 1
    rows = []
    totals = {"PASS": 0, "FAIL": 0, "ERROR": 0, "MISS": 0, "SKIP": 0}
    problems = []
    for r in results:
        c = {k: 0 for k in totals}
        for t in r["tests"]:
            c[t["status"]] += 1
            totals[t["status"]] += 1
            if t["status"] in ("FAIL", "ERROR", "MISS"):
                problems.append(f"{r['cell']}.{t['path']}: {t['status']}: {t['message']}")
        verdict = "FAIL" if c["FAIL"] + c["ERROR"] + c["MISS"] else "PASS"
        rows.append((r["cell"], r.get("kernel", ""), r.get("args", "") or "-",
                     verdict, c["PASS"], c["FAIL"] + c["ERROR"] + c["MISS"], c["SKIP"],
                     r.get("seconds") or "-"))
    head = ("cell", "kernel", "args", "result", "pass", "fail", "skip", "secs")
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    fmt = "  ".join(f"{{:{w}}}" for w in widths)
    text = [fmt.format(*head), fmt.format(*("-" * w for w in widths))]
    text += [fmt.format(*map(str, row)) for row in rows]
    if problems:
        text += ["", "Problems:"] + ["  " + p for p in problems]
    if totals["SKIP"]:
        text += ["", f"{totals['SKIP']} skipped (reported as SKIP by the test, not passed)"]
    passed = totals["PASS"]
    failed = totals["FAIL"] + totals["ERROR"] + totals["MISS"]
    text += ["", f"{passed} passed, {failed} failed"]
    os.makedirs(args.results, exist_ok=True)
    with open(os.path.join(args.results, "summary.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(text) + "\n")
    with open(os.path.join(args.results, "results.json"), "w", encoding="utf-8") as f:
        json.dump({"version": {"major": 4, "minor": 0}, "tests": kcidb_tests(results)},
                  f, indent=2)
        f.write("\n")
    with open(os.path.join(args.results, "junit.xml"), "w", encoding="utf-8") as f:
        f.write(junit(results) + "\n")
    lifetime_report(args.results, results)
    print("\n".join(text))
    return 1 if failed else 0


def cmd_ktap(args):
    """A host-side test's KTAP output (a file) as a result.json, so host
    tests are counted with the cells; no output at all is a MISS."""
    with open(args.log, encoding="utf-8", errors="replace", newline="") as f:
        found = parse_ktap(clean_lines(f.read()))
    tests = [resultfile.test(".".join(r["path"]), r["status"], r["message"]) for r in found]
    if not tests:
        tests = [resultfile.test("ktap", "MISS", f"no KTAP in {args.log}")]
    resultfile.write(args.out, cell=args.name, kernel="host",
                     log=os.path.relpath(args.log, os.path.dirname(args.out)), tests=tests)
    bad = [t for t in tests if t["status"] in ("FAIL", "ERROR", "MISS")]
    print(f"{args.name}: {len(tests) - len(bad)}/{len(tests)} passed")
    return 1 if bad else 0


def cmd_cells(args):
    """Cell names, for the Makefile (optionally only those running a test)."""
    for c in read_matrix(args.matrix):
        if args.test and args.test not in c["tests"]:
            continue
        print(c["cell"])
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("cell", help="judge one cell")
    c.add_argument("--matrix", required=True)
    c.add_argument("--cell", required=True)
    c.add_argument("--dir", required=True, help="the cell's result directory")
    c.add_argument("--root", help="paths in result.json are relative to this")
    c.add_argument("--lifetime", default="policy/lifetime",
                   help="what each channel must show per cell")
    c.set_defaults(func=cmd_cell)
    j = sub.add_parser("judge", help="judge again every cell whose console log is saved")
    j.add_argument("--matrix", required=True)
    j.add_argument("--results", required=True, help="the cells' directories are here")
    j.add_argument("--lifetime", default="policy/lifetime",
                   help="what each channel must show per cell")
    j.set_defaults(func=cmd_judge)
    s = sub.add_parser("summary", help="collect all results")
    s.add_argument("--results", required=True)
    s.add_argument("--matrix", help="report cells of this matrix that left no result")
    s.set_defaults(func=cmd_summary)
    k = sub.add_parser("ktap", help="a host test's KTAP output as a result")
    k.add_argument("--name", required=True)
    k.add_argument("--log", required=True)
    k.add_argument("--out", required=True)
    k.set_defaults(func=cmd_ktap)
    n = sub.add_parser("cells", help="list the cells of a matrix")
    n.add_argument("--matrix", required=True)
    n.add_argument("--test", help="only cells that run this test (e.g. guest:lifetime)")
    n.set_defaults(func=cmd_cells)
    args = p.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
