#!/usr/bin/env python3
"""make mutants: every mutation of policy/mutants applied alone to the
patched tree, its kernels rebuilt, the cells it names booted; a mutant
some test fails on is killed, one every test passes survived (a missing
test).

    mutants.py --patched TREE --tree MUTANT_TREE --obj OBJ --out DIR
               [--only NAME ...] [--cell-env VAR=VALUE ...] [--dry-run]

The mutant tree is a git worktree of the patched tree (branch sanitize),
reset to its HEAD before each mutation, so the patched tree itself is
never touched; its kernels are built in OBJ/<kernel>/ by the same
tests/kernel/build-kernel.sh as make kernel (incrementally from one mutant
to the next, ccache for the rest), and its cells booted by
tests/harness/run-cell.sh and judged as in make check.  A mutation that
does not apply (a string not found, a revert that conflicts) or does not
build is an error, neither killed nor survived.

Writes DIR/ktap.log (ok = killed), DIR/mutants.json, DIR/table.md,
DIR/score.txt ("K of N mutants killed", the summary's line) and each
mutant's cells under DIR/<mutant>/.  Exit status 1 unless every mutant
was killed.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import time

from harness import policy

TOP = policy.TOP


def git(tree, *args, check=True):
    return subprocess.run(["git", "-C", tree, *args], capture_output=True, text=True,
                          timeout=600, check=check)


def prepare_tree(patched, tree):
    """The mutant worktree at the patched tree's HEAD, clean."""
    head = git(patched, "rev-parse", "HEAD").stdout.strip()
    if not os.path.isdir(tree):
        git(patched, "worktree", "add", "--detach", tree, head)
    git(tree, "revert", "--abort", check=False)
    git(tree, "checkout", "-q", "--detach", head)
    git(tree, "reset", "-q", "--hard", head)
    git(tree, "clean", "-fdq")
    return head


def patch_commit(patched, number):
    """The commit of the series that src-patches/NNNN-*.patch is."""
    commits = git(patched, "rev-list", "--reverse", "pristine..HEAD").stdout.split()
    index = int(number) - 1
    if not 0 <= index < len(commits):
        raise ValueError(f"the patched tree has {len(commits)} commits, no patch {number}")
    return commits[index]


def apply(mutant, patched, tree):
    """Apply one mutation to the (clean) mutant tree; raise ValueError with
    the reason when it cannot apply."""
    kind, args = mutant["kind"], mutant["args"]
    if kind == "revert":
        commit = patch_commit(patched, args[0])
        r = git(tree, "-c", "user.name=mutants", "-c", "user.email=mutants@localhost",
                "revert", "--no-edit", commit, check=False)
        if r.returncode != 0:
            git(tree, "revert", "--abort", check=False)
            raise ValueError(f"patch {args[0]} does not revert cleanly on the series: "
                             f"{(r.stdout + r.stderr).strip().splitlines()[-1:]}")
        return
    path, old, new = args
    full = os.path.join(tree, path)
    try:
        with open(full, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ValueError(f"{path}: {e.strerror}")
    n = text.count(old)
    if n == 0 or (kind == "replace" and n != 1):
        raise ValueError(f"{path}: {old!r} occurs {n} times, {kind} needs "
                         f"{'exactly one' if kind == 'replace' else 'at least one'}")
    with open(full, "w", encoding="utf-8") as f:
        f.write(text.replace(old, new))


def build(kernel, tree, obj, log):
    env = dict(os.environ, OBJ=obj, PATCHED=tree)
    with open(log, "a", encoding="utf-8") as f:
        r = subprocess.run([os.path.join(TOP, "tests", "kernel", "build-kernel.sh"), kernel],
                           stdout=f, stderr=subprocess.STDOUT, env=env, cwd=TOP,
                           timeout=7200)
    return r.returncode == 0


BANNER = re.compile(rb"Linux version [^\n\0]*#\d+ [^\n\0]*")


def banner(data):
    """The "Linux version ... #N SMP <date>" of a kernel image or console
    log (bytes), or None; an image also holds a template without the build
    number, which is not it."""
    m = BANNER.search(data)
    return m.group(0).decode("utf-8", "replace").strip() if m else None


def built_banner(obj, kernel):
    """The banner of the vmlinux just built in obj/<kernel>, or None."""
    try:
        with open(os.path.join(obj, kernel, "vmlinux"), "rb") as f:
            return banner(f.read())
    except OSError:
        return None


def booted_banner(out, cell):
    try:
        with open(os.path.join(out, cell, "console.log"), "rb") as f:
            return banner(f.read())
    except OSError:
        return None


def boot(suite, cell, obj, out, cell_env):
    """Boot one cell on the mutant's kernels; the failing tests (path:
    message), or None when the harness itself could not run it."""
    s = policy.read_suites()[suite]
    # A result left by an earlier boot must never stand for this one.
    shutil.rmtree(os.path.join(out, cell), ignore_errors=True)
    env = dict(os.environ, **cell_env, OBJ=obj,
               CHANNELS=os.path.join(TOP, s["channels"]),
               LIFETIME_TABLE=os.path.join(TOP, s["lifetime"]))
    r = subprocess.run([os.path.join(TOP, "tests", "harness", "run-cell.sh"),
                        os.path.join(TOP, s["matrix"]), cell, out],
                       capture_output=True, text=True, env=env, cwd=TOP, timeout=3600)
    try:
        with open(os.path.join(out, cell, "result.json"), encoding="utf-8") as f:
            tests = json.load(f)["tests"]
    except (OSError, ValueError):
        sys.stderr.write(r.stdout + r.stderr)
        return None
    return [f"{cell}.{t['path']}: {t['message']}" for t in tests
            if t["status"] in ("FAIL", "ERROR", "MISS")]


def run(args):
    mutants = policy.read_mutants()
    if args.only:
        unknown = [n for n in args.only if n not in {m["name"] for m in mutants}]
        if unknown:
            print(f"mutants: no mutant {', '.join(unknown)} in policy/mutants", file=sys.stderr)
            return 2
        mutants = [m for m in mutants if m["name"] in args.only]
    if args.report:
        return report(args.out)
    if args.dry_run:
        bad = 0
        for m in mutants:
            try:
                prepare_tree(args.patched, args.tree)
                apply(m, args.patched, args.tree)
                print(f"mutants: {m['name']}: applies")
            except (ValueError, subprocess.CalledProcessError) as e:
                bad += 1
                print(f"mutants: {m['name']}: does not apply: {e}", file=sys.stderr)
        prepare_tree(args.patched, args.tree)
        return 1 if bad else 0
    cell_env = dict(kv.split("=", 1) for kv in args.cell_env)
    os.makedirs(args.out, exist_ok=True)
    results = []
    start_all = time.time()
    for i, m in enumerate(mutants, 1):
        start = time.time()
        mdir = os.path.join(args.out, m["name"])
        os.makedirs(mdir, exist_ok=True)
        log = os.path.join(mdir, "build.log")
        if os.path.exists(log):
            os.unlink(log)
        print(f"mutants: [{i}/{len(mutants)}] {m['name']}: {m['kind']} "
              f"{' '.join(a if len(a) < 40 else a[:37] + '...' for a in m['args'][:1])}",
              flush=True)
        res = {"name": m["name"], "mutation": [m["kind"], *m["args"]],
               "cells": [c for _, c in m["cells"]]}
        try:
            prepare_tree(args.patched, args.tree)
            apply(m, args.patched, args.tree)
        except (ValueError, subprocess.CalledProcessError) as e:
            res.update(verdict="error", why=f"does not apply: {e}")
        else:
            broken = [k for k in m["kernels"] if not build(k, args.tree, args.obj, log)]
            if broken:
                res.update(verdict="error", why=f"{', '.join(broken)} does not build "
                                                f"(see {os.path.relpath(log)})")
            else:
                res.update(verdict="survived", why="every test of its cells passed")
                # A verdict holds only for the kernels just built: a boot of
                # any other (a stale image) is an error, never a kill or a
                # survival.
                built = {built_banner(args.obj, k) for k in m["kernels"]}
                for suite, cell in m["cells"]:
                    failed = boot(suite, cell, args.obj, mdir, cell_env)
                    if failed is None:
                        res.update(verdict="error", why=f"cell {cell} could not be booted")
                        break
                    booted = booted_banner(mdir, cell)
                    if booted not in built:
                        res.update(verdict="error",
                                   why=f"cell {cell} booted {booted!r}, not a kernel this "
                                       f"mutant built ({', '.join(sorted(map(str, built)))})")
                        break
                    if failed:
                        res.update(verdict="killed", why=failed[0],
                                   failures=len(failed), killed_by=cell)
                        break
        res["seconds"] = round(time.time() - start)
        res["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
        print(f"mutants: {m['name']}: {res['verdict'].upper()} ({res['why']}), "
              f"{res['seconds']} s", flush=True)
        with open(os.path.join(mdir, "verdict.json"), "w", encoding="utf-8") as f:
            json.dump(res, f, indent=2)
            f.write("\n")
    prepare_tree(args.patched, args.tree)
    print(f"mutants: {len(mutants)} run in {round(time.time() - start_all)} s")
    return report(args.out)


def latest(out):
    """Every mutant of policy/mutants with its last verdict (a run of some
    of them keeps the others'), "not run" for one never run or whose
    mutation changed since."""
    results = []
    for m in policy.read_mutants():
        try:
            with open(os.path.join(out, m["name"], "verdict.json"), encoding="utf-8") as f:
                res = json.load(f)
        except (OSError, ValueError):
            res = None
        if res is None or res.get("mutation") != [m["kind"], *m["args"]]:
            res = {"name": m["name"], "mutation": [m["kind"], *m["args"]],
                   "cells": [c for _, c in m["cells"]], "verdict": "not run",
                   "why": "make mutants MUTANTS=" + m["name"], "seconds": 0}
        results.append(res)
    return results


def report(out):
    """ktap.log, mutants.json, table.md and score.txt for every mutant of
    policy/mutants, from each one's last verdict; 1 unless all are killed."""
    os.makedirs(out, exist_ok=True)
    results = latest(out)
    seconds = sum(r.get("seconds", 0) for r in results)
    killed = sum(r["verdict"] == "killed" for r in results)
    not_run = sum(r["verdict"] == "not run" for r in results)
    lines = ["KTAP version 1", f"1..{len(results)}"]
    for i, r in enumerate(results, 1):
        if r["verdict"] == "not run":
            lines.append(f"ok {i} {r['name']} # SKIP not run: {r['why']}")
            continue
        ok = "ok" if r["verdict"] == "killed" else "not ok"
        lines.append(f"{ok} {i} {r['name']} # {r['verdict']}: {r['why']}")
    with open(os.path.join(out, "ktap.log"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "mutants.json"), "w", encoding="utf-8") as f:
        json.dump({"seconds": seconds, "mutants": results}, f, indent=2)
        f.write("\n")
    table = ["| mutant | mutation | cells | verdict | by |", "|---|---|---|---|---|"]
    for r in results:
        what = " ".join(r["mutation"][:2])
        table.append(f"| `{r['name']}` | `{what[:60]}` | {' '.join(r['cells'])} | "
                     f"{r['verdict']} | {r['why'][:100].replace('|', '/')} |")
    with open(os.path.join(out, "table.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(table) + "\n")
    day = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    score = (f"mutants: {killed} of {len(results)} killed"
             f"{f', {not_run} not run' if not_run else ''} (make mutants, last {day}; "
             f"{seconds} s of rebuilds and boots)")
    with open(os.path.join(out, "score.txt"), "w", encoding="utf-8") as f:
        f.write(score + "\n")
    print("\n".join(table))
    print(score)
    return 0 if killed == len(results) else 1


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--patched", required=True, help="the patched tree (branch sanitize)")
    p.add_argument("--tree", required=True, help="the mutant worktree (made if missing)")
    p.add_argument("--obj", required=True, help="where the mutant kernels are built")
    p.add_argument("--out", required=True)
    p.add_argument("--only", nargs="*", default=[], help="these mutants only")
    p.add_argument("--report", action="store_true",
                   help="only write the report from each mutant's last verdict")
    p.add_argument("--dry-run", action="store_true",
                   help="only apply each mutation (seconds): every one must apply")
    p.add_argument("--cell-env", action="append", default=[], metavar="VAR=VALUE",
                   help="what run-cell.sh needs (INITRD, RAMDIR, RAMSCAN, ACCEL, TIMEOUT)")
    args = p.parse_args(argv)
    # git -C takes a relative worktree path from the tree it runs in.
    args.patched, args.tree, args.obj, args.out = map(
        os.path.abspath, (args.patched, args.tree, args.obj, args.out))
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
