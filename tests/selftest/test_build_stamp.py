"""Tests of make kernel's stamp (tests/kernel/build-stamp.py, as
tests/kernel/build-kernel.sh uses it): a kernel whose tree,
fragments, scripts and outputs did not change since its last successful
build is not handed to the kernel's make again, and every change of one
of them is.  Runs the real build-kernel.sh in a copy of the harness, on
a small git tree, with a make that only records its calls: no kernel
tree, no compiler.  Run by "make unit"; prints KTAP."""

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
from selftest import ktap_runner

FAKE_MAKE = """#!/bin/sh
# records its call; builds "bzImage" and "vmlinux" in O= unless FAKE_MAKE_RC
echo "make $*" >> "$FAKE_MAKE_LOG"
for a; do case "$a" in O=*) obj=${a#O=} ;; esac; done
[ "${FAKE_MAKE_RC:-0}" = 0 ] || exit "$FAKE_MAKE_RC"
mkdir -p "$obj/arch/x86/boot"
date +%s%N > "$obj/arch/x86/boot/bzImage"
date +%s%N > "$obj/vmlinux"
"""
# configure.sh's part that matters here: it writes .config from the fragments.
FAKE_CONFIGURE = """#!/bin/sh
src=$1 obj=$2; shift 2
for f; do [ "$f" = --unchecked ] || cat "$f"; done > "$obj/.config.new"
cmp -s "$obj/.config.new" "$obj/.config" && rm "$obj/.config.new" || mv "$obj/.config.new" "$obj/.config"
"""
FAKE_DEBIAN = """import sys
print(open(sys.argv[4]).read().strip())
"""
KERNELS = """\
lab-k    | patched | lab    | x86_64 | base.config sanitize.config
distro-k | vanilla | distro | x86_64 | base.config @debian
"""


class StampTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.d = self.tmp.name
        tk = os.path.join(d, "top", "tests", "kernel")
        for sub in ("Kconfig-fragments", "tests/kernel", "policy", "../bin"):
            os.makedirs(os.path.join(d, "top", sub))
        for name in ("build-kernel.sh", "build-stamp.py"):
            shutil.copy2(os.path.join(TOP, "tests", "kernel", name), tk)
        # The loader, so that it reads the copy's policy/.
        shutil.copytree(os.path.join(TOP, "tests", "harness"),
                        os.path.join(d, "top", "tests", "harness"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy2(os.path.join(TOP, "policy", "arches"), os.path.join(d, "top", "policy"))
        self.write("top/policy/kernels", KERNELS)
        self.write("top/Kconfig-fragments/base.config", "CONFIG_A=y\n")
        self.write("top/Kconfig-fragments/sanitize.config", "CONFIG_B=y\n")
        self.write("top/Kconfig-fragments/distro.areas", "mm\n")
        self.write("top/tests/kernel/debian.py", FAKE_DEBIAN)
        self.write("top/tests/kernel/configure.sh", FAKE_CONFIGURE, mode=0o755)
        self.write("bin/make", FAKE_MAKE, mode=0o755)
        self.write("debian-config", "CONFIG_D=y\n")
        self.src = os.path.join(d, "src")
        os.makedirs(self.src)
        self.git("init", "-q")
        self.write("src/Makefile", "all:\n")
        self.commit("pristine")
        self.env = dict(os.environ, OBJ=os.path.join(d, "obj"), PRISTINE=self.src,
                        PATCHED=self.src, JOBS="1",
                        DEBIAN_CONFIG=os.path.join(d, "debian-config"),
                        FAKE_MAKE_LOG=os.path.join(d, "make.log"),
                        PYTHONPATH=os.path.join(d, "top", "tests"),
                        PATH=os.path.join(d, "bin") + os.pathsep + os.environ["PATH"])
        for var in ("KCFLAGS", "ARCH", "CROSS_COMPILE", "LLVM"):
            self.env.pop(var, None)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, rel, text, mode=None):
        path = os.path.join(self.d, rel)
        with open(path, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(text))
        if mode:
            os.chmod(path, mode)
        return path

    def git(self, *args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@localhost",
                        "-C", self.src] + list(args), check=True, timeout=60,
                       capture_output=True)

    def commit(self, msg):
        self.git("add", "-A")
        self.git("commit", "-q", "-m", msg)

    def build(self, kernel="lab-k", rc=0, **env):
        """Run build-kernel.sh: (exit status, its output, whether make ran)."""
        log = self.env["FAKE_MAKE_LOG"]
        if os.path.exists(log):
            os.unlink(log)
        p = subprocess.run([os.path.join(self.d, "top", "tests", "kernel", "build-kernel.sh"),
                            kernel], env=dict(self.env, FAKE_MAKE_RC=str(rc), **env),
                           capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout + p.stderr, os.path.exists(log)

    def assertBuilt(self, kernel="lab-k", **env):
        rc, out, made = self.build(kernel, **env)
        self.assertEqual(rc, 0, out)
        self.assertTrue(made, "the kernel's make did not run: " + out)
        return out

    def assertSkipped(self, kernel="lab-k", **env):
        rc, out, made = self.build(kernel, **env)
        self.assertEqual(rc, 0, out)
        self.assertFalse(made, "the kernel's make ran: " + out)
        self.assertIn("kernel: %s up to date" % kernel, out)

    # The stamp's logic in this process (fast): the module loaded from the
    # copy, so that its fragments are the copy's.
    def module(self):
        spec = importlib.util.spec_from_file_location(
            "build_stamp", os.path.join(self.d, "top", "tests", "kernel", "build-stamp.py"))
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        return m

    def stale(self, fragments=("base.config", "sanitize.config"), kernel="lab-k", **env):
        """What build-stamp.py check says (None: up to date)."""
        os.makedirs(os.path.join(self.d, "obj", kernel), exist_ok=True)
        saved = dict(os.environ)
        os.environ.update(self.env, **env)
        try:
            return self.bs.check(os.path.join(self.d, "obj", kernel, "build.stamp"), self.src,
                                 os.path.join(self.d, "obj", kernel), list(fragments))
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def built(self, fragments=("base.config", "sanitize.config"), kernel="lab-k", **env):
        """check, a build that writes the outputs, seal: as build-kernel.sh."""
        why = self.stale(fragments, kernel, **env)
        self.assertIsNotNone(why)
        obj = os.path.join(self.d, "obj", kernel)
        for out in ("arch/x86/boot/bzImage", "vmlinux", ".config"):
            os.makedirs(os.path.dirname(os.path.join(obj, out)), exist_ok=True)
            with open(os.path.join(obj, out), "w") as f:
                f.write(str(time.time()))
        stamp = os.path.join(obj, "build.stamp")
        with open(stamp + ".inputs") as f:
            inputs = f.read().splitlines()
        with open(stamp, "w") as f:
            f.write("\n".join(inputs + self.bs.outputs(obj)) + "\n")
        return why

    # --- build-kernel.sh itself -------------------------------------------------

    def test_build_kernel_sh_skips_only_an_unchanged_kernel(self):
        self.assertIn("no stamp", self.assertBuilt())
        self.assertSkipped()
        self.write("top/Kconfig-fragments/sanitize.config", "CONFIG_B=n\n")
        self.assertIn("fragment sanitize.config", self.assertBuilt())
        self.assertSkipped()

    def test_a_failed_build_leaves_no_stamp(self):
        self.assertBuilt()
        self.write("top/Kconfig-fragments/base.config", "CONFIG_A=n\n")
        rc, out, made = self.build(rc=2)
        self.assertNotEqual(rc, 0)
        self.assertTrue(made)
        self.assertFalse(os.path.exists(os.path.join(self.d, "obj", "lab-k", "build.stamp")))
        self.assertIn("no stamp", self.assertBuilt())
        self.assertSkipped()

    # --- what the stamp covers -----------------------------------------------------

    def setUpStamp(self):
        self.bs = self.module()
        self.assertIn("no stamp", self.built())
        self.assertIsNone(self.stale())

    def test_touched_fragment(self):
        self.setUpStamp()
        path = os.path.join(self.d, "top/Kconfig-fragments/base.config")
        later = time.time() + 5
        os.utime(path, (later, later))
        self.assertIn("fragment base.config", self.built())
        self.assertIsNone(self.stale())

    def test_new_commit(self):
        self.setUpStamp()
        self.write("src/Makefile", "all:\n\ttrue\n")
        self.commit("a change")
        self.assertIn("changed since the last build: tree", self.built())
        self.assertIsNone(self.stale())

    def test_uncommitted_or_untracked_changes_are_never_up_to_date(self):
        self.setUpStamp()
        self.write("src/Makefile", "all:\n\tfalse\n")
        self.assertIn("uncommitted changes", self.built())
        # built with the change: the same change, or a second edit, still
        # not up to date
        self.assertIn("uncommitted changes", self.built())
        self.git("checkout", "-q", "--", "Makefile")
        self.assertIn("changed since the last build: no longer: tree-changes", self.built())
        self.assertIsNone(self.stale())
        self.write("src/new.h", "#define X 1\n")
        self.assertIn("uncommitted changes", self.stale())

    def test_outputs_changed_or_missing(self):
        self.setUpStamp()
        os.unlink(os.path.join(self.d, "obj", "lab-k", "vmlinux"))
        self.assertIn("missing", self.built())
        with open(os.path.join(self.d, "obj", "lab-k", "arch/x86/boot/bzImage"), "a") as f:
            f.write("x")
        self.assertIn("output arch/x86/boot/bzImage", self.stale())

    def test_debian_config_is_an_input_of_distro_kernels_only(self):
        self.setUpStamp()
        distro = ("base.config", "@debian")
        self.built(distro, "distro-k")
        self.assertIsNone(self.stale(distro, "distro-k"))
        self.write("debian-config", "CONFIG_D=n\n")
        self.assertIn("fragment @debian", self.built(distro, "distro-k"))
        self.assertIsNone(self.stale())
        self.write("top/Kconfig-fragments/distro.areas", "mm\nslab\n")
        self.assertIn("debian distro.areas", self.stale(distro, "distro-k"))

    def test_scripts_environment_and_fragment_list(self):
        self.setUpStamp()
        with open(os.path.join(self.d, "top/tests/kernel/build-kernel.sh"), "a") as f:
            f.write("\n")
        self.assertIn("script build-kernel.sh", self.built())
        self.assertIn("env KCFLAGS=-O1", self.built(KCFLAGS="-O1"))
        self.assertIsNone(self.stale(KCFLAGS="-O1"))
        self.assertIsNotNone(self.stale())
        self.assertIsNotNone(self.stale(("base.config",), KCFLAGS="-O1"))

    def test_toolchain_version(self):
        self.setUpStamp()
        self.write("bin/ld", "#!/bin/sh\necho 'GNU ld (a newer binutils) 9.99'\n", mode=0o755)
        self.assertIn("tool ld GNU ld (a newer binutils) 9.99", self.built())
        self.assertIsNone(self.stale())


if __name__ == "__main__":
    sys.exit(ktap_runner.main(sys.modules[__name__], sys.argv[1:]))
