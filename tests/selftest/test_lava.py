#!/usr/bin/env python3
"""Tests of the LAVA job generator (lava/make-jobs.py and its template
lava/job.yaml.j2), without LAVA: the jobs of three cells against golden
files in tests/selftest/lava/ (vanilla: lab kernel, guest:lifetime left
out; bad-bogus: a rejected value; distro-full: KUnit, guest programs and
mem=1024), and every cell of policy/matrix rendered and read back as
YAML.  Run by "make unit"; prints KTAP (tests/selftest/ktap_runner.py).

After a deliberate change to the jobs, regenerate the golden files with
    python3 lava/make-jobs.py --base-url file:///build --out tests/selftest/lava \\
        --cell vanilla --cell bad-bogus --cell distro-full
and read their diff before committing it.
"""

import contextlib
import difflib
import importlib.util
import io
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
from selftest import ktap_runner
from selftest.testutil import TempDirTest

spec = importlib.util.spec_from_file_location("make_jobs",
                                              os.path.join(TOP, "lava", "make-jobs.py"))
make_jobs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make_jobs)

GOLDEN = os.path.join(HERE, "lava")
GOLDEN_CELLS = ("vanilla", "bad-bogus", "distro-full")
# Fixed, so the golden files do not depend on where the checkout is.
BASE_URL = "file:///build"


class LavaJobTest(TempDirTest):
    @property
    def out(self):
        return self.d

    def generate(self, *extra):
        with contextlib.redirect_stderr(io.StringIO()):
            make_jobs.main(["--base-url", BASE_URL, "--out", self.out, *extra])

    def assertSameAsGolden(self, name):
        with open(os.path.join(GOLDEN, name), encoding="utf-8") as f:
            want = f.read()
        with open(os.path.join(self.out, name), encoding="utf-8") as f:
            got = f.read()
        if got != want:
            diff = difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                        f"golden/{name}", f"generated/{name}")
            self.fail("the generated job differs from the golden file:\n" + "".join(diff))

    def test_golden_jobs(self):
        self.generate(*[a for c in GOLDEN_CELLS for a in ("--cell", c)])
        for cell in GOLDEN_CELLS:
            with self.subTest(cell=cell):
                self.assertSameAsGolden(f"{cell}.yaml")
                self.assertSameAsGolden(f"{cell}.expect.json")

    def test_every_cell_is_a_job_that_reads_back(self):
        self.generate()
        cells = make_jobs.read_matrix(os.path.join(TOP, "policy", "matrix"))
        for c in cells:
            with open(os.path.join(self.out, f"{c['cell']}.yaml"), encoding="utf-8") as f:
                job = make_jobs.check_job(f.read(), c)
            self.assertEqual(job["context"]["memory"], int(c["expect"].get("mem", 512)),
                             c["cell"])
            kernel = job["actions"][0]["deploy"]["images"]["kernel"]
            self.assertIn(make_jobs.cmdline(c), kernel["image_arg"], c["cell"])

    def test_a_job_that_is_not_yaml_is_refused(self):
        cell = make_jobs.read_matrix(os.path.join(TOP, "policy", "matrix"))[0]
        with self.assertRaisesRegex(SystemExit, "is not YAML"):
            make_jobs.check_job("job_name: [unclosed\n", cell)

    def test_a_job_without_the_cells_monitors_is_refused(self):
        self.generate("--cell", "bad-bogus")
        cell = [c for c in make_jobs.read_matrix(os.path.join(TOP, "policy", "matrix"))
                if c["cell"] == "bad-bogus"][0]
        with open(os.path.join(self.out, "bad-bogus.yaml"), encoding="utf-8") as f:
            text = f.read()
        # The invalid_value monitor is the first: without it, the job would
        # never report the rejected value.
        start = text.index("    - name:")
        end = text.index("    - name:", start + 1)
        with self.assertRaisesRegex(SystemExit, "monitors are not the cell's"):
            make_jobs.check_job(text[:start] + text[end:], cell)


if __name__ == "__main__":
    sys.exit(ktap_runner.main(sys.modules[__name__], sys.argv[1:]))
