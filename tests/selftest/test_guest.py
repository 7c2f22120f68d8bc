#!/usr/bin/env python3
"""Tests of the guest programs' parsers, run on the host by the shell the
guest runs them with (Debian's busybox-static, as the initramfs has it):
what tests/guest/trinity.sh --count reads from trinity's output, on a
saved run (tests/selftest/logs/trinity.log) and on made-up ones, and what
tests/guest/kunit-faults.sh --verdict makes of a KUnit rerun's results
under failslab.  Run by
"make unit"; prints KTAP."""

import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
from selftest import ktap_runner
from selftest.testutil import TempDirTest

BUSYBOX = "/bin/busybox"
TRINITY = os.path.join(TOP, "tests", "guest", "trinity.sh")
KUNIT_FAULTS = os.path.join(TOP, "tests", "guest", "kunit-faults.sh")


class TrinityCountTest(TempDirTest):
    def count(self, text):
        """trinity.sh --count on a file of text (bytes or str): {key: value}."""
        path = os.path.join(self.d, "trinity.log")
        with open(path, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode())
        if not os.access(BUSYBOX, os.X_OK):
            raise unittest.SkipTest(f"no {BUSYBOX} (Debian's busybox-static, make deps)")
        r = subprocess.run([BUSYBOX, "sh", TRINITY, "--count", path], capture_output=True,
                           text=True, timeout=30, check=True)
        return dict(line.split("=", 1) for line in r.stdout.splitlines())

    def test_saved_run(self):
        with open(os.path.join(HERE, "logs", "trinity.log"), "rb") as f:
            c = self.count(f.read())
        self.assertEqual(c, {"ran": "20003", "ok": "5019", "failed": "14942",
                             "progress": "10051",
                             "why": "Completed maximum number of operations."})

    def test_stopped_at_the_limit(self):
        # SIGINT at the limit: trinity still prints its total, and why.
        c = self.count("[main] 10002 iterations. [F:7000 S:3002 HI:900]\n"
                       "[main] 20004 iterations. [F:14000 S:6004 HI:1900]\n"
                       "[main] Bailing main loop because ctrl-c.\n"
                       "[main] Ran 23456 syscalls. Successes: 7000  Failures: 16456\n")
        self.assertEqual((c["ran"], c["progress"], c["why"]), ("23456", "20004", "ctrl-c"))

    def test_killed_has_no_total(self):
        # SIGKILLed: no total and no reason, only how far it had got.
        c = self.count("[main] 10002 iterations. [F:7000 S:3002 HI:900]\n"
                       "[main] 20004 iterations. [F:14000 S:6004 HI:1900 STALLED:3]\n")
        self.assertEqual(c, {"ran": "", "ok": "", "failed": "", "progress": "20004", "why": ""})

    def test_nothing(self):
        self.assertEqual(self.count(""), {"ran": "", "ok": "", "failed": "", "progress": "",
                                          "why": ""})

    def test_only_whole_lines_of_main(self):
        # A child's line, a total broken by what a fuzzed write() put in
        # the middle of it, one with junk after it, and binary junk with a
        # total inside: none of them is trinity's total.
        junk = (b"[child2:345] Ran 99999999 syscalls. Successes: 1  Failures: 2\n"
                b"[main] Ran 99999999 sysc\x00\xff\x7falls. Successes: 1  Failures: 2\n"
                b"[main] Ran 99999999 syscalls. Successes: 1  Failures: 2 and more\n"
                b"\x01\x02[main] Ran 99999999 syscalls. Successes: 1  Failures: 2\n"
                b"\xde\xad\xbe\xef" * 64 + b"\n")
        c = self.count(b"[main] Bailing main loop because Completed maximum number of operations..\n"
                       b"[main] Ran 1000004 syscalls. Successes: 301234  Failures: 698770\n" + junk)
        self.assertEqual((c["ran"], c["ok"], c["failed"]), ("1000004", "301234", "698770"))

    def test_tainted(self):
        c = self.count("[main] Bailing main loop because kernel became tainted..\n"
                       "[main] Ran 512 syscalls. Successes: 12  Failures: 500\n")
        self.assertEqual((c["ran"], c["why"]), ("512", "kernel became tainted."))


# The results file of /sys/kernel/debug/kunit/<suite>/results, as 6.12
# prints it: the cases' logs, indented, then the suite's line.
RESULTS_HEAD = ("KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: sanitize_mem\n"
                "    1..3\n")


class KunitFaultsVerdictTest(TempDirTest):
    def verdict(self, body):
        """kunit-faults.sh --verdict: (failed, injected, other, first)."""
        path = os.path.join(self.d, "results")
        with open(path, "w", encoding="utf-8") as f:
            f.write(RESULTS_HEAD + body + "ok 1 sanitize_mem\n")
        if not os.access(BUSYBOX, os.X_OK):
            raise unittest.SkipTest(f"no {BUSYBOX} (Debian's busybox-static, make deps)")
        r = subprocess.run([BUSYBOX, "sh", KUNIT_FAULTS, "--verdict", path],
                           capture_output=True, text=True, timeout=30, check=True)
        failed, injected, other, first = (r.stdout.rstrip("\n").split(" ", 3) + [""])[:4]
        return int(failed), int(injected), int(other), first

    def test_all_passed(self):
        self.assertEqual(self.verdict("    ok 1 pages_order0\n    ok 2 slab_plain\n"),
                         (0, 0, 0, ""))

    def test_allocations_failed_on_purpose(self):
        v = self.verdict(
            "    # pages_order0: ASSERTION FAILED at mm/sanitize_mem_kunit.c:196\n"
            "    Expected page is not null, but is\n"
            "    not ok 1 pages_order0\n"
            "    # slab_ctor: ASSERTION FAILED at mm/sanitize_mem_kunit.c:426\n"
            "    Expected c is not error, but is: -12\n"
            "    not ok 2 slab_ctor\n"
            "    # slab_plain: internal error occurred preventing test case from running: -12\n"
            "    not ok 3 slab_plain\n"
            "    # policy_consistent: internal error occurred during test case cleanup: -12\n")
        self.assertEqual(v, (4, 4, 0, ""))

    def test_a_wrong_byte_is_no_injection(self):
        # The twin: a failed expectation that is not an allocation fails
        # the rerun, and is named.
        failed, injected, other, first = self.verdict(
            "    # pages_order0: ASSERTION FAILED at mm/sanitize_mem_kunit.c:196\n"
            "    Expected page is not null, but is\n"
            "    not ok 1 pages_order0\n"
            "    # slab_plain: EXPECTATION FAILED at mm/sanitize_mem_kunit.c:130\n"
            "    Expected wrong == 0, but\n"
            "    not ok 2 slab_plain\n")
        self.assertEqual((failed, injected, other), (2, 1, 0))
        self.assertIn("slab_plain: EXPECTATION FAILED", first)

    def test_a_fault_is_no_injection(self):
        failed, injected, other, first = self.verdict(
            "    # slab_plain: try faulted: last line seen mm/sanitize_mem_kunit.c:250\n"
            "    not ok 1 slab_plain\n")
        self.assertEqual((failed, injected, other), (0, 0, 1))
        self.assertIn("try faulted", first)



class KernelReportsTest(TempDirTest):
    """The guest's pattern of kernel reports (tests/guest/lib/ktap.sh) is
    the judge's FATAL: a line one of them fails on, the other must too."""

    LINES = [
        "Kernel panic - not syncing: Fatal exception",
        "Oops: general protection fault, probably for non-canonical address",
        "BUG: KASAN: slab-use-after-free in kfree+0x1/0x2",
        "kernel BUG at mm/slub.c:123!",
        "WARNING: CPU: 0 PID: 1 at mm/page_alloc.c:4444 warn_alloc",
        "Call Trace:",
        "KFENCE: use-after-free read in test_func",
        "UBSAN: array-index-out-of-bounds in mm/sanitize_mem.c:1:2",
        "Unable to handle kernel paging request at virtual address 0",
        "sanitize_mem: write after free: page 0000 at offset 8",
        # what neither may fail on
        "DEBUG: a line that only ends in BUG:",
        "Oopsie, a word that starts with Oops",
        "sanitize_mem: policy=full (pages slab stack)",
        "stress-ng: info: passed",
    ]

    def test_same_as_the_judge(self):
        if not os.access(BUSYBOX, os.X_OK):
            raise unittest.SkipTest(f"no {BUSYBOX} (Debian's busybox-static, make deps)")
        from harness import judge
        ktap = os.path.join(TOP, "tests", "guest", "lib", "ktap.sh")
        r = subprocess.run([BUSYBOX, "sh", "-c", '. "$1"; printf %s "$KTAP_KERNEL_REPORTS"',
                            "sh", ktap], capture_output=True, text=True, timeout=30,
                           check=True)
        pattern = r.stdout
        self.assertEqual(pattern, judge.FATAL.pattern)
        path = os.path.join(self.d, "log")
        for line in self.LINES:
            with open(path, "w", encoding="utf-8") as f:
                f.write(line + "\n")
            g = subprocess.run([BUSYBOX, "grep", "-Ec", pattern, path],
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(g.stdout.strip() == "1", bool(judge.FATAL.search(line)), line)


if __name__ == "__main__":
    sys.exit(ktap_runner.main(sys.modules[__name__], sys.argv[1:]))
