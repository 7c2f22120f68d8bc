#!/usr/bin/env python3
"""The bench program's workload list, generated from policy/bench-workloads.

    bench-workloads-h.py [policy/bench-workloads] > bench-workloads.h

policy/bench-workloads names the process workloads of the bench, in the
order they run; the host side (tests/bench/channel.py) reads it through
tests/harness/policy.py.  The guest program (tests/guest/bench.c) is static C in
the initramfs, so it takes the same list at build time, as this header:
one X(name) per workload, in the file's order.  bench.c makes its table
from it, { "name", w_name }: a workload listed without its function does
not compile, and a function not listed is unused, which -Werror refuses.
Written by make into build/guest-gen/, never committed.
"""

import os
import sys

from harness import policy


def header(path=None):
    names = policy.read_bench_workloads(path)
    out = [f"/* Generated from {policy.shown(path or policy.BENCH_WORKLOADS)} by "
           f"tests/guest/bench-workloads-h.py. */",
           "#define WORKLOAD_LIST(X) \\"]
    out += [f"\tX({name}) \\" for name in names]
    out += ["", ""]
    return "\n".join(out)


def main(argv):
    sys.stdout.write(header(argv[1] if len(argv) > 1 else None))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
