"""Collect every result.json of a run into what people and machines read:
summary.txt (a table and the last line "N passed, N failed"),
results.json (KCIDB-shaped tests), junit.xml, and lifetime.{md,json}
(the secrets' copies per channel and cell).  Standard library only.
"""

import json
import os
import sys
import xml.etree.ElementTree as ET

from harness.judge import copies
from harness.policy import read_matrix

ORIGIN = "sanitize_mem"


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
                    "comment": f"QEMU {r.get('arch') or 'x86_64'} ({r.get('accel') or 'tcg'})",
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


def lifetime_report(root, results, matrix=None):
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
    # Channels the guest skipped: where the judge took that as the kernel
    # lacking what they need (policy/lifetime "n/a": a SKIP, not a FAIL), a
    # count of 0 would read as clean.
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
                        "n/a" if (c, ch) in skipped and verdict == "SKIP" else
                        f"{copies(counts)}{mark.get(verdict, '')}")
        rows.append(f"| {ch} | " + " | ".join(vals) + " |")
    # The arm64 cells (make check-arm64) have a table of their own.
    arm64 = {r.get("arch") for r in results if r["cell"] in scans} == {"arm64"}
    # Tables of other matrices than make check's say which one they are.
    which = os.path.basename(matrix) if matrix else "matrix"
    text = ["# Secrets left in guest RAM after release" + (" on arm64" if arm64 else "")
            + ("" if which == "matrix" else f" ({which})"), "",
            "Copies of each channel's secret (the larger of its two halves' counts) found "
            "by the host in the guest's RAM file after the guest released them; "
            "✗ marks a count that breaks policy/lifetime, (-) one it does not assert; "
            "n/a: the cell's kernel lacks what the channel needs (the guest skipped it "
            "and nothing was found). Produced by "
            + (f"the cells of `{matrix}`." if matrix else
               "`make lifetime` and `make check`."),
            ""] + rows
    with open(os.path.join(root, "lifetime.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(text) + "\n")
    with open(os.path.join(root, "lifetime.json"), "w", encoding="utf-8") as f:
        json.dump({"cells": scans, "verdicts": {f"{c}.{ch}": v for (c, ch), v in
                                                verdicts.items()}}, f, indent=2)
        f.write("\n")


def with_missing(results, matrix):
    """results, plus an error for every cell of matrix that left no
    result.json: a cell that did not report is not something to forget."""
    have = {r["cell"] for r in results}
    for c in read_matrix(matrix):
        if c["cell"] not in have:
            results.append({"cell": c["cell"], "kernel": c["kernel"], "args": c["args"],
                            "tests": [{"path": "harness", "status": "ERROR",
                                       "message": "the cell produced no result",
                                       "context": ""}]})
    return results


def with_steps(results, steps):
    """results, plus an error for every harness step (make unit's suites,
    make fastpath, ...) that left no result.json: a step that crashed
    before writing one is a failure, not a silence."""
    have = {r["cell"] for r in results}
    for step in steps:
        if step not in have:
            results.append({"cell": step, "kernel": "host", "args": "",
                            "tests": [{"path": "harness", "status": "MISS",
                                       "message": "the step left no result (it crashed "
                                                  "or did not run)", "context": ""}]})
    return results


def distinct_checks(results):
    """How many different kernel checks passed: (test, policy) pairs of the
    cells that booted a kernel, the same case in thirty cells of one policy
    counted once."""
    seen = set()
    for r in results:
        if r.get("kernel", "host") == "host":
            continue
        policy = (r.get("expect") or {}).get("policy") or r.get("args") or "-"
        for t in r["tests"]:
            if t["status"] == "PASS":
                seen.add((t["path"], policy))
    return len(seen)


def mutation_score(results_dir):
    """The last make mutants' line ("K of N mutants killed ..."), if any."""
    try:
        with open(os.path.join(results_dir, "mutants", "score.txt"), encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return None


def summarize(results_dir, matrix=None, parts=(), steps=()):
    """Write the run's summaries under results_dir; print the table.  With
    matrix, a cell of it that left no result.json is an error.  parts are
    (subdirectory, matrix) pairs: the cells of another matrix, with a
    channel list and table of their own (make check's real-program cells in
    build/results/real/), counted here too and missing cells errors alike;
    each keeps its lifetime table in its subdirectory.  1 if anything
    failed."""
    results = load_results(results_dir)
    if matrix:
        results = with_missing(results, matrix)
    results = with_steps(results, steps)
    main_results = list(results)
    part_results = []
    for sub, part_matrix in parts:
        part_dir = os.path.join(results_dir, sub)
        found = load_results(part_dir) if os.path.isdir(part_dir) else []
        found = with_missing(found, part_matrix)
        part_results.append((part_dir, found, part_matrix))
        results += found
    if not results:
        print(f"no results under {results_dir}", file=sys.stderr)
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
    text += [""]
    if totals["SKIP"]:
        text += [f"{totals['SKIP']} skipped (reported as SKIP by the test, not passed)"]
    text += [f"{distinct_checks(results)} distinct kernel checks passed (test x policy)"]
    score = mutation_score(results_dir)
    if score:
        text += [score]
    passed = totals["PASS"]
    failed = totals["FAIL"] + totals["ERROR"] + totals["MISS"]
    text += ["", f"{passed} passed, {failed} failed"]
    os.makedirs(results_dir, exist_ok=True)
    with open(os.path.join(results_dir, "summary.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(text) + "\n")
    with open(os.path.join(results_dir, "results.json"), "w", encoding="utf-8") as f:
        json.dump({"version": {"major": 4, "minor": 0}, "tests": kcidb_tests(results)},
                  f, indent=2)
        f.write("\n")
    with open(os.path.join(results_dir, "junit.xml"), "w", encoding="utf-8") as f:
        f.write(junit(results) + "\n")
    lifetime_report(results_dir, main_results, matrix)
    for part_dir, found, part_matrix in part_results:
        lifetime_report(part_dir, found, part_matrix)
    print("\n".join(text))
    return 1 if failed else 0
