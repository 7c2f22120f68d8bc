"""Tests of the kernel definitions (tests/policy.py) and of the Debian
fragment (Kconfig-fragments/debian.py), on small files made here: no
kernel tree, no build.  Prints KTAP (tests/ktap_runner.py); -v adds a
failure's traceback."""

import importlib.util
import os
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "tests"))
import policy  # noqa: E402  (tests/policy.py)
import ktap_runner  # noqa: E402  (tests/ktap_runner.py)

spec = importlib.util.spec_from_file_location(
    "debian", os.path.join(TOP, "Kconfig-fragments", "debian.py"))
debian = importlib.util.module_from_spec(spec)
spec.loader.exec_module(debian)


def write(d, name, text):
    path = os.path.join(d, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(text))
    return path


class KernelsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def kernels(self, text):
        return policy.read_kernels(write(self.d, "kernels", text))

    def test_the_real_file_loads(self):
        k = policy.read_kernels()
        self.assertEqual(k["distro-patched"]["tree"], "patched")
        self.assertIn("@debian", k["distro-patched"]["fragments"])
        self.assertNotIn("@debian", k["lab-patched"]["fragments"])

    def test_every_cell_and_bench_line_names_a_kernel(self):
        policy.used_kernels(policy.read_kernels(),
                            [os.path.join(TOP, "policy", "matrix")],
                            [os.path.join(TOP, "policy", "bench")])

    def test_unknown_tree_names_file_and_line(self):
        with self.assertRaisesRegex(SystemExit, r"kernels:3: tree 'patchd'"):
            self.kernels("# c\nlab-vanilla | vanilla | lab | base.config\n"
                         "x | patchd | lab | base.config\n")

    def test_missing_fragment(self):
        with self.assertRaisesRegex(SystemExit, r"kernels:1: no fragment .*nope.config"):
            self.kernels("x | vanilla | lab | nope.config\n")

    def test_distro_without_debian(self):
        with self.assertRaisesRegex(SystemExit, r"needs the @debian fragment"):
            self.kernels("x | vanilla | distro | base.config\n")

    def test_duplicate(self):
        with self.assertRaisesRegex(SystemExit, r"kernels:2: kernel x is already defined"):
            self.kernels("x | vanilla | lab | base.config\nx | vanilla | lab | base.config\n")

    def test_matrix_with_unknown_kernel(self):
        k = self.kernels("x | vanilla | lab | base.config\n")
        m = write(self.d, "matrix", "# h\nc | y | | | policy=none\n")
        with self.assertRaisesRegex(SystemExit, r"matrix:2: kernel 'y' is not in policy/kernels"):
            policy.used_kernels(k, [m])


class DebianFragmentTest(unittest.TestCase):
    """A tree of three Kconfig files and a Debian config of a few lines."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.src = self.tmp.name
        write(d, "Kconfig", 'source "mm/Kconfig"\nsource "init/Kconfig"\n')
        write(d, "mm/Kconfig", """\
            config SLOW
            \tbool "slow"
            config MODULAR
            \ttristate "modular"
            config INVISIBLE_IN_DEBIAN
            \tbool "a prompt, absent from Debian's file"
            config NO_PROMPT
            \tbool
            config SIZE
            \tint "a size"
            \tdefault 4
            config NEEDS_ACPI
            \tbool "needs acpi"
            \tdepends on ACPI
            source "mm/sub/Kconfig"
            """)
        write(d, "mm/sub/Kconfig", 'config SOURCED\n\tbool "from a sourced file"\n')
        write(d, "init/Kconfig", """\
            config BEFORE
            \tbool "before"
            menuconfig GROUP
            \tbool "group"
            if GROUP
            config INSIDE
            \tbool "inside"
            endif # GROUP
            config AFTER
            \tbool "after"
            config ACPI
            \tbool "acpi"
            """)
        self.areas = write(d, "areas", """\
            # comment
            mm    mm/Kconfig
            grp   init/Kconfig  block "menuconfig GROUP" "endif # GROUP"
            one   init/Kconfig  symbols AFTER
            """)
        self.deb = write(d, "debian", """\
            CONFIG_SLOW=y
            CONFIG_MODULAR=m
            CONFIG_NO_PROMPT=y
            CONFIG_NEEDS_ACPI=y
            CONFIG_SOURCED=y
            CONFIG_GROUP=y
            # CONFIG_INSIDE is not set
            CONFIG_AFTER=y
            CONFIG_BEFORE=y
            CONFIG_ACPI=y
            """)

    def tearDown(self):
        self.tmp.cleanup()

    def fragment(self):
        kc = debian.Kconfig(self.src)
        syms = debian.area_symbols(self.src, debian.read_areas(self.areas), kc)
        d = debian.read_config(self.deb)
        return {s: debian.debian_value(s, d, kc) for s in syms}

    def test_areas_follow_sources_blocks_and_lists(self):
        f = self.fragment()
        self.assertIn("SOURCED", f)
        self.assertIn("INSIDE", f)
        self.assertIn("AFTER", f)
        self.assertNotIn("BEFORE", f)     # outside the block, not listed
        self.assertNotIn("ACPI", f)

    def test_values(self):
        f = self.fragment()
        self.assertEqual(f["SLOW"], "y")
        self.assertEqual(f["MODULAR"], "m")       # written as =y by "fragment"
        self.assertEqual(f["INVISIBLE_IN_DEBIAN"], "n")
        self.assertIsNone(f["SIZE"])              # an int Debian does not set: Kconfig's
        self.assertEqual(f["INSIDE"], "n")

    def test_why_names_the_dependency_that_is_off(self):
        kc = debian.Kconfig(self.src)
        d = debian.read_config(self.deb)
        here = {"SLOW": "y"}
        self.assertIn("depends on ACPI (here n, Debian y)",
                      debian.why("NEEDS_ACPI", here, d, here, kc, {}))
        self.assertEqual(debian.why("SLOW", here, d, here, kc, {"SLOW": "base.config"}),
                         "asked for by base.config")
        self.assertIn("built in", debian.why("MODULAR", {"MODULAR": "y"}, d, {}, kc, {}))

    def test_a_block_that_is_not_there_is_an_error(self):
        areas = write(self.src, "bad", 'x init/Kconfig block "menuconfig NOPE" "endif"\n')
        kc = debian.Kconfig(self.src)
        with self.assertRaisesRegex(SystemExit, "is not in this tree"):
            debian.area_symbols(self.src, debian.read_areas(areas), kc)


if __name__ == "__main__":
    sys.exit(ktap_runner.main(sys.modules[__name__], sys.argv[1:]))
