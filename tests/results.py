#!/usr/bin/env python3
"""The command line of judging and collecting results (the Makefile's and
tests/run-cell.sh's entry point):

  cell     judge one cell (tests/judge.py): writes <dir>/result.json and
           prints one line.
  judge    the same for every cell of a matrix whose console.log is saved
           under a results directory (make judge: no boot).
  summary  gather every build/results/*/result.json into summary.txt,
           results.json (KCIDB-shaped tests) and junit.xml (tests/summary.py);
           print the table and a final "N passed, N failed" line; exit 1 on
           any failure.
  ktap     a host test suite's KTAP output as a result.json (make unit).
  cells    the cell names of a matrix, for the Makefile.

Reading a console is tests/ktap.py's, judging tests/judge.py's, writing a
result.json tests/resultfile.py's, collecting tests/summary.py's.
Only standard library modules are used.
"""

import argparse
import os
import sys

import resultfile
import summary
from judge import find_cell, judge_dir
from ktap import clean_lines, parse_ktap
from policy import read_lifetime, read_matrix


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


def cmd_summary(args):
    parts = []
    for p in args.part:
        sub, sep, matrix = p.partition("=")
        if not sep or not sub or not matrix or "/" in sub:
            print(f"summary: --part {p!r}: expected dir=matrix (a subdirectory of "
                  f"--results and the matrix of its cells)", file=sys.stderr)
            return 2
        parts.append((sub, matrix))
    return summary.summarize(args.results, args.matrix, parts)


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
    s.add_argument("--part", action="append", default=[], metavar="DIR=MATRIX",
                   help="also count the cells of MATRIX, whose results are in "
                   "--results/DIR (repeatable)")
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
