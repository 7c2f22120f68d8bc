"""The harness's one entry point, python3 -m harness COMMAND (the Makefile
exports PYTHONPATH=tests; every script it runs inherits it):

  kernels, kernel, arch, fragments, cell, bench, check
           read and check policy/ (tests/harness/policy.py)
  verdict  a command's exit status as the result of one test
           (tests/harness/result_json.py)
  docs     docs/results.md from the last runs (tests/harness/docs_page.py)
  judge-cell
           judge one cell (tests/harness/judge.py): writes <dir>/result.json and
           prints one line.
  judge    the same for every cell of a matrix whose console.log is saved
           under a results directory (make judge: no boot).
  summary  gather every build/results/*/result.json into summary.txt,
           results.json (KCIDB-shaped tests) and junit.xml (tests/harness/summary.py);
           print the table and a final "N passed, N failed" line; exit 1 on
           any failure.
  ktap     a host test suite's KTAP output as a result.json (make unit).
  cells    the cell names of a matrix, for the Makefile.

Reading a console is tests/harness/ktap.py's, judging
tests/harness/judge.py's, writing a result.json
tests/harness/result_json.py's, collecting tests/harness/summary.py's.
Only standard library modules are used.
"""

import argparse
import os
import sys

from harness import docs_page, manifest, policy, result_json, summary
from harness.judge import find_cell, judge_dir
from harness.ktap import clean_lines, parse_ktap
from harness.policy import read_lifetime, read_matrix


def expected(args):
    """What every cell is held to besides its matrix line: the KUnit cases
    of the series (--patches) and the skips policy/skips allows (--skips)."""
    return manifest.kunit_cases(args.patches), manifest.read_skips(args.skips)


def cmd_cell(args):
    cell = find_cell(read_matrix(args.matrix), args.cell)
    lifetime = read_lifetime(args.lifetime) if os.path.isfile(args.lifetime) else {}
    judge_dir(cell, args.dir, args.root, lifetime, *expected(args))
    return 0


def cmd_judge(args):
    """Every cell of the matrix whose console log is saved under --results,
    judged again as tests/harness/run-cell.sh judged it after its boot."""
    cells = read_matrix(args.matrix)
    lifetime = read_lifetime(args.lifetime) if os.path.isfile(args.lifetime) else {}
    root = os.path.dirname(os.path.abspath(args.results))
    cases, skips = expected(args)
    judged = 0
    for cell in cells:
        cell_dir = os.path.join(args.results, cell["cell"])
        if os.path.isfile(os.path.join(cell_dir, "console.log")):
            judge_dir(cell, cell_dir, root, lifetime, cases, skips)
            judged += 1
    print(f"judge: {judged} of the {len(cells)} cells of {args.matrix} judged again "
          f"from their console logs in {args.results}")
    return 0


def cmd_summary(args):
    parts = []
    for p in args.part:
        sub, sep, matrix = p.partition("=")
        if not sep or not sub or not matrix or "/" in sub:
            print(f"summary: --part {p!r}: expected dir=matrix (a subdirectory of "
                  f"--results and the matrix of its cells)", file=sys.stderr)
            return 2
        parts.append((sub, matrix))
    return summary.summarize(args.results, args.matrix, parts, args.step)


def cmd_ktap(args):
    """A host-side test's KTAP output (a file) as a result.json, so host
    tests are counted with the cells; no output at all is a MISS."""
    with open(args.log, encoding="utf-8", errors="replace", newline="") as f:
        found = parse_ktap(clean_lines(f.read()))
    tests = [result_json.test(".".join(r["path"]), r["status"], r["message"]) for r in found]
    if not tests:
        tests = [result_json.test("ktap", "MISS", f"no KTAP in {args.log}")]
    result_json.write(args.out, cell=args.name, kernel="host",
                     log=os.path.relpath(args.log, os.path.dirname(args.out)), tests=tests)
    bad = [t for t in tests if t["status"] in ("FAIL", "ERROR", "MISS")]
    print(f"{args.name}: {len(tests) - len(bad)}/{len(tests)} passed")
    if bad:
        # Where the user is looking: the first failure's own words (a
        # loader error names its file and line), not only a count.
        first = bad[0]
        why = " ".join((first["message"] or "").split())
        print(f"{args.name}: first failure: {first['path']}: {why[:400] or first['status']}"
              f"{f' ({len(bad) - 1} more)' if len(bad) > 1 else ''}; "
              f"see {os.path.relpath(args.log)}")
    return 1 if bad else 0


def cmd_cells(args):
    """Cell names, for the Makefile (optionally only those running a test)."""
    for c in read_matrix(args.matrix):
        if args.test and args.test not in c["tests"]:
            continue
        print(c["cell"])
    return 0


POLICY_COMMANDS = ("kernels", "kernel", "arch", "fragments", "cell", "bench", "check",
                   "suite", "suites")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in POLICY_COMMANDS:
        return policy.main(argv)
    if argv and argv[0] == "verdict":
        return result_json.main(argv)
    if argv and argv[0] == "docs":
        return docs_page.main(argv[1:])
    p = argparse.ArgumentParser(prog="python3 -m harness",
                                description=__doc__.split("\n\n")[0],
                                epilog="also: " + ", ".join(POLICY_COMMANDS + ("verdict", "docs")))
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("judge-cell", help="judge one cell")
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
    for q in (c, j):
        q.add_argument("--patches", default=manifest.PATCHES,
                       help="the series whose KUnit cases every cell must report")
        q.add_argument("--skips", default=manifest.SKIPS, help="the skips a cell may report")
    s = sub.add_parser("summary", help="collect all results")
    s.add_argument("--results", required=True)
    s.add_argument("--matrix", help="report cells of this matrix that left no result")
    s.add_argument("--part", action="append", default=[], metavar="DIR=MATRIX",
                   help="also count the cells of MATRIX, whose results are in "
                   "--results/DIR (repeatable)")
    s.add_argument("--step", action="append", default=[], metavar="NAME",
                   help="a harness step whose result.json (--results/NAME) must exist "
                   "(repeatable)")
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
