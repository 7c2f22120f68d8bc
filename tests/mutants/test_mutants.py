"""The mutation applier of make mutants (tests/mutants/mutants.py) on a
small git tree: a mutation applies exactly as policy/mutants says or is an
error, never a silent no-op (a mutant that changes nothing would
"survive" and blame a test).  Prints KTAP through selftest.ktap_runner."""

import contextlib
import io
import os
import subprocess
import sys

from selftest import ktap_runner
from selftest.testutil import TempDirTest, write

import mutants  # noqa: E402  tests/mutants/mutants.py, this file's folder


class ApplyTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.patched = os.path.join(self.d, "patched")
        self.tree = os.path.join(self.d, "mutant")
        os.makedirs(self.patched)
        self.git(self.patched, "init", "-q", "-b", "pristine")
        write(self.patched, "mm/a.c", "int a = 1;\nint b = 1;\n")
        self.commit("pristine")
        self.git(self.patched, "checkout", "-q", "-b", "sanitize")
        write(self.patched, "mm/a.c", "int a = 1;\nint b = 1;\nint secret_clear = 1;\n")
        self.commit("0001")
        write(self.patched, "mm/b.c", "clear(); clear();\n")
        self.commit("0002")

    def git(self, tree, *args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@localhost", "-C", tree,
                        *args], check=True, capture_output=True, timeout=60)

    def commit(self, msg):
        self.git(self.patched, "add", "-A")
        self.git(self.patched, "commit", "-q", "-m", msg)

    def mutate(self, kind, *args):
        mutants.prepare_tree(self.patched, self.tree)
        mutants.apply({"kind": kind, "args": list(args)}, self.patched, self.tree)

    def read(self, name):
        with open(os.path.join(self.tree, name), encoding="utf-8") as f:
            return f.read()

    def test_replace_once(self):
        self.mutate("replace", "mm/a.c", "int secret_clear = 1;", ";")
        self.assertEqual(self.read("mm/a.c"), "int a = 1;\nint b = 1;\n;\n")
        # the patched tree is never touched
        with open(os.path.join(self.patched, "mm/a.c"), encoding="utf-8") as f:
            self.assertIn("secret_clear", f.read())

    def test_replace_that_matches_twice_is_an_error(self):
        with self.assertRaisesRegex(ValueError, "occurs 2 times, replace needs exactly one"):
            self.mutate("replace", "mm/b.c", "clear();", ";")

    def test_replace_that_matches_nothing_is_an_error(self):
        with self.assertRaisesRegex(ValueError, "occurs 0 times"):
            self.mutate("replace", "mm/a.c", "no such line", ";")

    def test_replace_all(self):
        self.mutate("replace-all", "mm/b.c", "clear();", ";")
        self.assertEqual(self.read("mm/b.c"), "; ;\n")

    def test_revert_a_patch_and_reset_between_mutants(self):
        self.mutate("revert", "0001")
        self.assertNotIn("secret_clear", self.read("mm/a.c"))
        self.mutate("replace", "mm/a.c", "int a = 1;", "int a = 2;")
        self.assertIn("secret_clear", self.read("mm/a.c"))   # the revert is gone
        self.assertIn("int a = 2;", self.read("mm/a.c"))

    def test_revert_of_no_such_patch(self):
        with self.assertRaisesRegex(ValueError, "no patch 0009"):
            self.mutate("revert", "0009")


class BootTest(TempDirTest):
    """A boot that leaves no result is an error, never the verdict of the
    result an earlier boot left in the same folder (a stale FAIL once
    'killed' a mutant through a kernel built hours before)."""

    def test_stale_result_is_not_read(self):
        from unittest import mock
        cell = os.path.join(self.d, "full")
        write(cell, "result.json",
              '{"tests": [{"path": "boot", "status": "FAIL", "message": "old"}]}')
        done = subprocess.CompletedProcess([], 1, stdout="", stderr="")
        with mock.patch.object(mutants.subprocess, "run", return_value=done), \
                contextlib.redirect_stderr(io.StringIO()):
            self.assertIsNone(mutants.boot("main", "full", self.d, self.d, {}))
        self.assertFalse(os.path.exists(os.path.join(cell, "result.json")))


class BannerTest(TempDirTest):
    """The kernel a cell booted is known by its banner, the same string in
    the image and on the console."""

    def test_banner_of_image_and_console(self):
        image = b"\0Linux version 6.12.118+ (root@vm) # SMP \0junk\0Linux version 6.12.118+ (root@vm) #37 SMP Mon Dec  7 12:20:05 UTC 2026\n\0"
        write(self.d, "lab-patched/vmlinux", "")
        with open(os.path.join(self.d, "lab-patched", "vmlinux"), "wb") as f:
            f.write(image)
        write(self.d, "full/console.log",
              "SeaBIOS\nLinux version 6.12.118+ (root@vm) #37 SMP Mon Dec  7 12:20:05 UTC 2026\nmore\n")
        self.assertEqual(mutants.built_banner(self.d, "lab-patched"),
                         mutants.booted_banner(self.d, "full"))
        write(self.d, "off/console.log",
              "Linux version 6.12.118+ (root@vm) #44 SMP Mon Dec  7 12:27:51 UTC 2026\n")
        self.assertNotEqual(mutants.built_banner(self.d, "lab-patched"),
                            mutants.booted_banner(self.d, "off"))


class ReportTest(TempDirTest):
    """The report covers every mutant of policy/mutants with its last
    verdict: one run of some keeps the others', never-run ones are said."""

    def test_report_from_last_verdicts(self):
        import json
        from harness import policy
        first = policy.read_mutants()[0]
        os.makedirs(os.path.join(self.d, first["name"]))
        with open(os.path.join(self.d, first["name"], "verdict.json"), "w",
                  encoding="utf-8") as f:
            json.dump({"name": first["name"], "mutation": [first["kind"], *first["args"]],
                       "cells": ["full"], "verdict": "killed", "why": "full.x: y",
                       "seconds": 5}, f)
        with contextlib.redirect_stdout(io.StringIO()):
            rc = mutants.report(self.d)
        self.assertEqual(rc, 1)   # the others were not run
        with open(os.path.join(self.d, "score.txt"), encoding="utf-8") as f:
            score = f.read()
        n = len(policy.read_mutants())
        self.assertIn(f"mutants: 1 of {n} killed, {n - 1} not run", score)
        with open(os.path.join(self.d, "ktap.log"), encoding="utf-8") as f:
            ktap = f.read()
        self.assertIn(f"ok 1 {first['name']} # killed", ktap)
        self.assertIn("# SKIP not run", ktap)


if __name__ == "__main__":
    sys.exit(ktap_runner.main(sys.modules[__name__], sys.argv[1:]))
