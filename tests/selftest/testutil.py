"""What the harness's own tests share: a scratch directory per test and a
way to write a file into it."""

import os
import tempfile
import textwrap
import unittest


def write(d, name, text):
    """d/name with text, dedented; the path."""
    path = os.path.join(d, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(text))
    return path


class TempDirTest(unittest.TestCase):
    """A test with a scratch directory, self.d, removed after it."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()
