#!/usr/bin/env python3
"""Tests of the harness itself.

1. Without a kernel ("make unit"): the judge (tests/harness/judge.py, ktap.py) on
   saved console logs in tests/selftest/logs/ (KTAP nesting, skips,
   timestamps, interleaved kernel lines, panics, warnings, provoked
   reports, policy and bad-value checks, policy/lifetime) and the expect
   driver (tests/harness/run-cell.exp) on a fake guest.  Prints KTAP, one line
   per case (-v: a failure's traceback too), for "python3 -m harness ktap".
2. With --cells ("make harness-tests", only this part): the cells of
   tests/selftest/broken.matrix, booted for real, must have been judged as
   their "verdict=" says (a hang is a timeout, a panic and a WARNING fail
   the cell, a suite that never reported is a MISS, and the control cell
   passes).  Results go to <out>/result.json in the same shape as a matrix
   cell, so the summary counts them with everything else.
"""

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
from harness import judge
from harness import ktap
from harness import policy
from harness import __main__ as results
from harness import summary
from harness import result_json
from selftest import ktap_runner

LOGS = os.path.join(HERE, "logs")


def log(name):
    with open(os.path.join(LOGS, name), encoding="utf-8", newline="") as f:
        return ktap.clean_lines(f.read())


def cell(tests="", expect="", kernel="lab-patched"):
    return {"cell": "t", "kernel": kernel, "args": "", "tests": tests.split(),
            "expect": policy.parse_expect(expect, "test")}


PASSED = {"result": "pass", "seconds": "3"}


def by_path(tests):
    return {t["path"]: t for t in tests}


class KtapTest(unittest.TestCase):
    def test_nested_kunit_suite(self):
        r = ktap.parse_ktap(log("kunit-pass.log"))
        paths = [".".join(x["path"]) for x in r]
        self.assertIn("sanitize_mem.pages_order0", paths)
        self.assertIn("sanitize_mem.param.size_64", paths)
        # The suite line and the parameterised parent repeat their leaves.
        self.assertNotIn("sanitize_mem", paths)
        self.assertNotIn("sanitize_mem.param", paths)

    def test_skip_is_not_pass(self):
        r = {".".join(x["path"]): x for x in ktap.parse_ktap(log("kunit-pass.log"))}
        self.assertEqual(r["sanitize_mem.verify_catches_write"]["status"], "SKIP")
        self.assertIn("sanitize_verify", r["sanitize_mem.verify_catches_write"]["message"])

    def test_failure_and_timestamps(self):
        r = {".".join(x["path"]): x for x in ktap.parse_ktap(log("kunit-fail.log"))}
        self.assertEqual(r["sanitize_mem.slab_plain"]["status"], "FAIL")
        self.assertEqual(r["sanitize_mem.pages_order0"]["status"], "PASS")
        # A failed case without a message of its own says what KUnit said.
        self.assertEqual(r["sanitize_mem.slab_plain"]["message"],
                         "EXPECTATION FAILED at mm/sanitize_mem_kunit.c:120: "
                         "Expected nonzero == 0, but")

    def test_guest_document(self):
        r = [".".join(x["path"]) for x in ktap.parse_ktap(log("guest.log"))]
        self.assertEqual(r, ["guest.selftest-ok.cmdline_names_this_test",
                             "guest.second.check_a"])


class JudgeTest(unittest.TestCase):
    def test_clean_cell_passes(self):
        t = by_path(judge.judge_cell(cell("kunit:sanitize_mem", "policy=full"),
                                       log("kunit-pass.log"), PASSED))
        self.assertEqual(t["boot"]["status"], "PASS")
        self.assertEqual(t["policy"]["status"], "PASS")
        self.assertEqual(t["kunit.sanitize_mem.pages_order0"]["status"], "PASS")
        self.assertEqual(t["kunit.sanitize_mem.verify_catches_write"]["status"], "SKIP")

    def test_wrong_policy_fails(self):
        t = by_path(judge.judge_cell(cell("", "policy=pages"), log("kunit-pass.log"), PASSED))
        self.assertEqual(t["policy"]["status"], "FAIL")
        self.assertIn("expected pages", t["policy"]["message"])

    def test_clear_once_in_boot_line_and_sysfs(self):
        t = by_path(judge.judge_cell(cell("", "policy=full clear-once=pages,slab"),
                                     log("kunit-pass.log"), PASSED))
        self.assertEqual(t["clear_once"]["status"], "PASS")
        t = by_path(judge.judge_cell(cell("", "policy=full clear-once=pages"),
                                     log("kunit-pass.log"), PASSED))
        self.assertEqual(t["clear_once"]["status"], "FAIL")
        self.assertIn("expected pages", t["clear_once"]["message"])
        # A kernel whose boot line does not say it fails, it is not assumed.
        t = by_path(judge.judge_cell(cell("", "policy=slab clear-once=none"),
                                     log("kunit-fail.log"), PASSED))
        self.assertEqual(t["clear_once"]["status"], "FAIL")
        self.assertIn("clear-once=", t["clear_once"]["message"])

    def test_requested_tells_init_on_free_from_the_policy(self):
        iof = ["[    0.000000] sanitize_mem: policy=pages,slab (pages slab) "
               "clear-once=pages requested=off",
               "HARNESS: policy=pages,slab", "HARNESS: requested=off"]
        t = by_path(judge.judge_cell(cell("", "policy=pages,slab requested=off"), iof, PASSED))
        self.assertEqual(t["requested"]["status"], "PASS")
        t = by_path(judge.judge_cell(cell("", "policy=pages,slab requested=pages,slab"),
                                     iof, PASSED))
        self.assertEqual(t["requested"]["status"], "FAIL")
        self.assertIn("requested=off", t["requested"]["message"])
        # Not printed where it is the policy; sysfs must still say it.
        same = ["sanitize_mem: policy=full (pages slab stack) clear-once=pages",
                "HARNESS: policy=full", "HARNESS: requested=full"]
        t = by_path(judge.judge_cell(cell("", "policy=full requested=full"), same, PASSED))
        self.assertEqual(t["requested"]["status"], "PASS")
        t = by_path(judge.judge_cell(cell("", "policy=full requested=full"), same[:2], PASSED))
        self.assertEqual(t["requested"]["status"], "FAIL")

    def test_warning_fails_boot_with_context(self):
        t = by_path(judge.judge_cell(cell("", "policy=none", "lab-vanilla"),
                                       log("warning.log"), PASSED))
        self.assertEqual(t["boot"]["status"], "FAIL")
        self.assertIn("WARNING:", t["boot"]["message"])
        self.assertIn("lkdtm_WARNING", t["boot"]["context"])

    def test_trinity_chatter_is_no_report_but_a_report_among_it_is(self):
        # A debug-trinity-verify console, trimmed, with two lines of kernel
        # chatter from other trinity boots: what the fuzzed calls make the
        # kernel print is no report, and a report printed among it is found.
        c = cell("guest:trinity", "policy=full clear-once=pages", "debug-patched")
        lines = log("trinity-cell.log")
        t = by_path(judge.judge_cell(c, lines, PASSED))
        self.assertEqual([p for p, x in t.items() if x["status"] != "PASS"], [])
        self.assertIn("guest.trinity.syscalls_issued", t)
        i = next(n for n, line in enumerate(lines) if "private mapping with mremap" in line)
        report = "BUG: KASAN: slab-use-after-free in __sanitize_mem_check+0x62/0xa0"
        t = by_path(judge.judge_cell(c, lines[:i] + [report] + lines[i:], PASSED))
        self.assertEqual(t["boot"]["status"], "FAIL")
        self.assertIn(report, t["boot"]["message"])

    def test_panic_fails_even_if_qemu_exited_cleanly(self):
        t = by_path(judge.judge_cell(cell("guest:selftest-panic", "policy=none", "lab-vanilla"),
                                       log("panic.log"), {"result": "eof", "reason": "QEMU exited"}))
        self.assertEqual(t["boot"]["status"], "FAIL")
        self.assertIn("Kernel panic", t["boot"]["message"])
        self.assertEqual(t["guest.selftest-panic"]["status"], "MISS")

    def test_missing_suite_is_miss(self):
        t = by_path(judge.judge_cell(cell("kunit:sanitize_mem", "policy=none", "lab-vanilla"),
                                       log("guest.log"), PASSED))
        self.assertEqual(t["kunit.sanitize_mem"]["status"], "MISS")

    def test_timeout_reason_is_kept(self):
        status = {"result": "timeout", "reason": "timeout: no \"HARNESS: END\" within 45 s"}
        t = by_path(judge.judge_cell(cell("", "policy=none", "lab-vanilla"),
                                       log("guest.log"), status))
        self.assertEqual(t["boot"]["status"], "FAIL")
        self.assertIn("timeout", t["boot"]["message"])

    def test_provoked_report_is_exempt_only_in_its_case(self):
        c = cell("kunit:sanitize_mem", "policy=full report=sanitize_mem.verify_catches_write")
        t = by_path(judge.judge_cell(c, log("report.log"), PASSED))
        self.assertEqual(t["report.sanitize_mem.verify_catches_write"]["status"], "PASS")
        self.assertEqual(t["boot"]["status"], "PASS")
        # Without the declaration the same report fails the boot.
        t = by_path(judge.judge_cell(cell("kunit:sanitize_mem", "policy=full"),
                                       log("report.log"), PASSED))
        self.assertEqual(t["boot"]["status"], "FAIL")

    def test_suite_that_provokes_reports_is_exempt_case_by_case(self):
        # KFENCE's suite: each case provokes its report in its own region;
        # a report outside every case still fails the boot.
        lines = ["KTAP version 1", "1..1", "    KTAP version 1", "    # Subtest: kfence",
                 "    1..2", "BUG: KFENCE: out-of-bounds read in test_oob+0x1/0x2",
                 "    ok 1 test_oob", "BUG: KFENCE: use-after-free read in test_uaf+0x1/0x2",
                 "    ok 2 test_uaf", "ok 1 kfence"]
        c = cell("kunit:kfence", "policy=none report=kfence", "distro-vanilla")
        t = by_path(judge.judge_cell(c, lines, PASSED))
        self.assertEqual(t["report.kfence"]["status"], "PASS")
        self.assertEqual(t["boot"]["status"], "PASS")
        t = by_path(judge.judge_cell(cell("kunit:kfence", "policy=none", "distro-vanilla"),
                                     lines, PASSED))
        self.assertEqual(t["boot"]["status"], "FAIL")
        late = lines + ["BUG: KFENCE: invalid free in after_the_suite+0x1/0x2"]
        t = by_path(judge.judge_cell(c, late, PASSED))
        self.assertEqual(t["boot"]["status"], "FAIL")
        self.assertIn("after_the_suite", t["boot"]["message"])

    def test_case_the_cell_must_run_fails_when_skipped(self):
        # kunit-pass.log skips verify_catches_write (no sanitize_verify=1):
        # a SKIP elsewhere, a FAIL in a cell that exists to run it.
        lines = log("kunit-pass.log")
        t = by_path(judge.judge_cell(cell("kunit:sanitize_mem", "policy=full"),
                                     lines, PASSED))
        self.assertEqual(t["kunit.sanitize_mem.verify_catches_write"]["status"], "SKIP")
        c = cell("kunit:sanitize_mem", "policy=full run=sanitize_mem.verify_catches_write")
        t = by_path(judge.judge_cell(c, lines, PASSED))
        got = t["kunit.sanitize_mem.verify_catches_write"]
        self.assertEqual(got["status"], "FAIL")
        self.assertIn("skipped: needs sanitize_verify=1", got["message"])
        # A case that never reported at all is missed, not forgotten.
        c = cell("kunit:sanitize_mem", "policy=full run=sanitize_mem.no_such_case")
        t = by_path(judge.judge_cell(c, lines, PASSED))
        self.assertEqual(t["run.sanitize_mem.no_such_case"]["status"], "MISS")

    def test_bad_value_rejected(self):
        c = cell("", 'policy=full error="pages,nope"')
        t = by_path(judge.judge_cell(c, log("bad-value.log"), PASSED))
        self.assertEqual(t["invalid_value"]["status"], "PASS")
        self.assertEqual(t["policy"]["status"], "PASS")
        c = cell("", 'policy=full error="bogus"')
        t = by_path(judge.judge_cell(c, log("bad-value.log"), PASSED))
        self.assertEqual(t["invalid_value"]["status"], "FAIL")

    def test_unexpected_rejection_fails(self):
        t = by_path(judge.judge_cell(cell("", "policy=full"), log("bad-value.log"), PASSED))
        self.assertEqual(t["invalid_value"]["status"], "FAIL")

    def test_kernel_line_interleaved_with_policy(self):
        lines = log("kunit-pass.log")
        i = lines.index("HARNESS: policy=full")
        lines[i] = ("HARNESS: policy=fullclocksource: timekeeping watchdog on CPU0: "
                    "Marking clocksource 'tsc-early' as unstable")
        t = by_path(judge.judge_cell(cell("", "policy=full"), lines, PASSED))
        self.assertEqual(t["policy"]["status"], "PASS")

    def test_expect_parsing(self):
        e = policy.parse_expect('policy=full error="" timeout=45', "x")
        self.assertEqual(e, {"policy": "full", "error": "", "timeout": "45"})
        with self.assertRaises(SystemExit):
            policy.parse_expect("policy=full garbage", "x")


# The series as manifest.kunit_cases() reads it, for the cases of
# kunit-pass.log.
KUNIT_PASS_PATCH = """\
+++ b/mm/sanitize_mem_kunit.c
+\tKUNIT_CASE(pages_order0),
+\tKUNIT_CASE_PARAM(param, sizes_gen_params),
+\tKUNIT_CASE(slab_plain),
+\tKUNIT_CASE(verify_catches_write),
+\tKUNIT_CASE(dropped_later),
+static struct kunit_suite sanitize_mem_test_suite = {
+\t.name = "sanitize_mem",
"""
# A later patch that takes a case away again.
KUNIT_LATER_PATCH = """\
+++ b/mm/sanitize_mem_kunit.c
-\tKUNIT_CASE(dropped_later),
"""


class JudgeAgainTest(unittest.TestCase):
    """python3 -m harness judge (make judge): saved logs judged again, no boot."""

    def setUp(self):
        d = tempfile.mkdtemp(prefix="judge-test.")
        self.addCleanup(shutil.rmtree, d, True)
        self.matrix = os.path.join(d, "matrix")
        with open(self.matrix, "w", encoding="utf-8") as f:
            f.write("full | lab-patched | sanitize_mem=full | kunit:sanitize_mem | policy=full\n"
                    "pages | lab-patched | sanitize_mem=pages | | policy=pages\n"
                    "never | lab-patched | | | policy=full\n")
        self.results = os.path.join(d, "results")
        for name in ("full", "pages"):
            os.makedirs(os.path.join(self.results, name))
            shutil.copy(os.path.join(LOGS, "kunit-pass.log"),
                        os.path.join(self.results, name, "console.log"))
            with open(os.path.join(self.results, name, "status"), "w", encoding="utf-8") as f:
                f.write("result=pass\nseconds=3\n")
        # A stale result that the saved log contradicts.
        with open(os.path.join(self.results, "pages", "result.json"), "w",
                  encoding="utf-8") as f:
            json.dump({"cell": "pages", "tests": [{"path": "policy", "status": "PASS"}]}, f)

        # The series as the manifest reads it: the cases of kunit-pass.log.
        self.patches = os.path.join(d, "patches")
        os.makedirs(self.patches)
        with open(os.path.join(self.patches, "series"), "w", encoding="utf-8") as f:
            f.write("0001-kunit.patch\n0002-later.patch\n")
        for name, text in (("0001-kunit.patch", KUNIT_PASS_PATCH),
                           ("0002-later.patch", KUNIT_LATER_PATCH)):
            with open(os.path.join(self.patches, name), "w", encoding="utf-8") as f:
                f.write(text)
        self.skips = os.path.join(d, "skips")
        with open(self.skips, "w", encoding="utf-8") as f:
            f.write("lab-* | kunit.sanitize_mem.verify_catches_write | needs sanitize_verify=1 "
                    "| the verify cells run it\n")

    def judge(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(results.main(["judge", "--matrix", self.matrix,
                                           "--results", self.results,
                                           "--patches", self.patches,
                                           "--skips", self.skips]), 0)
        return out.getvalue()

    def result(self, name):
        with open(os.path.join(self.results, name, "result.json"), encoding="utf-8") as f:
            return json.load(f)

    def test_saved_logs_judged_again(self):
        out = self.judge()
        self.assertIn("cell full: PASS", out)
        self.assertIn("cell pages: FAIL", out)
        self.assertIn("judge: 2 of the 3 cells", out)
        full = self.result("full")
        self.assertEqual(full["log"], "results/full/console.log")
        self.assertEqual(by_path(full["tests"])["kunit.sanitize_mem.pages_order0"]["status"],
                         "PASS")
        self.assertEqual(by_path(self.result("pages")["tests"])["policy"]["status"], "FAIL")
        self.assertFalse(os.path.exists(os.path.join(self.results, "never")))

    def test_same_as_the_cell_command(self):
        self.judge()
        again = self.result("full")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            results.main(["judge-cell", "--matrix", self.matrix, "--cell", "full",
                          "--dir", os.path.join(self.results, "full"),
                          "--root", os.path.dirname(self.results),
                          "--patches", self.patches, "--skips", self.skips])
        self.assertEqual(again, self.result("full"))

    def test_a_deleted_case_line_is_a_miss_naming_it(self):
        # The saved log with one KUnit result line taken out (issue 34):
        # the judge must name the case, not only count fewer passes.
        log = os.path.join(self.results, "full", "console.log")
        with open(log, encoding="utf-8") as f:
            text = f.read()
        with open(log, "w", encoding="utf-8") as f:
            f.write("".join(x for x in text.splitlines(True) if not x.rstrip().endswith(
                "ok 3 slab_plain")))
        out = self.judge()
        self.assertIn("cell full: FAIL", out)
        t = by_path(self.result("full")["tests"])
        self.assertEqual(t["kunit.sanitize_mem.slab_plain"]["status"], "MISS")
        self.assertEqual(t["kunit.sanitize_mem.plan"]["status"], "MISS")
        self.assertIn("announced 4 results, 3 reported", t["kunit.sanitize_mem.plan"]["message"])

    def test_a_case_the_series_adds_that_never_ran(self):
        with open(os.path.join(self.patches, "0002-later.patch"), "a", encoding="utf-8") as f:
            f.write("+\tKUNIT_CASE(brand_new),\n")
        self.judge()
        t = by_path(self.result("full")["tests"])
        self.assertEqual(t["kunit.sanitize_mem.brand_new"]["status"], "MISS")

    def test_a_skip_policy_skips_does_not_allow_fails(self):
        self.judge()
        t = by_path(self.result("full")["tests"])
        self.assertEqual(t["kunit.sanitize_mem.verify_catches_write"]["status"], "SKIP")
        with open(self.skips, "w", encoding="utf-8") as f:
            f.write("distro-* | kunit.sanitize_mem.verify_catches_write | needs sanitize_verify=1 "
                    "| only the distro kernels\n")
        self.judge()
        t = by_path(self.result("full")["tests"])["kunit.sanitize_mem.verify_catches_write"]
        self.assertEqual(t["status"], "FAIL")
        self.assertIn("policy/skips allows no such skip on kernel lab-patched", t["message"])


class LifetimeTest(unittest.TestCase):
    """policy/lifetime against the scan's counts and the guest's own KTAP,
    on a lab kernel's log where the distro-only channels were skipped."""

    CHANNELS = ("unused", "heap", "msgq", "xattr", "memcg", "thp")

    def judge(self, want, found=None):
        """want: {channel: expectation} (the rest n/a); found: {channel: copies}."""
        d = tempfile.mkdtemp(prefix="lifetime-test.")
        self.addCleanup(shutil.rmtree, d, True)
        counts = {ch: {"full": 0, "head": 0, "tail": 0} for ch in self.CHANNELS}
        for ch, n in (found or {}).items():
            counts[ch] = {"full": 0, "head": n, "tail": n}
        with open(os.path.join(d, "lifetime.json"), "w", encoding="utf-8") as f:
            json.dump({"seed": "71f7fe23f6f613e5", "channels": counts}, f)
        expect = {ch: "n/a" for ch in self.CHANNELS} | {"unused": "0", "heap": "found"} | want
        return by_path(judge.judge_cell(cell("guest:lifetime", "policy=none", "lab-vanilla"),
                                          log("lifetime.log"), PASSED, d, {"t": expect}))

    def test_na_skipped_and_absent_is_a_skip(self):
        t = self.judge({}, {"heap": 8})
        for ch in ("msgq", "xattr", "memcg", "thp"):
            # Nothing was tested: counted as a skip, never as a pass.
            self.assertEqual(t[f"lifetime.{ch}"]["status"], "SKIP", t[f"lifetime.{ch}"])
            # The guest's own result stays what it said: a skip, not a pass.
            self.assertEqual(t[f"guest.lifetime.{ch}"]["status"], "SKIP")
        self.assertIn("kernel has no SYSVIPC", t["lifetime.msgq"]["message"])
        self.assertEqual(t["lifetime.heap"]["status"], "PASS")

    def test_na_with_copies_fails(self):
        t = self.judge({}, {"heap": 8, "msgq": 2})
        self.assertEqual(t["lifetime.msgq"]["status"], "FAIL")
        self.assertIn("2 copies", t["lifetime.msgq"]["message"])

    def test_expected_but_skipped_fails(self):
        t = self.judge({"msgq": "0", "thp": "found"}, {"heap": 8, "thp": 3})
        self.assertEqual(t["lifetime.msgq"]["status"], "FAIL")
        self.assertIn("skipped", t["lifetime.msgq"]["message"])
        self.assertEqual(t["lifetime.thp"]["status"], "FAIL")

    def test_na_but_not_skipped_fails(self):
        t = self.judge({"heap": "n/a"}, {"heap": 8})
        self.assertEqual(t["lifetime.heap"]["status"], "FAIL")
        self.assertIn("instead of a SKIP", t["lifetime.heap"]["message"])
        t = self.judge({"heap": "n/a"})
        self.assertEqual(t["lifetime.heap"]["status"], "FAIL")

    def test_policy_file_reads_na(self):
        table = policy.read_lifetime(os.path.join(os.path.dirname(os.path.dirname(HERE)),
                                                   "policy", "lifetime"))
        self.assertEqual(table["vanilla"]["msgq"], "n/a")
        self.assertEqual(table["distro-vanilla"]["msgq"], "found")
        d = tempfile.mkdtemp(prefix="lifetime-test.")
        self.addCleanup(shutil.rmtree, d, True)
        bad = os.path.join(d, "lifetime")
        with open(bad, "w", encoding="utf-8") as f:
            f.write("channel a b\nmsgq n/a skip\n")
        with self.assertRaises(SystemExit):
            policy.read_lifetime(bad)

    def test_report_shows_na_not_zero(self):
        d = tempfile.mkdtemp(prefix="lifetime-test.")
        self.addCleanup(shutil.rmtree, d, True)
        os.makedirs(os.path.join(d, "t"))
        with open(os.path.join(d, "t", "lifetime.json"), "w", encoding="utf-8") as f:
            json.dump({"channels": {"heap": {"full": 8, "head": 8, "tail": 8},
                                    "msgq": {"full": 0, "head": 0, "tail": 0}}}, f)
        tests = [{"path": p, "status": s} for p, s in
                 (("lifetime.heap", "SKIP"), ("lifetime.msgq", "SKIP"),
                  ("guest.lifetime.heap", "PASS"), ("guest.lifetime.msgq", "SKIP"))]
        summary.lifetime_report(d, [{"cell": "t", "tests": tests}])
        with open(os.path.join(d, "lifetime.md"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn("| heap | 8 (-) |", text)
        self.assertIn("| msgq | n/a |", text)


class ResultFileTest(unittest.TestCase):
    """tests/harness/result_json.py, the one writer of result.json."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="result-json-test.")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def read(self, name):
        with open(os.path.join(self.dir, name, "result.json"), encoding="utf-8") as f:
            return json.load(f)

    def verdict(self, name, script, errors=True):
        argv = ["verdict", "--out", os.path.join(self.dir, name), "--cell", name,
                "--kernel", "host", "--test", "t", "--message", "all reported"]
        if errors:
            argv += ["--errors", os.path.join(self.dir, name + ".errors")]
        with contextlib.redirect_stderr(io.StringIO()):
            return result_json.main(argv + ["--", "sh", "-c", script])

    def test_unknown_status_is_refused(self):
        # "OK" would be counted by the summary as neither passed nor failed.
        with self.assertRaises(ValueError):
            result_json.write(self.dir, cell="c", kernel="k",
                             tests=[{"path": "t", "status": "OK"}])
        with self.assertRaises(ValueError):
            result_json.test("t", "pass")

    def test_written_result_is_counted_by_the_summary(self):
        result_json.write(os.path.join(self.dir, "c"), cell="c", kernel="k",
                         tests=[result_json.test("a", "PASS"), result_json.test("b", "MISS")])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(results.main(["summary", "--results", self.dir]), 1)
        self.assertIn("1 passed, 1 failed", out.getvalue())

    def test_a_step_that_left_no_result_fails(self):
        # make check chains its steps with ";": a step that crashes before
        # writing its result.json must still turn the summary red.
        result_json.write(os.path.join(self.dir, "c"), cell="c", kernel="lab-patched",
                         expect={"policy": "full"},
                         tests=[result_json.test("a", "PASS"), result_json.test("b", "PASS")])
        result_json.write(os.path.join(self.dir, "d"), cell="d", kernel="lab-patched",
                         expect={"policy": "full"}, tests=[result_json.test("a", "PASS")])
        rc, out = self.summary("--step", "c", "--step", "fastpath")
        self.assertEqual(rc, 1)
        self.assertIn("fastpath.harness: MISS: the step left no result", out)
        self.assertIn("3 passed, 1 failed", out)
        # a.full in two cells is one check
        self.assertIn("2 distinct kernel checks passed (test x policy)", out)

    def part(self):
        """A result directory with one cell of its own and a part "real"
        whose matrix has two cells, one of which left a result."""
        result_json.write(os.path.join(self.dir, "c"), cell="c", kernel="k",
                         tests=[result_json.test("a", "PASS")])
        result_json.write(os.path.join(self.dir, "real", "r1"), cell="r1", kernel="k",
                         tests=[result_json.test("a", "PASS"), result_json.test("b", "PASS")])
        matrix = os.path.join(self.dir, "matrix-real")
        with open(matrix, "w", encoding="utf-8") as f:
            f.write("r1 | lab-vanilla | - | guest:lifetime | policy=none\n"
                    "r2 | lab-patched | - | guest:lifetime | policy=full\n")
        return matrix

    def summary(self, *argv):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            rc = results.main(["summary", "--results", self.dir, *argv])
        return rc, out.getvalue()

    def test_part_cells_are_counted_and_missing_ones_fail(self):
        # make check's real-program cells live in build/results/real/ with
        # their own matrix: their tests count in the one summary line, and
        # a cell of that matrix that never reported is an error.
        matrix = self.part()
        rc, text = self.summary("--part", f"real={matrix}")
        self.assertEqual(rc, 1)
        self.assertIn("3 passed, 1 failed", text)
        self.assertIn("r2.harness: ERROR: the cell produced no result", text)
        # Without the part, the main directory's cell alone.
        self.assertEqual(self.summary(), (0, self.summary()[1]))
        self.assertIn("1 passed, 0 failed", self.summary()[1])

    def test_bad_part_is_refused(self):
        rc, _ = self.summary("--part", "real")
        self.assertEqual(rc, 2)

    def test_failed_command_is_a_failed_test_with_its_errors(self):
        rc = self.verdict("bad", "echo 'ERROR off: w1 never ended' >&2; echo noise >&2; exit 3")
        self.assertEqual(rc, 3)
        t = self.read("bad")["tests"][0]
        self.assertEqual((t["path"], t["status"]), ("t", "FAIL"))
        self.assertEqual(t["message"], "ERROR off: w1 never ended")
        with open(os.path.join(self.dir, "bad.errors"), encoding="utf-8") as f:
            self.assertIn("noise", f.read())

    def test_passed_command_keeps_its_message(self):
        self.assertEqual(self.verdict("good", "true", errors=False), 0)
        t = self.read("good")["tests"][0]
        self.assertEqual((t["status"], t["message"]), ("PASS", "all reported"))

    def test_command_that_cannot_start_fails(self):
        argv = ["verdict", "--out", os.path.join(self.dir, "gone"), "--cell", "gone",
                "--kernel", "host", "--test", "t", "--message", "m", "--",
                os.path.join(self.dir, "no-such-program")]
        with contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(result_json.main(argv), 127)
        self.assertEqual(self.read("gone")["tests"][0]["status"], "FAIL")


class ConsoleTest(unittest.TestCase):
    """tests/harness/run-cell.exp driving a fake guest: a shell script on its pty."""

    GUEST = """printf 'Linux version fake\\n'
sleep 0.2
# The policy line and a request in one write, as a busy host reads them.
printf 'HARNESS: policy=off\\nHARNESS: TYPE tty 0123abcd\\n'
read -r typed
[ "$typed" = "pw-0123abcd" ] || printf 'typed %s\\n' "$typed"
printf 'HARNESS: END\\n'
"""
    HOOK = """[ "$1" = type ] && echo "pw-$3"
"""

    def setUp(self):
        if shutil.which("expect") is None:
            self.skipTest("no expect on this machine (make deps installs it)")

    def drive(self, guest, hook_text=HOOK, env=None):
        d = tempfile.mkdtemp(prefix="console-test.")
        self.addCleanup(shutil.rmtree, d, True)
        hook = os.path.join(d, "hook")
        with open(hook, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\n" + hook_text)
        os.chmod(hook, 0o755)
        logf, status = os.path.join(d, "console.log"), os.path.join(d, "status")
        subprocess.run(["expect", "-f", os.path.join(os.path.dirname(HERE), "harness", "run-cell.exp"),
                        logf, status, "20", "sh", "-c", guest],
                       env=dict(os.environ, SECRET_HOOK=hook, **(env or {})), timeout=60,
                       check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(status, encoding="utf-8") as f:
            fields = dict(line.rstrip("\n").partition("=")[::2] for line in f)
        with open(logf, encoding="utf-8", errors="replace") as f:
            return fields, f.read()

    def test_marker_and_request_in_one_read(self):
        fields, text = self.drive(self.GUEST)
        self.assertEqual((fields["result"], fields["stage"]), ("pass", "end"),
                         fields.get("reason"))
        self.assertNotIn("typed ", text)

    def test_hook_that_hangs_is_a_timeout(self):
        # The hook's child holds its output open: it must be killed too.
        started = time.monotonic()
        fields, text = self.drive(self.GUEST, "sleep 30; echo late\n", {"HOOK_TIMEOUT": "1"})
        self.assertLess(time.monotonic() - started, 15)
        self.assertEqual((fields["result"], fields["stage"]), ("timeout", "init"))
        self.assertIn("secret hook", fields["reason"])
        self.assertIn("type tty 0123abcd) did not finish within 1 s", fields["reason"])

    def test_hook_that_fails_is_said(self):
        fields, _ = self.drive(self.GUEST, "echo nope >&2; exit 3\n")
        self.assertIn("cannot derive the tty secret", fields["reason"])

    def test_guest_that_stops_early_is_eof(self):
        fields, _ = self.drive("printf 'Linux version fake\\n'")
        self.assertEqual(fields["result"], "eof")
        self.assertIn("HARNESS: policy=", fields["reason"])


def check_cells(cells_dir, matrix):
    """One test per deliberately broken cell: was it judged as required?"""
    out = []
    for c in policy.read_matrix(matrix):
        name, verdict = c["cell"], c["expect"].get("verdict", "")
        path = os.path.join(cells_dir, name, "result.json")
        if not os.path.isfile(path):
            out.append((name, "FAIL", "the cell left no result.json"))
            continue
        with open(path, encoding="utf-8") as f:
            tests = json.load(f)["tests"]
        bad = [t for t in tests if t["status"] in ("FAIL", "ERROR", "MISS")]
        if verdict == "pass":
            ok = not bad
            why = "passed" if ok else f"should pass but: {bad[0]['path']}: {bad[0]['message']}"
        else:
            text = verdict.partition(":")[2]
            hits = [t for t in bad if text in t["message"] or text in t["path"]]
            ok = bool(hits)
            why = (f"judged failed: {hits[0]['path']}: {hits[0]['message']}" if ok else
                   f"should fail with {text!r}, got " +
                   ("; ".join(f"{t['path']}: {t['status']} {t['message']}" for t in tests)))
        out.append((name, "PASS" if ok else "FAIL", why))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cells", help="results of tests/selftest/broken.matrix: check only them")
    p.add_argument("--matrix", default=os.path.join(HERE, "broken.matrix"))
    p.add_argument("--out", help="with --cells: write result.json here")
    p.add_argument("-v", action="store_true", help="without --cells: tracebacks of failures")
    args = p.parse_args()
    if not args.cells:
        return ktap_runner.main(sys.modules[__name__], ["-v"] if args.v else [])

    tests = []
    for name, status, why in check_cells(args.cells, args.matrix):
        tests.append(result_json.test(f"detects.{name}", status, why))
    for t in tests:
        print(f"harness: {t['status']:4} {t['path']}" + (f" ({t['message']})" if t["message"] else ""))
    if args.out:
        result_json.write(args.out, cell="harness", kernel="lab-vanilla",
                         log=os.path.relpath(args.cells, os.path.dirname(args.out)),
                         tests=tests)
    return 1 if any(t["status"] != "PASS" for t in tests) else 0


if __name__ == "__main__":
    sys.exit(main())
