#!/usr/bin/env python3
"""Read what lava-run reported for one cell and check it.

    lava/lava_verdict.py --cell CELL --out build/lava/out/CELL [--jobs build/lava/jobs]
                    [--matrix policy/matrix]

lava-run writes its log as one YAML flow mapping per line on stderr (the
smoke script saves it as OUT/output.yaml); the results are the lines with
"lvl": "results", the console is the "target" lines.  This writes

  OUT/console.log     the guest console as LAVA saw it
  OUT/results.json    every LAVA result (suite, case, result), and the joined table
  OUT/results.txt     the table printed below

and joins LAVA's results with the local harness's verdicts on the same
console (tests/harness/judge.py judge_cell), by test name: <suite>.<case> in
LAVA, <cell>.<path> in the harness.  Exit status 1 if the job did not finish, if LAVA
reported no result for the cell, missed one the job must report, reported
a failure, or disagrees with the harness; 0 otherwise.  Standard library
only (lava-run's log lines are JSON apart from an occasional YAML "!" tag).
"""

import argparse
import json
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from harness import judge
from harness import manifest
from harness import ktap
from harness import policy

LAVA_TO_KCIDB = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP", "unknown": "ERROR"}


def read_log(path):
    """lava-run's log lines as dicts (lines that do not parse are skipped)."""
    entries = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if line.startswith("- "):
                line = line[2:]
            if not line.startswith("{"):
                continue
            try:
                entries.append(json.loads(line))
                continue
            except ValueError:
                pass
            try:  # '"size": ! "123"': YAML's non-specific tag
                entries.append(json.loads(re.sub(r':\s*!\s+"', ': "', line)))
            except ValueError:
                pass
    return entries


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cell", required=True)
    ap.add_argument("--out", required=True, help="lava-run's --output-dir")
    ap.add_argument("--jobs", default=os.path.join(TOP, "build", "lava", "jobs"))
    ap.add_argument("--matrix", default=os.path.join(TOP, "policy", "matrix"))
    args = ap.parse_args()

    with open(os.path.join(args.jobs, f"{args.cell}.expect.json"), encoding="utf-8") as f:
        want = json.load(f)
    cell = args.cell

    log = os.path.join(args.out, "output.yaml")
    entries = read_log(log) if os.path.isfile(log) else []
    # The dispatcher's ShellLogger drops CR and ESC and writes '"' as '\\"'.
    console = [e["msg"].replace('\\"', '"') for e in entries
               if e.get("lvl") == "target" and isinstance(e.get("msg"), str)]
    with open(os.path.join(args.out, "console.log"), "w", encoding="utf-8") as f:
        f.write("\n".join(console) + "\n")
    lava = [e["msg"] for e in entries
            if e.get("lvl") == "results" and isinstance(e.get("msg"), dict)]

    job = [r for r in lava if r.get("definition") == "lava" and r.get("case") == "job"]
    job_result = job[-1]["result"] if job else "missing"
    errors = [f"{r.get('error_type', '')}: {r.get('error_msg', '')}"
              for r in job if r.get("result") != "pass"]
    ours = [r for r in lava
            if r.get("definition") == cell or str(r.get("definition", "")).startswith(cell + ".")]

    def name_of(r):
        return f"{r['definition']}.{r['case']}"

    # The harness's verdicts on the very console LAVA saw.
    lines = [ktap.TIMESTAMP.sub("", line.replace("\r", "")).rstrip() for line in console]
    matrix_cell = judge.find_cell(policy.read_matrix(args.matrix), cell)
    # Tests the job leaves out (they need the host) are not asked of LAVA.
    matrix_cell["tests"] = [t for t in matrix_cell["tests"] if t not in want.get("left_out", [])]
    ended = any(line == "HARNESS: END" for line in lines)
    status = {"result": "pass" if ended else "error",
              "reason": "" if ended else "no HARNESS: END on the console"}
    judged = {f"{cell}.{t['path']}": t for t in
              judge.judge_cell(matrix_cell, lines, status, cases=manifest.kunit_cases(),
                               skips=manifest.read_skips())}

    rows, problems = [], []
    seen = set()
    for r in ours:
        name = name_of(r)
        seen.add(name)
        got = LAVA_TO_KCIDB.get(r["result"], r["result"])
        h = judged.get(name)
        note = ""
        if h is None:
            note = "LAVA only"
        elif h["status"] != got:
            note = f"DISAGREE: harness says {h['status']} ({h['message']})"
            problems.append(f"{name}: LAVA {got}, harness {h['status']}")
        if got in ("FAIL", "ERROR"):
            problems.append(f"{name}: LAVA {got}")
        rows.append((name, r["definition"], r["case"], got, h["status"] if h else "-", note))
    for name, h in judged.items():
        if name in seen:
            continue
        note = "harness only"
        if h["status"] not in ("PASS", "SKIP"):
            note += f": {h['message']}"
            problems.append(f"{name}: not in LAVA, harness {h['status']}")
        rows.append((name, "-", "-", "-", h["status"], note))
    for suite, case in want["results"]:
        if case is None:
            if not any(r["definition"] == suite for r in ours):
                problems.append(f"{suite}.*: LAVA reported no case of this suite")
        elif not any(r["definition"] == suite and r["case"] == case for r in ours):
            problems.append(f"{suite}.{case}: LAVA did not report it")
    if not ours:
        problems.append(f"LAVA reported no result for cell {cell}")
    if job_result != "pass":
        problems.insert(0, f"LAVA job: {job_result} " + "; ".join(errors))

    w = max([len(r[0]) for r in rows] + [4])
    table = [f"{'test':<{w}}  {'LAVA':<5}  {'harness':<7}  note",
             f"{'-' * w}  -----  -------  ----"]
    for name, _, _, got, hs, note in rows:
        table.append(f"{name:<{w}}  {got:<5}  {hs:<7}  {note}".rstrip())
    passed = sum(1 for r in rows if r[3] == "PASS")
    table.append("")
    table.append(f"LAVA job {job_result}; {len(ours)} LAVA results for {cell} "
                 f"({passed} pass); {len(judged)} harness results on the same console")
    verdict = "PASS" if not problems else "FAIL"
    table.append(f"lava-smoke {cell}: {verdict}" +
                 ("" if not problems else " - " + "; ".join(problems)))
    text = "\n".join(table) + "\n"
    with open(os.path.join(args.out, "results.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as f:
        json.dump({"cell": cell, "job": job_result, "verdict": verdict,
                   "problems": problems,
                   "lava": [{k: r.get(k) for k in ("definition", "case", "result", "extra")}
                            for r in lava],
                   "joined": [dict(zip(("name", "suite", "case", "lava", "harness", "note"), r))
                              for r in rows]}, f, indent=1)
        f.write("\n")
    sys.stdout.write(text)
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
