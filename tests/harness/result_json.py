"""The one writer of result.json, the file the summary counts.

Every producer of results (a judged matrix cell, a host test's KTAP, the
broken cells of make harness-tests, the fast paths, the bench smoke run,
the LAVA smoke run) writes <dir>/result.json through write(), so the shape
python3 -m harness summary reads is defined here and nowhere else:

    {"cell": name, "kernel": kernel, "args": kernel arguments, "log": path,
     ...what a matrix cell adds (expect, seconds, config, cmdline, ...),
     "tests": [{"path", "status", "message", "context"}, ...]}

Statuses are KCIDB's: PASS, FAIL, ERROR, MISS, SKIP; any other word is a
bug of the producer and raises instead of reaching the summary, where it
would be counted as neither passed nor failed.

From a shell (make bench-smoke, make lava-smoke), "verdict" runs a command
and writes its exit status as a result of one test:

    python3 -m harness verdict --out DIR --cell NAME --kernel K --log PATH
                  --test PATH --message TEXT [--errors FILE] -- COMMAND...

With --errors, the command's stderr is copied to FILE as well as to this
stderr, and on failure its lines that say ERROR are the test's message
(the first three) and context (all).  The exit status is the command's.
Standard library only.
"""

import argparse
import json
import os
import subprocess
import sys

STATUSES = ("PASS", "FAIL", "ERROR", "MISS", "SKIP")
# The statuses that fail a run (a MISS is a test that should have reported).
FAILED = ("FAIL", "ERROR", "MISS")


def test(path, status, message="", context=""):
    """One test result, checked."""
    if status not in STATUSES:
        raise ValueError(f"test {path}: status {status!r} is not one of {', '.join(STATUSES)}")
    return {"path": path, "status": status, "message": message, "context": context}


def write(out_dir, *, cell, kernel, tests, args="", log="", **fields):
    """Write out_dir/result.json; tests are dicts as test() makes them.
    fields: what a matrix cell records beside them (expect, seconds, config,
    cmdline, qemu-version, accel, arch; a keyword can't hold "-", so pass those
    with **{...}).  Returns the path written."""
    checked = [test(t["path"], t["status"], t.get("message", ""), t.get("context", ""))
               for t in tests]
    result = {"cell": cell, "kernel": kernel, "args": args, "log": log, **fields,
              "tests": checked}
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "result.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    return path


def failed(tests):
    return [t for t in tests if t["status"] in FAILED]


def run_verdict(args):
    """Run args.command; its exit status is the verdict of one test."""
    errors = []
    try:
        if args.errors:
            os.makedirs(os.path.dirname(os.path.abspath(args.errors)), exist_ok=True)
            with open(args.errors, "w", encoding="utf-8") as saved:
                proc = subprocess.Popen(args.command, stderr=subprocess.PIPE, text=True,
                                        errors="replace")
                for line in proc.stderr:
                    sys.stderr.write(line)
                    saved.write(line)
                rc = proc.wait()
            with open(args.errors, encoding="utf-8", errors="replace") as f:
                errors = [line for line in f.read().splitlines() if "ERROR" in line]
        else:
            rc = subprocess.call(args.command)
    except OSError as e:
        # A command that cannot start is a failed test, not a lost one.
        print(f"verdict: cannot run {args.command[0]}: {e}", file=sys.stderr)
        rc, errors = 127, [f"ERROR cannot run {args.command[0]}: {e.strerror}"]
    status = "PASS" if rc == 0 else "FAIL"
    message = "; ".join(errors[:3]) if status != "PASS" and errors else args.message
    write(args.out, cell=args.cell, kernel=args.kernel, args=args.args, log=args.log,
          tests=[test(args.test, status, message, "\n".join(errors))])
    return rc


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command_name", required=True)
    v = sub.add_parser("verdict", help="a command's exit status as the result of one test")
    v.add_argument("--out", required=True, help="directory of the result.json")
    v.add_argument("--cell", required=True)
    v.add_argument("--kernel", required=True)
    v.add_argument("--args", default="", help="kernel arguments, if any")
    v.add_argument("--log", default="", help="where a reader finds the details")
    v.add_argument("--test", required=True, help="the test's path")
    v.add_argument("--message", required=True, help="the message when no ERROR line says more")
    v.add_argument("--errors", help="save the command's stderr here; its ERROR lines "
                   "explain a failure")
    v.add_argument("command", nargs="+", help="after --: the command to run")
    v.set_defaults(func=run_verdict)
    args = p.parse_args(argv)
    return args.func(args)

