"""Tests of tests/uml/uml.py without a kernel: the loader of policy/uml,
the bytes each benchmark must clear, the reading of bench rounds, and the
whole kunit run against a fake kernel tree whose kunit.py fails, hangs or
prints a canned console, so that a build failure, a hung build and a
broken expectation are each shown to turn the uml suite red.
Run by "make unit"; prints KTAP (tests/selftest/ktap_runner.py)."""

import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
from selftest import ktap_runner
from selftest.testutil import TempDirTest, write
import uml

# What kunit.py exec --raw_output=all prints for a kernel that passes.
CONSOLE = """\
Linux version 6.12.118 (UML)
sanitize_mem: policy=full (pages,slab,stack)
KTAP version 1
1..1
    KTAP version 1
    # Subtest: sanitize_mem
    1..2
    ok 1 policy_consistent
    ok 2 pages_order0
ok 1 sanitize_mem
"""

# The series as the manifest reads it: the suite and the two cases above.
FAKE_PATCH = """\
+++ b/mm/sanitize_mem_kunit.c
+	KUNIT_CASE(policy_consistent),
+	KUNIT_CASE(pages_order0),
+static struct kunit_suite sanitize_mem_test_suite = {
+	.name = "sanitize_mem",
"""

# A kunit.py stand-in: "build" does what $FAKE_BUILD says, "exec" prints
# $FAKE_CONSOLE.
FAKE_KUNIT = """\
import os, sys, time
verb = sys.argv[1]
bd = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--build_dir=")][0]
if verb == "build":
    how = os.environ.get("FAKE_BUILD", "ok")
    if how == "hang":
        time.sleep(60)
    if how == "fail":
        print("mm/sanitize_mem.c:12:1: error: expected ';' before '}' token")
        sys.exit(1)
    open(os.path.join(bd, "linux"), "w").close()
else:
    sys.stdout.write(open(os.environ["FAKE_CONSOLE"]).read())
"""


class PolicyFileTest(TempDirTest):
    def test_real_file_has_every_policy(self):
        lines = uml.read_uml()
        self.assertEqual({c["expect"].get("policy") for c in lines},
                         {"off", "pages", "slab", "full"})
        self.assertTrue(any("sanitize_verify=1" in c["args"] for c in lines))

    def bad(self, text, why):
        path = write(self.d, "uml", text)
        with self.assertRaisesRegex(SystemExit, why):
            uml.read_uml(path)

    def test_field_count(self):
        self.bad("off | sanitize_mem=off | kunit:sanitize_mem\n", "expected 4 fields")

    def test_unknown_test(self):
        self.bad("off | sanitize_mem=off | kunit:sanitize_mem benhc | policy=off\n",
                 "unknown test 'benhc'")

    def test_unknown_expectation(self):
        self.bad("off | sanitize_mem=off | bench | polcy=off\n", "unknown expectation")

    def test_duplicate(self):
        self.bad("off | sanitize_mem=off | bench | policy=off\n"
                 "off | sanitize_mem=full | bench | policy=full\n", "already defined")

    def test_bench_args_are_the_runners(self):
        self.bad("off | sanitize_bench.iters=9 | bench |\n", "set by tests/uml/uml.py")


class BenchTest(unittest.TestCase):
    def test_cleared_bytes(self):
        cb = uml.cleared_bytes
        self.assertEqual(cb("kmalloc-64", {"slab"}), 64)
        self.assertEqual(cb("kmalloc-64", {"pages"}), 0)
        self.assertEqual(cb("kmalloc-sens-256", set()), 256)
        # kzalloc: one clear, two where slab zeroes on free and the
        # allocation clears again, which only the "once" opt-in skips
        self.assertEqual(cb("kzalloc-256", {"pages", "slab"}), 512)
        self.assertEqual(cb("kzalloc-256", {"pages", "slab", "clear-once-slab"}), 256)
        self.assertEqual(cb("kzalloc-256", {"slab"}), 512)
        self.assertEqual(cb("kzalloc-256", set()), 256)
        self.assertEqual(cb("page-o2", {"pages"}), 16384)
        self.assertEqual(cb("page-o2", {"slab"}), 0)
        # __GFP_ZERO clears once whatever the policy: on alloc or on free.
        self.assertEqual(cb("page-o0-zero", set()), 4096)
        self.assertEqual(cb("vmalloc-64k", {"pages", "slab"}), 65536)
        self.assertIsNone(cb("something-new", {"pages"}))

    def test_rounds(self):
        lines = ["sanitize_bench: start: 2 benchmarks, round 1 of 2",
                 "sanitize_bench: BENCH kmalloc-8 40 4096",
                 "sanitize_bench: done: 2 benchmarks",
                 "sanitize_bench: BENCH kmalloc-8 44 4096",
                 "sanitize_bench: FAILED page-o3: allocation failed",
                 "sanitize_bench: done: 2 benchmarks, some FAILED"]
        per, failed, done = uml.bench_rounds(lines)
        self.assertEqual(per, {"kmalloc-8": [40, 44]})
        self.assertEqual(failed, {"page-o3": "allocation failed"})
        self.assertEqual(done, 2)

    def test_components(self):
        self.assertEqual(uml.policy_components(
            ["x", "sanitize_mem: policy=full (pages,slab,stack)"]), {"pages", "slab", "stack"})
        self.assertEqual(uml.policy_components(
            ["sanitize_mem: policy=full (pages slab stack) clear-once=pages,slab"]),
            {"pages", "slab", "stack", "clear-once-slab"})
        self.assertEqual(uml.policy_components(
            ["sanitize_mem: policy=full (pages slab stack) clear-once=pages verify"]),
            {"pages", "slab", "stack"})
        self.assertIsNone(uml.policy_components(["no policy line"]))


class RunTest(unittest.TestCase):
    """uml.py kunit end to end against a fake tree: result.json as the
    summary reads it, and red whenever it must be."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        self.src = os.path.join(d, "src")
        write(self.src, "tools/testing/kunit/kunit.py", FAKE_KUNIT)
        for k in uml.KUNITCONFIGS:
            write(self.src, k, "CONFIG_KUNIT=y\n")
        self.policy = write(d, "uml", "full | sanitize_mem=full | kunit:sanitize_mem | "
                                      "policy=full\n")
        self.console = write(d, "console", CONSOLE)
        self.patches = os.path.join(d, "patches")
        write(self.patches, "series", "0001-kunit.patch\n")
        write(self.patches, "0001-kunit.patch", FAKE_PATCH)
        self.out = os.path.join(d, "results", "uml")
        os.environ["FAKE_CONSOLE"] = self.console
        os.environ["FAKE_BUILD"] = "ok"

    def tearDown(self):
        self.tmp.cleanup()

    def run_kunit(self, *extra):
        argv = ["kunit", "--policy", self.policy, "--src", self.src, "--build-dir",
                os.path.join(self.tmp.name, "obj"), "--out", self.out, "--timeout", "20",
                "--patches", self.patches, *extra]
        with open(os.devnull, "w") as null:
            old, sys.stdout = sys.stdout, null
            try:
                rc = uml.main(argv)
            finally:
                sys.stdout = old
        with open(os.path.join(self.out, "result.json"), encoding="utf-8") as f:
            return rc, {t["path"]: t for t in json.load(f)["tests"]}

    def test_pass(self):
        rc, tests = self.run_kunit()
        self.assertEqual(rc, 0, tests)
        self.assertEqual(tests["full.kunit.sanitize_mem.pages_order0"]["status"], "PASS")
        self.assertEqual(tests["full.policy"]["status"], "PASS")
        self.assertEqual(tests["build"]["status"], "PASS")

    def test_broken_expectation_is_red(self):
        write(self.tmp.name, "uml", "full | sanitize_mem=full | kunit:sanitize_mem | "
                                    "policy=pages\n")
        rc, tests = self.run_kunit()
        self.assertEqual(rc, 1)
        self.assertEqual(tests["full.policy"]["status"], "FAIL")

    def test_failed_case_is_red(self):
        write(self.tmp.name, "console", CONSOLE.replace("    ok 2 pages_order0",
                                                        "    not ok 2 pages_order0"))
        rc, tests = self.run_kunit()
        self.assertEqual(rc, 1)
        self.assertEqual(tests["full.kunit.sanitize_mem.pages_order0"]["status"], "FAIL")

    def test_crash_before_ktap_is_red(self):
        write(self.tmp.name, "console", "Linux version 6.12\nKernel panic - not syncing: x\n")
        rc, tests = self.run_kunit()
        self.assertEqual(rc, 1)
        self.assertEqual(tests["full.boot"]["status"], "FAIL")
        self.assertEqual(tests["full.kunit.sanitize_mem"]["status"], "MISS")

    def test_build_failure_is_red_with_the_error(self):
        os.environ["FAKE_BUILD"] = "fail"
        rc, tests = self.run_kunit()
        self.assertEqual(rc, 1)
        self.assertEqual(tests["build"]["status"], "FAIL")
        self.assertIn("error: expected ';'", tests["build"]["context"])
        self.assertEqual(tests["full.boot"]["status"], "ERROR")

    def test_hung_build_times_out(self):
        os.environ["FAKE_BUILD"] = "hang"
        rc, tests = self.run_kunit("--build-timeout", "2")
        self.assertEqual(rc, 1)
        self.assertIn("timed out after 2 s", tests["build"]["message"])

    def test_bad_policy_file_leaves_a_red_result(self):
        write(self.tmp.name, "uml", "full | sanitize_mem=full | kunit:sanitize_mem\n")
        with open(os.devnull, "w") as null:
            old, sys.stdout, sys.stderr = (sys.stdout, sys.stderr), null, null
            try:
                with self.assertRaises(SystemExit):
                    self.run_kunit()
            finally:
                sys.stdout, sys.stderr = old
        with open(os.path.join(self.out, "result.json"), encoding="utf-8") as f:
            tests = json.load(f)["tests"]
        self.assertEqual([t["status"] for t in tests], ["ERROR"])
        self.assertIn("expected 4 fields", tests[0]["message"])

    def test_missing_kunitconfig_is_red(self):
        os.remove(os.path.join(self.src, uml.KUNITCONFIGS[1]))
        rc, tests = self.run_kunit()
        self.assertEqual(rc, 1)
        self.assertIn(uml.KUNITCONFIGS[1], tests["build"]["message"])


if __name__ == "__main__":
    sys.exit(ktap_runner.main(sys.modules[__name__], sys.argv[1:]))
