"""Tests of the loader of policy/ (tests/harness/policy.py: kernels, matrix cells
and their expectations, policy/lifetime against the matrices and the
channels, policy/fastpath, policy/bench and policy/bench-targets) and of
the Debian fragment (tests/kernel/debian.py), on the real files and
on small files made here: no kernel tree, no build.
Run by "make unit"; prints KTAP (tests/selftest/ktap_runner.py), -v adds a
failure's traceback."""

import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
from harness import policy
from selftest import ktap_runner
from selftest.testutil import TempDirTest, write

spec = importlib.util.spec_from_file_location(
    "debian", os.path.join(TOP, "tests", "kernel", "debian.py"))
debian = importlib.util.module_from_spec(spec)
spec.loader.exec_module(debian)
spec = importlib.util.spec_from_file_location(
    "build_stamp", os.path.join(TOP, "tests", "kernel", "build-stamp.py"))
stamp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(stamp)


class KernelsTest(TempDirTest):
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
            self.kernels("# c\nlab-vanilla | vanilla | lab | x86_64 | base.config\n"
                         "x | patchd | lab | x86_64 | base.config\n")

    def test_missing_fragment(self):
        with self.assertRaisesRegex(SystemExit, r"kernels:1: no fragment .*nope.config"):
            self.kernels("x | vanilla | lab | x86_64 | nope.config\n")

    def test_distro_without_debian(self):
        with self.assertRaisesRegex(SystemExit, r"needs the @debian fragment"):
            self.kernels("x | vanilla | distro | x86_64 | base.config\n")

    def test_duplicate(self):
        with self.assertRaisesRegex(SystemExit, r"kernels:2: kernel x is already defined"):
            self.kernels("x | vanilla | lab | x86_64 | base.config\nx | vanilla | lab | x86_64 | base.config\n")

    def test_unknown_arch(self):
        with self.assertRaisesRegex(SystemExit, r"kernels:1: arch 'aarch64' is not one of"):
            self.kernels("x | vanilla | lab | aarch64 | base.config\n")

    def test_debian_fragment_is_amd64_only(self):
        with self.assertRaisesRegex(SystemExit, r"kernels:1: the @debian fragment is Debian's amd64"):
            self.kernels("x | vanilla | distro | arm64 | base.config @debian\n")

    def test_the_arm64_kernels(self):
        k = policy.read_kernels()
        self.assertEqual(k["arm64-patched"]["arch"], "arm64")
        self.assertEqual(k["lab-patched"]["arch"], "x86_64")
        # the same lab kernel, plus the console of the virt machine, less
        # what the real Debian programs need: the arm64 initramfs has none
        self.assertEqual([f for f in k["arm64-patched"]["fragments"] if f != "arm64.config"],
                         [f for f in k["lab-patched"]["fragments"]
                          if f != "real-programs.config"])

    def test_matrix_with_unknown_kernel(self):
        k = self.kernels("x | vanilla | lab | x86_64 | base.config\n")
        m = write(self.d, "matrix", "# h\nc | y | | | policy=none\n")
        with self.assertRaisesRegex(SystemExit, r"matrix:2: kernel 'y' is not in policy/kernels"):
            policy.used_kernels(k, [m])


class MatrixTest(TempDirTest):
    """Cells and their expect column, policy/lifetime against the matrices
    and tests/scan/channels: each rejection names file and line."""

    KERNELS = {"lab-vanilla": {"arch": "x86_64"}, "lab-patched": {"arch": "x86_64"},
               "arm64-patched": {"arch": "arm64"}}
    HEAD = "# cell | kernel | args | tests | expect\n"

    def matrix(self, text, name="matrix"):
        return write(self.d, name, self.HEAD + text)

    def cells(self, text):
        return policy.read_matrix(self.matrix(text), self.KERNELS)

    def test_the_real_matrices_load(self):
        for m in ("policy/matrix", "policy/matrix-debug", "policy/matrix-arm64", "policy/matrix-arm64-mte",
                  "tests/selftest/broken.matrix"):
            cells = policy.read_matrix(os.path.join(TOP, m))
            self.assertTrue(cells, m)
        full = {c["cell"]: c for c in policy.read_matrix(os.path.join(TOP, "policy", "matrix"))}
        self.assertEqual(full["verify"]["expect"]["report"],
                         "sanitize_mem.verify_page sanitize_mem.verify_slab "
                         "sanitize_mem.slab_zalloc_after_free")
        self.assertEqual(full["distro-full"]["expect"]["mem"], "1024")

    def test_known_keys(self):
        c = self.cells('a | lab-patched | | | policy=full error="" timeout=45 mem=1024 '
                       'report=s.a report=s.b verdict="fail:x y"\n')
        self.assertEqual(c[0]["expect"], {"policy": "full", "error": "", "timeout": "45",
                                          "mem": "1024", "report": "s.a s.b",
                                          "verdict": "fail:x y"})
        self.assertTrue(c[0]["where"].endswith("matrix:2"))

    def test_machine_options(self):
        c = self.cells("a | arm64-patched | | | policy=full machine=mte=on\n")
        self.assertEqual(c[0]["expect"]["machine"], "mte=on")
        self.assertEqual(c[0]["arch"], "arm64")
        with self.assertRaisesRegex(SystemExit, r"matrix:2: machine=mte=off: 'mte=off' is not one"):
            self.cells("a | arm64-patched | | | policy=full machine=mte=off\n")
        with self.assertRaisesRegex(SystemExit, r"matrix:2: machine=mte=on is for an arm64 kernel"):
            self.cells("a | lab-patched | | | policy=full machine=mte=on\n")

    def test_unknown_key_names_file_and_line(self):
        with self.assertRaisesRegex(SystemExit, r"matrix:3: unknown expectation polcy=full "
                                    r"\(known: policy, clear-once, error"):
            self.cells("a | lab-patched | | | policy=full\nb | lab-patched | | | polcy=full\n")

    def test_unknown_quoted_key(self):
        with self.assertRaisesRegex(SystemExit, r"matrix:2: unknown expectation erorr=pages,nope"):
            self.cells('a | lab-patched | | | policy=full erorr="pages,nope"\n')

    def test_garbage_is_an_error(self):
        with self.assertRaisesRegex(SystemExit, r"matrix:2: cannot read expectation 'garbage'"):
            self.cells("a | lab-patched | | | policy=full garbage\n")

    def test_numbers(self):
        for bad in ("mem=1G", "mem=", "timeout=0", "timeout=-5", 'timeout="45 s"'):
            with self.assertRaisesRegex(SystemExit, r"matrix:2: (mem|timeout)=.*positive",
                                        msg=bad):
                self.cells(f"a | lab-patched | | | policy=full {bad}\n")

    def test_key_given_twice(self):
        with self.assertRaisesRegex(SystemExit, r"matrix:2: policy given twice"):
            self.cells("a | lab-patched | | | policy=full policy=off\n")

    def test_cell_defined_twice(self):
        with self.assertRaisesRegex(SystemExit, r"matrix:3: cell a is already defined at "
                                    r".*matrix:2"):
            self.cells("a | lab-patched | | | policy=full\na | lab-vanilla | | | policy=none\n")

    def test_unknown_kernel(self):
        with self.assertRaisesRegex(SystemExit, r"matrix:2: kernel 'lab-patchd'"):
            self.cells("a | lab-patchd | | | policy=full\n")


class LifetimeCheckTest(unittest.TestCase):
    """policy/lifetime: columns are cells that scan, rows are channels."""

    KERNELS = {"lab-vanilla": {"arch": "x86_64"}}

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.d = self.tmp.name
        self.m1 = write(d, "matrix", "# h\n"
                        "a | lab-vanilla | | guest:lifetime | policy=none\n"
                        "n | lab-vanilla | | kunit:x | policy=none\n")
        self.m2 = write(d, "matrix-debug", "b | lab-vanilla | | guest:lifetime | policy=none\n")
        self.channels = write(d, "channels", "# c\nheap  one\nwifi-x  key=13 two\n")

    def tearDown(self):
        self.tmp.cleanup()

    def check(self, lifetime, channels=None):
        path = write(self.d, "lifetime", lifetime)
        policy.check_lifetime(path, (self.m1, self.m2), channels or self.channels,
                              self.KERNELS)

    def test_consistent(self):
        self.check("# x\nchannel a b\nheap found 0\nwifi-x 0 0\n")

    def test_the_real_files_agree(self):
        policy.check_lifetime()
        t = policy.read_lifetime()
        self.assertEqual(t["vanilla"]["msgq"], "n/a")

    def test_the_real_programs_files_agree(self):
        """make lifetime-real: policy/lifetime-real against policy/matrix-real
        and tests/scan/channels-real, and not against make check's matrices."""
        real = os.path.join(policy.TOP, "policy", "matrix-real")
        table = os.path.join(policy.TOP, "policy", "lifetime-real")
        channels = os.path.join(policy.TOP, "tests", "scan", "channels-real")
        policy.check_lifetime(table, (real,), channels)
        t = policy.read_lifetime(table)
        self.assertEqual(t["real-off"]["tty-raw"], "0")
        self.assertEqual(t["real-vanilla"]["pty-ssh"], "found")
        # the channels of one list are not those of the other
        self.assertFalse(set(policy.read_channels(channels)) & set(policy.read_channels()))
        # make check's table names none of these cells
        with self.assertRaisesRegex(SystemExit, r"policy/lifetime:\d+: column vanilla is not "
                                    r"a cell of policy/matrix-real"):
            policy.check_lifetime(policy.LIFETIME, (real,), policy.CHANNELS)

    def test_column_not_a_cell(self):
        with self.assertRaisesRegex(SystemExit, r"lifetime:2: column c is not a cell of "
                                    r".*matrix or .*matrix-debug"):
            self.check("# x\nchannel a b c\nheap found 0 0\nwifi-x 0 0 0\n")

    def test_column_typo(self):
        with self.assertRaisesRegex(SystemExit, r"lifetime:1: column bb is not a cell"):
            self.check("channel a bb\nheap found 0\nwifi-x 0 0\n")

    def test_column_of_a_cell_that_does_not_scan(self):
        with self.assertRaisesRegex(SystemExit, r"lifetime:1: column n: the cell does not "
                                    r"run guest:lifetime"):
            self.check("channel a b n\nheap found 0 0\nwifi-x 0 0 0\n")

    def test_scanning_cell_without_column(self):
        with self.assertRaisesRegex(SystemExit, r"matrix-debug:1: cell b runs guest:lifetime "
                                    r"but .*lifetime has no column"):
            self.check("channel a\nheap found\nwifi-x 0\n")

    def test_row_not_a_channel(self):
        with self.assertRaisesRegex(SystemExit, r"lifetime:4: hepa is not a channel of "
                                    r".*channels"):
            self.check("channel a b\nheap found 0\nwifi-x 0 0\nhepa 0 0\n")

    def test_channel_without_row(self):
        with self.assertRaisesRegex(SystemExit, r"channels:3: channel wifi-x has no row"):
            self.check("channel a b\nheap found 0\n")

    def test_row_twice(self):
        with self.assertRaisesRegex(SystemExit, r"lifetime:3: channel heap already has a row "
                                    r"at line 2"):
            self.check("channel a b\nheap found 0\nheap 0 0\nwifi-x 0 0\n")

    def test_column_twice(self):
        with self.assertRaisesRegex(SystemExit, r"lifetime:1: column a named twice"):
            self.check("channel a b a\nheap found 0 0\nwifi-x 0 0 0\n")

    def test_bad_value(self):
        with self.assertRaisesRegex(SystemExit, r"lifetime:2: 'skip' is not 0, found"):
            self.check("channel a b\nheap found skip\nwifi-x 0 0\n")

    def test_a_typo_in_a_matrix_fails_the_check(self):
        write(self.d, "matrix-debug", "b | lab-vanilla | | guest:lifetime | polcy=none\n")
        with self.assertRaisesRegex(SystemExit, r"matrix-debug:1: unknown expectation polcy"):
            self.check("channel a b\nheap found 0\nwifi-x 0 0\n")

    def test_command_line_check(self):
        """policy.py check, as make kernel calls it, on the real files."""
        self.assertEqual(policy.main(["check", "--matrix", os.path.join(TOP, "policy", "matrix"),
                                      "--bench", os.path.join(TOP, "policy", "bench")]), 0)
        bad = write(self.d, "bad-lifetime", "channel vanilla nope\nheap found 0\n")
        with self.assertRaisesRegex(SystemExit, r"bad-lifetime:1: column nope is not a cell"):
            text = open(policy.SUITES, encoding="utf-8").read().replace(
                "| policy/lifetime ", f"| {bad} ")
            policy.main(["check", "--matrix", os.path.join(TOP, "policy", "matrix"),
                         "--suites", write(self.d, "suites", text)])


class FastpathTest(TempDirTest):
    """policy/fastpath: the functions make fastpath holds to each rule."""

    def fastpath(self, text):
        return policy.read_fastpath(write(self.d, "fastpath", text))

    def test_the_real_file_loads(self):
        f = policy.read_fastpath()
        self.assertEqual(f["free"], ["kfree", "kmem_cache_free", "free_unref_page", "__free_pages"])
        self.assertEqual(f["outline"], ["free_pages_prepare_rare"])
        self.assertIn("get_page_from_freelist", f["alloc"])

    def test_unknown_rule_names_file_and_line(self):
        with self.assertRaisesRegex(SystemExit, r"fastpath:2: rule 'fre' is not one of"):
            self.fastpath("# c\nfre kfree\n")

    def test_function_twice(self):
        with self.assertRaisesRegex(SystemExit, r"fastpath:2: kfree is already listed"):
            self.fastpath("free kfree\nalloc kfree\n")

    def test_no_free_path_is_an_error(self):
        # An empty list would make make fastpath pass without checking anything.
        with self.assertRaisesRegex(SystemExit, r"no free fast path"):
            self.fastpath("alloc __kmalloc_noprof\n")

    def test_one_word_line(self):
        with self.assertRaisesRegex(SystemExit, r"fastpath:1: expected '<rule> <function>'"):
            self.fastpath("kfree\n")


class BenchTargetsTest(unittest.TestCase):
    """policy/bench and policy/bench-targets: the configurations the bench
    boots, and the targets its report computes from them."""

    BENCH = "vanilla | lab-vanilla |\noff | lab-patched | sanitize_mem=off\n"

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        self.bench = write(self.d, "bench", self.BENCH)

    def tearDown(self):
        self.tmp.cleanup()

    def targets(self, text):
        return policy.read_bench_targets(write(self.d, "bench-targets", text), self.bench)

    def test_the_real_files_load(self):
        configs = [c["name"] for c in policy.read_bench()]
        self.assertEqual(configs[0], "vanilla")
        t = {x["name"]: x for x in policy.read_bench_targets()}
        self.assertEqual(list(t)[:2], ["off-vs-vanilla", "full-vs-vanilla-iof"])
        self.assertIn("gfp-zero-no-second-clear", t)
        self.assertEqual((t["off-vs-vanilla"]["limit"], t["off-vs-vanilla"]["decimals"]),
                         (1.002, 3))
        self.assertEqual((t["full-ioa-vs-kspp"]["limit"], t["full-ioa-vs-kspp"]["strict"]),
                         (1.0, True))
        self.assertEqual(t["gfp-zero-no-second-clear"]["benchmarks"],
                         ("page-o0-zero", "page-o0"))

    def test_a_good_line(self):
        t, = self.targets("# c\nx | off | vanilla | - | icount | 1.00 | off vs vanilla\n")
        self.assertEqual((t["config"], t["base"], t["limit"], t["decimals"], t["where"][-15:]),
                         ("off", "vanilla", 1.0, 2, "bench-targets:2"))

    def test_unknown_configuration_names_file_and_line(self):
        with self.assertRaisesRegex(SystemExit, r"bench-targets:2: configuration 'of' is not "
                                    r"in .*bench \(one of vanilla, off\)"):
            self.targets("# c\nx | of | vanilla | - | icount | 1.00 | d\n")

    def test_unknown_measure(self):
        with self.assertRaisesRegex(SystemExit, r"bench-targets:1: measure 'icont' is not one of"):
            self.targets("x | off | vanilla | - | icont | 1.00 | d\n")

    def test_micro_delta_needs_two_benchmarks(self):
        with self.assertRaisesRegex(SystemExit, r"bench-targets:1: measure micro-delta takes 2"):
            self.targets("x | off | vanilla | - | micro-delta page-o0 | 0.1 | d\n")
        with self.assertRaisesRegex(SystemExit, r"bench-targets:1: 'page-o0' is not a "
                                    r"workload of .*bench-workloads"):
            self.targets("x | off | vanilla | - | icount page-o0 | 0.1 | d\n")

    def test_icount_on_some_workloads_strictly(self):
        t, = self.targets("x | off | vanilla | - | icount tmpfs sockpair | <0.90 | d\n")
        self.assertEqual((t["workloads"], t["limit"], t["strict"], t["decimals"]),
                         (("tmpfs", "sockpair"), 0.9, True, 2))
        t, = self.targets("x | off | vanilla | - | icount | 1.003 | d\n")
        self.assertEqual((t["workloads"], t["strict"]), (None, False))
        with self.assertRaisesRegex(SystemExit, r"bench-targets:1: measure 'icount tmpfs "
                                    r"tmpfs' names one twice"):
            self.targets("x | off | vanilla | - | icount tmpfs tmpfs | 1.00 | d\n")

    def test_limit_not_a_number(self):
        for bad in ("1,003", "", "0", "-1.0", "1.0x", "<", "<0", "<<1", "1<"):
            with self.assertRaisesRegex(SystemExit, r"bench-targets:1: limit .* is not a positive"):
                self.targets("x | off | vanilla | - | icount | %s | d\n" % bad)

    def test_wrong_field_count_and_duplicates(self):
        with self.assertRaisesRegex(SystemExit, r"bench-targets:1: expected 7 fields"):
            self.targets("x | off | vanilla | - | icount | 1.00\n")
        with self.assertRaisesRegex(SystemExit, r"bench-targets:2: target x is already defined"):
            self.targets("x | off | vanilla | - | icount | 1.00 | d\n"
                         "x | off | vanilla | - | icount | 1.01 | d\n")
        with self.assertRaisesRegex(SystemExit, r"bench-targets:1: target x compares off with"):
            self.targets("x | off | off | - | icount | 1.00 | d\n")

    def test_via_names_configurations_between_base_and_config(self):
        write(self.d, "bench", self.BENCH + "full | lab-patched | sanitize_mem=full\n")
        t, = self.targets("x | full | vanilla | off | icount | 1.00 | d\n")
        self.assertEqual(t["via"], ("off",))
        t, = self.targets("x | full | vanilla | - | icount | 1.00 | d\n")
        self.assertEqual(t["via"], ())
        with self.assertRaisesRegex(SystemExit, r"bench-targets:1: via: configuration 'of' is "
                                    r"not in"):
            self.targets("x | full | vanilla | of | icount | 1.00 | d\n")
        for via in ("off off", "vanilla", "full"):
            with self.assertRaisesRegex(SystemExit, r"bench-targets:1: via .* names vanilla, "
                                        r"full or a configuration twice"):
                self.targets("x | full | vanilla | %s | icount | 1.00 | d\n" % via)
        with self.assertRaisesRegex(SystemExit, r"bench-targets:1: via is for icount targets"):
            self.targets("x | full | vanilla | off | micro-delta page-o0 page-o1 | 0.1 | d\n")

    def test_bench_configuration_twice(self):
        write(self.d, "bench", self.BENCH + "off | lab-vanilla |\n")
        with self.assertRaisesRegex(SystemExit, r"bench:3: configuration off is already defined"):
            policy.read_bench(self.bench)

    def wipe(self, text):
        return policy.read_bench_wipe(write(self.d, "bench-wipe", text), self.bench)

    def test_wipe_names_patched_configurations(self):
        self.assertEqual(self.wipe("# c\noff\n"), ["off"])
        self.assertIn("off", policy.read_bench_wipe())
        with self.assertRaisesRegex(SystemExit, r"bench-wipe:2: configuration vanilla boots "
                                    r"lab-vanilla, not a patched kernel"):
            self.wipe("off\nvanilla\n")
        with self.assertRaisesRegex(SystemExit, r"bench-wipe:1: configuration 'of' is not in"):
            self.wipe("of\n")
        with self.assertRaisesRegex(SystemExit, r"bench-wipe:2: configuration off is already"):
            self.wipe("off\noff\n")
        with self.assertRaisesRegex(SystemExit, r"bench-wipe:1: expected one configuration"):
            self.wipe("off pages\n")

    def test_wipe_bytes_compares_configurations_with_a_wipe_boot(self):
        write(self.d, "bench", self.BENCH + "pages | lab-patched | sanitize_mem=pages\n")
        wipe = write(self.d, "bench-wipe", "off\npages\n")
        text = "x | pages | off | - | wipe-bytes | 0.05 | d\n"
        t, = policy.read_bench_targets(write(self.d, "bench-targets", text), self.bench,
                                       wipe=wipe)
        self.assertEqual((t["measure"], t["benchmarks"], t["limit"]), ("wipe-bytes", None, 0.05))
        write(self.d, "bench-wipe", "off\n")
        with self.assertRaisesRegex(SystemExit, r"bench-targets:1: measure wipe-bytes: "
                                    r"configuration pages has no wipe boot"):
            policy.read_bench_targets(write(self.d, "bench-targets", text), self.bench,
                                      wipe=wipe)
        write(self.d, "bench-wipe", "off\npages\n")
        with self.assertRaisesRegex(SystemExit, r"bench-targets:1: measure wipe-bytes takes 0"):
            policy.read_bench_targets(write(self.d, "bench-targets", text.replace(
                "wipe-bytes", "wipe-bytes tmpfs")), self.bench, wipe=wipe)

    def test_assignments_say_which_configuration_wipes(self):
        rows = policy.bench_assignments(policy.read_bench(self.bench), [], self.bench, ["off"])
        self.assertEqual(rows.splitlines(),
                         ["config=vanilla kernel=lab-vanilla tree=vanilla args='' wipe=no",
                          "config=off kernel=lab-patched tree=patched args=sanitize_mem=off "
                          "wipe=yes"])

    def test_command_line_check_reads_the_targets(self):
        bad = write(self.d, "bad-targets", "x | ful | vanilla | - | icount | 1.00 | d\n")
        with self.assertRaisesRegex(SystemExit, r"bad-targets:1: configuration 'ful'"):
            policy.main(["check", "--matrix", os.path.join(TOP, "policy", "matrix"),
                         "--bench", os.path.join(TOP, "policy", "bench"),
                         "--bench-targets", bad])


class CellFieldsTest(unittest.TestCase):
    """python3 -m harness cell: the fields tests/harness/run-cell.sh evals, read by the loader."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.matrix = write(self.tmp.name, "matrix", """\
            # cell | kernel | args | tests | expect
            plain | lab-vanilla | | guest:lifetime | policy=none
            big   | lab-patched | sanitize_mem=full x='$(y)' | kunit:a guest:b | policy=full mem=1024 timeout=900
            """)

    def tearDown(self):
        self.tmp.cleanup()

    def fields(self, cell):
        # As tests/harness/run-cell.sh does: a failing loader must stop it.
        script = ('fields=$(python3 -m harness cell --matrix "$2" "$3") && eval "$fields" && '
                  'printf "%s|%s|%s|%s|%s" "$kernel" "$args" "$tests" "$mem" "$timeout"')
        return subprocess.run(["sh", "-c", script, "sh", "-",
                               self.matrix, cell], capture_output=True, text=True,
                              timeout=30)

    def test_fields_of_a_cell(self):
        r = self.fields("big")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "lab-patched|sanitize_mem=full x='$(y)'|kunit:a guest:b|"
                                   "1024|900")

    def test_arch_and_machine(self):
        # the arch comes from the cell's kernel (policy/kernels)
        script = ('eval "$(python3 -m harness cell --matrix "$2" "$3")" && '
                  'printf "%s|%s" "$arch" "$machine"')
        m = write(self.tmp.name, "arm64", "a | arm64-patched | | | policy=full machine=mte=on\n"
                  "b | lab-patched | | | policy=full\n")
        for cell, want in (("a", "arm64|mte=on"), ("b", "x86_64|")):
            r = subprocess.run(["sh", "-c", script, "sh", "-",
                                m, cell], capture_output=True, text=True, timeout=30)
            self.assertEqual(r.stdout, want, r.stderr)

    def test_unset_mem_and_timeout_are_empty(self):
        self.assertEqual(self.fields("plain").stdout, "lab-vanilla||guest:lifetime||")

    def test_unknown_cell_fails(self):
        r = self.fields("nope")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no cell named 'nope'", r.stderr)

    def test_a_bad_expectation_fails_before_a_boot(self):
        # run-cell.sh once read mem= with sed, which took "mem=1g" for 1 MiB.
        with open(self.matrix, "a", encoding="utf-8") as f:
            f.write("odd | lab-vanilla | | | mem=1g\n")
        r = self.fields("plain")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("matrix:4: mem=1g: a positive whole number", r.stderr)


class BaseCmdlineTest(unittest.TestCase):
    """qemu-boot/base-cmdline.sh: every guest's base, per architecture."""

    def cmdline(self, *arch):
        return subprocess.run([os.path.join(TOP, "qemu-boot", "base-cmdline.sh"), *arch],
                              capture_output=True, text=True, timeout=30)

    def test_each_architecture_has_its_console(self):
        x86, arm = self.cmdline().stdout.split(), self.cmdline("arm64").stdout.split()
        self.assertEqual(self.cmdline("x86_64").stdout.split(), x86)
        self.assertIn("console=ttyS0", x86)
        self.assertIn("tsc=reliable", x86)
        self.assertIn("console=ttyAMA0", arm)
        # an x86 parameter would reach arm64's /init as an unknown one
        self.assertFalse([w for w in arm if w.startswith(("tsc=", "console=ttyS"))], arm)
        for common in ("panic=-1", "oops=panic"):
            self.assertIn(common, x86)
            self.assertIn(common, arm)

    def test_unknown_architecture(self):
        r = self.cmdline("riscv64")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no architecture 'riscv64' in policy/arches", r.stderr)


class ArchTest(unittest.TestCase):
    """policy/arches through the loader: how each architecture of
    policy/kernels is built and booted, one table for build-kernel.sh,
    run-cell.sh, run-qemu.sh, base-cmdline.sh and the Makefile."""

    def arch(self, name, qemu_arm64=None, field=None):
        # as its callers do: the table, then eval (eval of a failed
        # substitution would succeed)
        script = ('how=$(python3 -m harness arch "$1") && eval "$how" && '
                  'printf "%s|%s|%s|%s|%s|%s" "$karch" "$cross" "$target" "$image" "$qemu" '
                  '"$qemu_machine"')
        env = {k: v for k, v in os.environ.items() if k != "QEMU_ARM64"}
        if qemu_arm64 is not None:
            env["QEMU_ARM64"] = qemu_arm64
        if field:
            return subprocess.run([sys.executable, "-m", "harness", "arch", name, field],
                                  capture_output=True, text=True, timeout=30, env=env)
        return subprocess.run(["sh", "-c", script, "sh", name],
                              capture_output=True, text=True, timeout=30, env=env)

    def test_every_arch_of_policy_kernels_is_known(self):
        arches = policy.read_arches()
        for k in policy.read_kernels().values():
            self.assertIn(k["arch"], arches)
        for arch in arches:
            r = self.arch(arch)
            self.assertEqual(r.returncode, 0, r.stderr)
            image = r.stdout.split("|")[3]
            # build-stamp.py seals the same image
            self.assertIn(image, stamp.IMAGES.values())

    def test_arm64(self):
        self.assertEqual(self.arch("arm64").stdout,
                         "arm64|aarch64-linux-gnu-|Image|arch/arm64/boot/Image|"
                         "qemu-system-aarch64|virt")
        self.assertEqual(self.arch("arm64", field="guest-cc").stdout, "aarch64-linux-gnu-gcc\n")

    def test_host_fields_are_empty(self):
        self.assertEqual(self.arch("x86_64").stdout,
                         "||bzImage|arch/x86/boot/bzImage|qemu-system-x86_64|pc")

    def test_arm64_other_qemu(self):
        # make check-arm64-mte's QEMU from Debian backports
        r = self.arch("arm64", "/b/qemu-backports/root/usr/bin/qemu-system-aarch64")
        self.assertEqual(r.stdout.split("|")[4],
                         "/b/qemu-backports/root/usr/bin/qemu-system-aarch64")
        # x86_64 keeps its own
        self.assertEqual(self.arch("x86_64", "/b/q").stdout.split("|")[4],
                         "qemu-system-x86_64")

    def test_arm64_qemu_that_eval_would_split(self):
        r = self.arch("arm64", "/b/q; rm -rf /")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("QEMU_ARM64='/b/q; rm -rf /' is not a plain path", r.stderr)
        self.assertEqual(r.stdout, "")

    def test_unknown_arch(self):
        r = self.arch("riscv64")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no architecture 'riscv64' in policy/arches", r.stderr)
        self.assertEqual(r.stdout, "")

    def test_typo_in_arches_names_file_and_line(self):
        with tempfile.TemporaryDirectory() as d:
            path = write(d, "arches", "x86_64 | - | - | bzImage | i | q | pc | max | c | gcc | -\n"
                         "arm64 | arm64 | - | Image | i | q | virt | max | c | cc | -\n")
            with self.assertRaisesRegex(SystemExit, r"arches:2: karch and cross go together"):
                policy.read_arches(path)
            path = write(d, "arches", "x86_64 | - | - | bzImage | i | q | pc | max | c | gcc\n")
            with self.assertRaisesRegex(SystemExit, r"arches:1: expected 11 fields"):
                policy.read_arches(path)

class CheckCoversEveryFileTest(TempDirTest):
    """python3 -m harness check, which make unit and make kernel run before
    anything is built: every suite of policy/suites (its matrix, its
    lifetime table against its channels), policy/uml and the bench."""

    def check(self, *args):
        return subprocess.run([sys.executable, "-m", "harness",
                               "check", *args], capture_output=True, text=True, timeout=60)

    def suites(self, **replace):
        """policy/suites with some files replaced (name: path), as a new file."""
        with open(policy.SUITES, encoding="utf-8") as f:
            text = f.read()
        for name, path in replace.items():
            text = text.replace(f"| policy/{name} ", f"| {path} ")
        return write(self.d, "suites", text)

    def test_the_real_files_pass(self):
        r = self.check()
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_each_table_is_judged_with_its_suites_channels(self):
        # the real programs' table with make check's channel list: its rows
        # are not those channels
        groups = policy.lifetime_groups(policy.read_suites())
        tables = {os.path.basename(t): (len(m), os.path.basename(c)) for t, m, c in groups}
        self.assertEqual(tables["lifetime"], (2, "channels"))     # make check and debug
        self.assertEqual(tables["lifetime-real"], (1, "channels-real"))
        text = open(policy.SUITES, encoding="utf-8").read().replace(
            "tests/scan/channels-real", "tests/scan/channels      ")
        r = self.check("--suites", write(self.d, "suites", text))
        self.assertNotEqual(r.returncode, 0)
        self.assertRegex(r.stderr, r"lifetime-real:\d+: .*channel")

    def test_a_table_with_two_channel_lists(self):
        # make check and the debug suite share policy/lifetime
        lines = open(policy.SUITES, encoding="utf-8").read().splitlines(True)
        text = "".join(x.replace("tests/scan/channels ", "tests/scan/channels-real ")
                       if x.startswith("debug ") else x for x in lines)
        with self.assertRaisesRegex(SystemExit, r"suites:\d+: policy/lifetime is judged with "):
            policy.lifetime_groups(policy.read_suites(write(self.d, "suites", text)))

    def test_typo_in_suites_names_file_and_line(self):
        text = open(policy.SUITES, encoding="utf-8").read().replace(
            "policy/matrix-debug ", "policy/matrix-debgu ")
        r = self.check("--suites", write(self.d, "suites", text))
        self.assertNotEqual(r.returncode, 0)
        self.assertRegex(r.stderr, r"suites:\d+: matrix 'policy/matrix-debgu': no such file")
        text = open(policy.SUITES, encoding="utf-8").read().replace("| yes ", "| yess ", 1)
        with self.assertRaisesRegex(SystemExit, r"suites:\d+: check must be yes or no"):
            policy.read_suites(write(self.d, "suites", text))

    def test_typo_in_policy_skips(self):
        with open(policy.SKIPS, encoding="utf-8") as f:
            text = f.read().replace("| kunit.sanitize_mem.hugetlb_pool ", "| kunit:sanitize_mem ", 1)
        r = self.check("--skips", write(self.d, "skips", text))
        self.assertNotEqual(r.returncode, 0)
        self.assertRegex(r.stderr, r"skips:\d+: test 'kunit:sanitize_mem'")

    def test_typo_in_policy_uml(self):
        with open(os.path.join(TOP, "policy", "uml"), encoding="utf-8") as f:
            text = f.read().replace("kunit:sanitize_mem", "kunit:sanitize mem", 1)
        r = self.check("--uml", write(self.d, "uml", text))
        self.assertNotEqual(r.returncode, 0)
        self.assertRegex(r.stdout + r.stderr, r"uml:\d+: unknown test 'mem'")

    def test_typo_in_matrix_arm64(self):
        with open(os.path.join(TOP, "policy", "matrix-arm64"), encoding="utf-8") as f:
            text = f.read().replace("| arm64-patched ", "| arm64-patchd ", 1)
        bad = write(self.d, "matrix-arm64", text)
        r = self.check("--suites", self.suites(**{"matrix-arm64": bad}))
        self.assertNotEqual(r.returncode, 0)
        self.assertRegex(r.stdout + r.stderr, r"matrix-arm64:\d+: .*arm64-patchd")

    def test_typo_in_matrix_real(self):
        path = os.path.join(TOP, "policy", "matrix-real")
        kernel = policy.read_matrix(path)[0]["kernel"]
        typo = kernel.replace("vanilla", "vanila").replace("patched", "pached")
        self.assertNotEqual(typo, kernel)
        with open(path, encoding="utf-8") as f:
            text = f.read().replace("| " + kernel + " ", "| " + typo + " ", 1)
        bad = write(self.d, "matrix-real", text)
        r = self.check("--suites", self.suites(**{"matrix-real": bad}))
        self.assertNotEqual(r.returncode, 0)
        self.assertRegex(r.stdout + r.stderr, r"matrix-real:\d+: .*" + typo)


class BenchWorkloadsTest(unittest.TestCase):
    """policy/bench-workloads: the one list of the bench's process
    workloads (the guest program is built with it, the report reads it)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def workloads(self, text):
        return policy.read_bench_workloads(write(self.tmp.name, "bench-workloads", text))

    def test_the_real_file_loads(self):
        names = policy.read_bench_workloads()
        self.assertEqual(names[:2], ["pipe", "socket"])
        self.assertIn("readzero", names)

    def test_file_order(self):
        self.assertEqual(self.workloads("# c\nb\n\na2\n"), ["b", "a2"])

    def test_two_words_names_file_and_line(self):
        with self.assertRaisesRegex(SystemExit, r"bench-workloads:2: expected one workload "
                                                r"name, got 'pipe socket'"):
            self.workloads("# c\npipe socket\n")

    def test_a_name_that_is_not_a_c_word(self):
        for bad in ("Pipe", "tmp-fs", "9pipe", "a" * 16):
            with self.assertRaisesRegex(SystemExit, r"bench-workloads:1: workload name "):
                self.workloads(bad + "\n")
        self.assertEqual(self.workloads("a" * 15 + "\n"), ["a" * 15])

    def test_twice(self):
        with self.assertRaisesRegex(SystemExit, r"bench-workloads:3: workload pipe is already "
                                                r"listed at .*bench-workloads:1"):
            self.workloads("pipe\nsocket\npipe\n")

    def test_empty(self):
        with self.assertRaisesRegex(SystemExit, r"bench-workloads: no workloads"):
            self.workloads("# nothing\n")

    def test_command_line_check(self):
        bad = write(self.tmp.name, "bench-workloads", "pipe\nsock pair\n")
        with self.assertRaisesRegex(SystemExit, r"bench-workloads:2: expected one workload"):
            policy.main(["check", "--bench-workloads", bad])


class BenchFieldsTest(unittest.TestCase):
    """python3 -m harness bench: the configurations tests/bench/run-bench.sh evals,
    read by the loader (run-bench.sh once parsed policy/bench with awk,
    which let a kernel typo through until that configuration's turn)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.bench = write(self.tmp.name, "bench", """\
            # name | kernel | args
            vanilla     | lab-vanilla |
            vanilla-iof | lab-vanilla | init_on_free=1
            off         | lab-patched | sanitize_mem=off x='$(y)'
            pages       | lab-patched | sanitize_mem=pages
            full        | lab-patched | sanitize_mem=full
            """)
        # Targets of these configurations only (the real file names more).
        self.targets = write(self.tmp.name, "bench-targets",
                             "t | full | vanilla-iof | - | icount | 1.00 | d\n")

    def tearDown(self):
        self.tmp.cleanup()

    def rows(self, *configs):
        # As run-bench.sh does: a failing loader must stop it; each line
        # is eval'd.
        script = ('p=$1 b=$2 t=$3; shift 3; '
                  'rows=$(python3 -m harness bench --bench "$b" --targets "$t" "$@") && '
                  'echo "$rows" | while read -r row; do eval "$row"; '
                  'printf "%s|%s|%s|%s\\n" "$config" "$kernel" "$tree" "$args"; done')
        return subprocess.run(["bash", "-c", script, "sh", "-",
                               self.bench, self.targets, *configs], capture_output=True, text=True,
                              timeout=30)

    def test_every_configuration_in_file_order(self):
        r = self.rows()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines(), [
            "vanilla|lab-vanilla|vanilla|",
            "vanilla-iof|lab-vanilla|vanilla|init_on_free=1",
            "off|lab-patched|patched|sanitize_mem=off x='$(y)'",
            "pages|lab-patched|patched|sanitize_mem=pages",
            "full|lab-patched|patched|sanitize_mem=full"])

    def test_the_named_ones_in_their_order(self):
        r = self.rows("full", "vanilla")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines(), ["full|lab-patched|patched|sanitize_mem=full",
                                                 "vanilla|lab-vanilla|vanilla|"])

    def test_the_real_file(self):
        r = subprocess.run([sys.executable, "-m", "harness", "bench"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([re.match(r"config=(\S+) ", x).group(1) for x in r.stdout.splitlines()],
                         [c["name"] for c in policy.read_bench()])

    def test_unknown_configuration_fails(self):
        r = self.rows("off", "nope")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no configuration 'nope' in", r.stderr)
        self.assertEqual(r.stdout, "")

    def test_a_typo_fails_with_file_and_line(self):
        with open(self.bench, "a", encoding="utf-8") as f:
            f.write("slab | lab-patchd | sanitize_mem=slab\n")
        r = self.rows("vanilla")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("bench:7: kernel 'lab-patchd' is not in policy/kernels", r.stderr)
        self.assertEqual(r.stdout, "")

    def test_a_target_without_its_configuration_fails_before_a_boot(self):
        # policy/bench-targets is read by the report, after every boot:
        # the loader checks it against the configurations first.
        self.bench = write(self.tmp.name, "bench2", """\
            vanilla | lab-vanilla |
            off     | lab-patched | sanitize_mem=off
            """)
        r = self.rows("vanilla")
        self.assertNotEqual(r.returncode, 0)
        self.assertRegex(r.stderr, r"bench-targets:\d+: configuration '[a-z-]+' is "
                                   r"not in .*bench2")
        self.assertEqual(r.stdout, "")


class ChannelsHeaderTest(unittest.TestCase):
    """tests/guest/channels-h.py: the guest's channel list from tests/scan/channels."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        spec = importlib.util.spec_from_file_location(
            "channels_h", os.path.join(TOP, "tests", "guest", "channels-h.py"))
        self.gen = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.gen)

    def tearDown(self):
        self.tmp.cleanup()

    def test_every_channel_in_order(self):
        text = self.gen.header(policy.CHANNELS)
        names = re.findall(r'X\((\w+), "([^"]+)"\)', text)
        self.assertEqual([n for _, n in names], list(policy.read_channels()))
        self.assertIn(("afalg_skcipher_key", "afalg-skcipher-key"), names)
        self.assertIn(f"#define NCHANNELS {len(names)}", text)

    def test_two_names_one_c_name(self):
        path = write(self.tmp.name, "channels", "wifi-key a\nwifi_key b\n")
        with self.assertRaisesRegex(SystemExit, r"channels:2: channel 'wifi_key' is "
                                                r"'wifi-key' in C"):
            self.gen.header(path)

    def test_name_that_is_not_c(self):
        path = write(self.tmp.name, "channels", "# c\n9lives a\n")
        with self.assertRaisesRegex(SystemExit, r"channels:2: channel '9lives' cannot be"):
            self.gen.header(path)


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
