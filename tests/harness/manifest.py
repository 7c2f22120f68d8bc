"""What each cell must report, derived from the repository, never listed
by hand a second time.

kunit_cases() reads the series (src-patches/series, the patches in order)
and returns every KUnit suite the series adds with its cases, as the last
patch leaves them: the "+" lines of KUNIT_CASE() entries (a later patch's
"-" line takes one away) and the suite's .name.  The judge compares a
cell's report with it, so a case that is deleted from the log, or that
never runs because the kernel stopped early, is a MISS naming the case.

skip_allowed() says whether policy/skips (read by the loader,
policy.read_skips()) allows a skip a cell reported: every other skip
fails its cell.  Standard library only.
"""

import fnmatch
import os
import re

from harness.policy import SKIPS, PolicyError, TOP, read_skips, shown  # noqa: F401

PATCHES = os.path.join(TOP, "src-patches")

DIFF_FILE = re.compile(r"^\+\+\+ b/(\S+)")
KUNIT_CASE = re.compile(r"^([+-])\s*KUNIT_CASE(?:_SLOW|_PARAM|_PARAM_ATTR|_ATTR)?\((\w+)")
SUITE_START = re.compile(r"^\+\s*static struct kunit_suite\b")
SUITE_NAME = re.compile(r'^\+\s*\.name\s*=\s*"([\w-]+)"')


def kunit_cases(patches=PATCHES):
    """{suite name: [case, ...]} of the KUnit suites the series adds."""
    series = os.path.join(patches, "series")
    try:
        with open(series, encoding="utf-8") as f:
            names = [x.strip() for x in f if x.strip() and not x.startswith("#")]
    except OSError as e:
        raise PolicyError(f"{shown(series)}: {e.strerror}")
    files = {}
    for name in names:
        cur, in_suite = None, False
        with open(os.path.join(patches, name), encoding="utf-8", errors="replace") as f:
            for line in f:
                m = DIFF_FILE.match(line)
                if m:
                    cur = files.setdefault(m.group(1), {"cases": [], "suite": None})
                    in_suite = False
                    continue
                if cur is None:
                    continue
                m = KUNIT_CASE.match(line)
                if m:
                    sign, case = m.groups()
                    if sign == "+" and case not in cur["cases"]:
                        cur["cases"].append(case)
                    elif sign == "-" and case in cur["cases"]:
                        cur["cases"].remove(case)
                    continue
                if SUITE_START.match(line):
                    in_suite = True
                elif in_suite:
                    m = SUITE_NAME.match(line)
                    if m:
                        cur["suite"], in_suite = m.group(1), False
    return {f["suite"]: f["cases"] for f in files.values() if f["suite"] and f["cases"]}


def skip_allowed(skips, kernel, path, message):
    """The policy/skips line that allows this skip, or None."""
    for s in skips:
        if (any(fnmatch.fnmatchcase(kernel, g) for g in s["kernels"])
                and fnmatch.fnmatchcase(path, s["test"]) and s["reason"] in message):
            return s
    return None


