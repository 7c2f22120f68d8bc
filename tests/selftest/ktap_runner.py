"""Run a test module's unittest cases and print KTAP, one line per case,
so that "python3 -m harness ktap" counts them with everything else:

    ok 3 KtapTest.test_skip_is_not_pass
    not ok 4 JudgeTest.test_wrong_policy_fails # AssertionError: ...
    ok 5 ConsoleTest.test_marker # SKIP no expect on this machine

A case that raises unittest.SkipTest is a SKIP with its reason, never a
pass.  With -v a failure's traceback follows its line as KTAP diagnostic
lines ("# ...").  Only standard library modules are used.
"""

import io
import unittest


def main(module, argv=()):
    """Print KTAP for every case of module; 1 if any failed, else 0."""
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    cases = []

    def flatten(s):
        for t in s:
            if isinstance(t, unittest.TestSuite):
                flatten(t)
            else:
                cases.append(t)

    flatten(suite)
    verbose = "-v" in argv
    print("KTAP version 1")
    print("1..%d" % len(cases))
    failed = 0
    for i, case in enumerate(cases, 1):
        res = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(case)
        name = case.id().split(".", 1)[1]
        bad = res.failures + res.errors
        if bad:
            failed += 1
            why = bad[0][1].strip().splitlines()[-1]
            print("not ok %d %s # %s" % (i, name, why))
            if verbose:
                print("# " + bad[0][1].rstrip().replace("\n", "\n# "))
        elif res.skipped:
            print("ok %d %s # SKIP %s" % (i, name, res.skipped[0][1]))
        else:
            print("ok %d %s" % (i, name))
    return 1 if failed else 0
