"""The mutation applier of make mutants (tests/mutants/mutants.py) on a
small git tree: a mutation applies exactly as policy/mutants says or is an
error, never a silent no-op (a mutant that changes nothing would
"survive" and blame a test).  Prints KTAP through selftest.ktap_runner."""

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


if __name__ == "__main__":
    sys.exit(ktap_runner.main(sys.modules[__name__], sys.argv[1:]))
