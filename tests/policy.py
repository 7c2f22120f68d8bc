#!/usr/bin/env python3
"""The kernels of policy/kernels: loaded and checked in one place.

    policy.py kernels [--matrix M ...] [--bench B ...]
        the kernel names, one per line: all of policy/kernels, or only
        those that the given matrices and bench files use
    policy.py kernel NAME
        shell assignments for one kernel: tree=, flavour=, fragments=
    policy.py check [--matrix M ...] [--bench B ...]
        fail, naming file and line, on a malformed policy/kernels or a
        cell or bench line that names a kernel it does not define

A bad line is an error with its file and line, before anything is built.
Only standard library modules are used.
"""

import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
KERNELS = os.path.join(TOP, "policy", "kernels")
FRAGMENTS = os.path.join(TOP, "Kconfig-fragments")
TREES = ("vanilla", "patched")
FLAVOURS = ("lab", "distro", "debug")
NAME = re.compile(r"^[a-z][a-z0-9-]*$")


class PolicyError(SystemExit):
    pass


def rows(path, nfields):
    """(lineno, [fields]) of a "|"-separated policy file, comments dropped."""
    try:
        f = open(path, encoding="utf-8")
    except OSError as e:
        raise PolicyError(f"{path}: {e.strerror}")
    with f:
        for lineno, line in enumerate(f, 1):
            if line.lstrip().startswith("#") or not line.strip():
                continue
            fields = [x.strip() for x in line.rstrip("\n").split("|")]
            if len(fields) != nfields:
                raise PolicyError(f"{path}:{lineno}: expected {nfields} fields separated "
                                  f"by '|', got {len(fields)}")
            yield lineno, fields


def read_kernels(path=KERNELS):
    """{name: {"tree", "flavour", "fragments": [...], "where"}}, in file order."""
    kernels = {}
    for lineno, (name, tree, flavour, fragments) in rows(path, 4):
        where = f"{path}:{lineno}"
        if not NAME.match(name):
            raise PolicyError(f"{where}: kernel name {name!r}: lower case, digits and '-'")
        if name in kernels:
            raise PolicyError(f"{where}: kernel {name} is already defined at "
                              f"{kernels[name]['where']}")
        if tree not in TREES:
            raise PolicyError(f"{where}: tree {tree!r} is not one of {', '.join(TREES)}")
        if flavour not in FLAVOURS:
            raise PolicyError(f"{where}: flavour {flavour!r} is not one of "
                              f"{', '.join(FLAVOURS)}")
        frags = fragments.split()
        if not frags:
            raise PolicyError(f"{where}: kernel {name} has no fragments")
        for frag in frags:
            if frag != "@debian" and not os.path.isfile(os.path.join(FRAGMENTS, frag)):
                raise PolicyError(f"{where}: no fragment Kconfig-fragments/{frag}")
        if "@debian" in frags and flavour == "lab":
            raise PolicyError(f"{where}: a lab kernel takes nothing from Debian (@debian)")
        if "@debian" not in frags and flavour != "lab":
            raise PolicyError(f"{where}: a {flavour} kernel needs the @debian fragment")
        kernels[name] = {"tree": tree, "flavour": flavour, "fragments": frags, "where": where}
    if not kernels:
        raise PolicyError(f"{path}: no kernels")
    return kernels


def used_kernels(kernels, matrices=(), benches=()):
    """Kernel names used by matrix (5 fields) and bench (3 fields) files, checked."""
    used = []
    for path, nfields in [(m, 5) for m in matrices] + [(b, 3) for b in benches]:
        for lineno, fields in rows(path, nfields):
            k = fields[1]
            if k not in kernels:
                raise PolicyError(f"{path}:{lineno}: kernel {k!r} is not in policy/kernels "
                                  f"(one of {', '.join(kernels)})")
            if k not in used:
                used.append(k)
    return used


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("kernels", "check"):
        p = sub.add_parser(name)
        p.add_argument("--matrix", action="append", default=[])
        p.add_argument("--bench", action="append", default=[])
    p = sub.add_parser("kernel")
    p.add_argument("name")
    args = ap.parse_args(argv)

    kernels = read_kernels()
    if args.cmd == "kernel":
        k = kernels.get(args.name)
        if k is None:
            raise PolicyError(f"no kernel {args.name!r} in policy/kernels "
                              f"(one of {', '.join(kernels)})")
        print(f"tree={k['tree']} flavour={k['flavour']} fragments='{' '.join(k['fragments'])}'")
        return 0
    used = used_kernels(kernels, args.matrix, args.bench)
    if args.cmd == "kernels":
        for name in (used if args.matrix or args.bench else kernels):
            print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
