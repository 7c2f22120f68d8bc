"""The data of policy/: loaded and checked in one place.  Its commands are
those of the harness's entry point (python3 -m harness, tests/harness/__main__.py):

    python3 -m harness kernels [--matrix M ...] [--bench B ...]
        the kernel names, one per line: all of policy/kernels, or only
        those that the given matrices and bench files use
    python3 -m harness kernel NAME
        shell assignments for one kernel: tree=, flavour=, arch=, fragments=
    python3 -m harness arch ARCH [FIELD]
        one architecture of policy/arches: shell assignments (karch=,
        cross=, target=, image=, qemu=, qemu_machine=, qemu_cpu=,
        cmdline=, guest_cc=, packages=), or one FIELD's value alone
    python3 -m harness fragments NAME
        the paths of one kernel's fragments in Kconfig-fragments/, in
        merge order, on one line (make series-check)
    python3 -m harness cell --matrix M NAME
        shell assignments for one cell of M (tests/harness/run-cell.sh): kernel=,
        arch= (its kernel's), args=, tests= (space-separated), mem=,
        machine= and timeout= (empty when the cell does not set them)
    python3 -m harness bench --bench B [--wipe W] [CONFIG ...]
        one line per configuration of B to boot (tests/bench/run-bench.sh),
        each shell assignments for eval: config=, kernel=, tree=, args=,
        wipe= (yes if W, policy/bench-wipe by default, names it: it gets
        a boot that wipes free memory); all of B in file order, or the
        CONFIGs named, in their order (a name B does not define is an
        error).  B is checked whole first, and W and policy/bench-targets
        against it (--targets)
    python3 -m harness suite NAME [FIELD]
        one suite of policy/suites: shell assignments (suite=, matrix=,
        lifetime=, channels=, results=, check=, needs=, env=) or one
        FIELD's value
    python3 -m harness suites [--check yes|no] [--field F | --summary-parts]
        the suites (or one field of each), one per line
    python3 -m harness check [--matrix M ...] [--bench B ...] [--suites S]
        fail, naming file and line, on a malformed policy/kernels,
        policy/arches or policy/suites, a cell or bench line that names a
        kernel it does not define, a cell's expect column with an unknown
        key or a bad value, or a column of a lifetime table that is not a
        cell running guest:lifetime in the suites that name the table (or
        such a cell without a column), or a row that is not a channel of
        those suites' list (or a channel without a row), or a line of
        policy/fastpath that is not "free|outline|alloc <function>", or a
        configuration of policy/bench defined twice, a line of
        policy/bench-wipe that is not a patched configuration of
        policy/bench (or one given twice), or a target of
        policy/bench-targets that names a configuration policy/bench does
        not define (or, for a wipe measure, one without a wipe boot), an
        unknown measure or a limit that is not a number, or
        a line of policy/bench-workloads that is not one workload name (or
        a name given twice)

A bad line is an error with its file and line, before anything is built.
Only standard library modules are used.
"""

import argparse
import os
import re
import shlex
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
KERNELS = os.path.join(TOP, "policy", "kernels")
LIFETIME = os.path.join(TOP, "policy", "lifetime")
CHANNELS = os.path.join(TOP, "tests", "scan", "channels")
FASTPATH = os.path.join(TOP, "policy", "fastpath")
BENCH = os.path.join(TOP, "policy", "bench")
BENCH_TARGETS = os.path.join(TOP, "policy", "bench-targets")
BENCH_WORKLOADS = os.path.join(TOP, "policy", "bench-workloads")
BENCH_WIPE = os.path.join(TOP, "policy", "bench-wipe")
UML = os.path.join(TOP, "policy", "uml")
# The suites of boots (make check and its siblings), each a matrix, the
# table its lifetime cells are judged against and their channel list.
SUITES = os.path.join(TOP, "policy", "suites")
# The mutations of make mutants, each a test that some cell must fail.
MUTANTS = os.path.join(TOP, "policy", "mutants")
MUTATION_KINDS = ("revert", "replace", "replace-all")
# The skips a cell may report (the judge fails any other).
SKIPS = os.path.join(TOP, "policy", "skips")
SUITE_FIELDS = ("suite", "matrix", "lifetime", "channels", "results", "check", "needs", "env")
FRAGMENTS = os.path.join(TOP, "Kconfig-fragments")
TREES = ("vanilla", "patched")
FLAVOURS = ("lab", "distro", "debug")
# The architectures a kernel is built for; how each is built and booted
# (ARCH=, the cross compiler, the image, the QEMU) is policy/arches's.
ARCHES_FILE = os.path.join(TOP, "policy", "arches")
ARCH_FIELDS = ("arch", "karch", "cross", "target", "image", "qemu", "machine", "cpu",
               "cmdline", "guest-cc", "packages")
# A QEMU named in the environment is run as a command: a plain path only.
PLAIN_PATH = re.compile(r"^[A-Za-z0-9_./+-]+$")
NAME = re.compile(r"^[a-z][a-z0-9-]*$")


class PolicyError(SystemExit):
    pass


def shown(path):
    """path as errors name it: relative to the current directory when it
    is below it (policy/matrix:27 from the top, where make runs)."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def lines(path):
    """(lineno, line) of a policy file, comments and blank lines dropped."""
    path = shown(path)
    try:
        f = open(path, encoding="utf-8")
    except OSError as e:
        raise PolicyError(f"{path}: {e.strerror}")
    with f:
        for lineno, line in enumerate(f, 1):
            if not line.lstrip().startswith("#") and line.strip():
                yield lineno, line


def rows(path, nfields, last_takes_rest=False):
    """(lineno, [fields]) of a "|"-separated policy file, comments dropped;
    with last_takes_rest, a "|" in the last field is its own (a mutation's
    C source)."""
    path = shown(path)
    for lineno, line in lines(path):
        fields = [x.strip() for x in line.rstrip("\n").split(
            "|", nfields - 1 if last_takes_rest else -1)]
        if len(fields) != nfields:
            raise PolicyError(f"{path}:{lineno}: expected {nfields} fields separated "
                              f"by '|', got {len(fields)}")
        yield lineno, fields


def named_records(path, fields, what, name_re, name_rule):
    """The lines of a "|"-table whose first field names each line, as
    {field: value} ("-" read as empty, "where": file:line); names checked
    against name_re and unique."""
    seen = {}
    for lineno, values in rows(path, len(fields)):
        where = f"{path}:{lineno}"
        rec = {k: ("" if v == "-" else v) for k, v in zip(fields, values)}
        name = values[0]
        if not name_re.match(name):
            raise PolicyError(f"{where}: {what} name {name!r}: {name_rule}")
        once(seen, what, name, where)
        rec["where"] = where
        yield rec
    if not seen:
        raise PolicyError(f"{path}: no {what} lines")


def read_arches(path=None):
    """{arch: {field: value}} of policy/arches, with the environment's
    QEMU_<ARCH> in place of the qemu field when set."""
    arches = {}
    for rec in named_records(shown(path or ARCHES_FILE), ARCH_FIELDS, "arch",
                             re.compile(r"^[a-z][a-z0-9_]*$"), "lower case, digits and '_'"):
        where = rec["where"]
        for k in ("target", "image", "qemu", "machine", "cpu", "guest-cc"):
            if not rec[k] or " " in rec[k]:
                raise PolicyError(f"{where}: {k} must be one word, not {rec[k]!r}")
        if bool(rec["karch"]) != bool(rec["cross"]):
            raise PolicyError(f"{where}: karch and cross go together (both '-' for the host's)")
        env = "QEMU_" + rec["arch"].upper()
        if os.environ.get(env):
            if not PLAIN_PATH.match(os.environ[env]):
                raise PolicyError(f"{env}={os.environ[env]!r} is not a plain path")
            rec["qemu"] = os.environ[env]
        arches[rec["arch"]] = rec
    return arches


def arch_assignments(rec):
    """An architecture's fields as shell assignments, quoted for eval
    (guest-cc as guest_cc)."""
    names = {"machine": "qemu_machine", "cpu": "qemu_cpu", "guest-cc": "guest_cc"}
    return "\n".join(f"{names.get(k, k)}={shlex.quote(rec[k])}" for k in ARCH_FIELDS)


def read_kernels(path=KERNELS, arches=None):
    """{name: {"tree", "flavour", "arch", "fragments": [...], "where"}}, in
    file order."""
    kernels = {}
    arches = arches if arches is not None else read_arches()
    path = shown(path)
    for lineno, (name, tree, flavour, arch, fragments) in rows(path, 5):
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
        if arch not in arches:
            raise PolicyError(f"{where}: arch {arch!r} is not one of policy/arches's "
                              f"{', '.join(arches)}")
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
        if "@debian" in frags and arch != "x86_64":
            # tests/kernel/debian.py reads Debian's amd64 configuration.
            raise PolicyError(f"{where}: the @debian fragment is Debian's amd64 "
                              f"configuration, not one for {arch}")
        kernels[name] = {"tree": tree, "flavour": flavour, "arch": arch, "fragments": frags,
                         "where": where}
    if not kernels:
        raise PolicyError(f"{path}: no kernels")
    return kernels


def known_kernel(kernels, kernel, where):
    """A kernel a line names must be one of policy/kernels."""
    if kernel not in kernels:
        raise PolicyError(f"{where}: kernel {kernel!r} is not in policy/kernels "
                          f"(one of {', '.join(kernels)})")


def single_names(path, what):
    """(where, name) for each line of a policy file that holds one name."""
    path = shown(path)
    for lineno, line in lines(path):
        words = line.split()
        where = f"{path}:{lineno}"
        if len(words) != 1:
            raise PolicyError(f"{where}: expected one {what} name, got {line.strip()!r}")
        yield where, words[0]


def once(seen, what, name, where):
    """A name a file defines twice is an error naming both lines."""
    if name in seen:
        raise PolicyError(f"{where}: {what} {name} is already defined at {seen[name]}")
    seen[name] = where


def used_kernels(kernels, matrices=(), benches=()):
    """Kernel names used by matrix (5 fields) and bench (3 fields) files, checked."""
    used = []
    for path, nfields in [(shown(m), 5) for m in matrices] + [(shown(b), 3) for b in benches]:
        for lineno, fields in rows(path, nfields):
            k = fields[1]
            known_kernel(kernels, k, f"{path}:{lineno}")
            if k not in used:
                used.append(k)
    return used


# --- the matrix ----------------------------------------------------------------

# Every key a cell's expect column may hold, and who reads it.  A key that
# is not here is an error: a typo (polcy=full) would otherwise drop a check.
EXPECT_KEYS = {
    "policy": "the effective policy the kernel must report (tests/harness/judge.py, LAVA)",
    "clear-once": "the components whose alloc-time clear the kernel must report "
                  "as skipped, 'none' or a comma list (tests/harness/judge.py)",
    "error": "a rejected value a pr_err must name (tests/harness/judge.py, LAVA)",
    "report": "<suite>.<case> that provokes a report on purpose, repeatable "
              "(tests/harness/judge.py)",
    "run": "<suite>.<case> the cell exists to run, repeatable: its SKIP is a FAIL "
           "(tests/harness/judge.py)",
    "requested": "what sanitize_mem= asked for before init_on_free=1 added to it, "
                 "as the boot line and /sys/kernel/mm/sanitize/requested say "
                 "(tests/harness/judge.py)",
    "timeout": "boot budget in seconds (tests/harness/run-cell.sh, LAVA)",
    "mem": "guest RAM in MiB (tests/harness/run-cell.sh)",
    "machine": "extra options of QEMU's -machine, comma-separated: "
               "mte=on (arm64 virt with the Memory Tagging Extension; "
               "qemu-boot/run-qemu.sh)",
    "verdict": "what the harness must conclude about a cell of "
               "tests/selftest/broken.matrix (tests/selftest/test_harness.py)",
}
EXPECT_REPEATABLE = ("report", "run")
EXPECT_NUMBERS = ("timeout", "mem")
EXPECT_PAIR = re.compile(r'(\w[\w-]*)=("([^"]*)"|\S*)')
# What machine= may hold: the machine options a cell may need, nothing that
# changes the memory the RAM scan reads (memory-backend).
MACHINE_OPTIONS = {"mte": ("on",)}


def parse_expect(text, where):
    """'policy=full error="pages,nope"' to a dict; quotes allow spaces/empty.
    An unknown key, a key given twice (but report) or a timeout/mem that is
    not a positive number is an error naming where."""
    expect = {}
    for m in EXPECT_PAIR.finditer(text):
        key, value = m.group(1), m.group(3) if m.group(3) is not None else m.group(2)
        if key not in EXPECT_KEYS:
            raise PolicyError(f"{where}: unknown expectation {key}={value} (known: "
                              f"{', '.join(EXPECT_KEYS)})")
        if key in EXPECT_NUMBERS and not re.fullmatch(r"[1-9][0-9]*", value):
            raise PolicyError(f"{where}: {key}={value}: a positive whole number")
        if key == "machine":
            for opt in value.split(","):
                k, _, v = opt.partition("=")
                if v not in MACHINE_OPTIONS.get(k, ()):
                    raise PolicyError(f"{where}: machine={value}: {opt!r} is not one of "
                                      + ", ".join(f"{o}={x}" for o, xs in MACHINE_OPTIONS.items()
                                                  for x in xs))
        if key in expect and key in EXPECT_REPEATABLE:
            expect[key] += " " + value
        elif key in expect:
            raise PolicyError(f"{where}: {key} given twice")
        else:
            expect[key] = value
    leftover = EXPECT_PAIR.sub("", text).strip()
    if leftover:
        raise PolicyError(f"{where}: cannot read expectation {leftover!r}")
    return expect


def read_matrix(path, kernels=None):
    """policy/matrix (or a harness test matrix) as a list of cell dicts,
    each with "where" (file:line); every field checked."""
    cells = []
    kernels = read_kernels() if kernels is None else kernels
    seen = {}
    path = shown(path)
    for lineno, (name, kernel, args, tests, expect) in rows(path, 5):
        where = f"{path}:{lineno}"
        once(seen, "cell", name, where)
        known_kernel(kernels, kernel, where)
        expected = parse_expect(expect, where)
        if "machine" in expected and kernels[kernel]["arch"] != "arm64":
            raise PolicyError(f"{where}: machine={expected['machine']} is for an arm64 "
                              f"kernel, and {kernel} is {kernels[kernel]['arch']}")
        cells.append({
            "cell": name,
            "kernel": kernel,
            "arch": kernels[kernel]["arch"],
            "args": args,
            "tests": tests.split(),
            "expect": expected,
            "where": where,
        })
    return cells


def cell_assignments(cells, name, matrix):
    """One cell as shell assignments, every value quoted for eval."""
    for c in cells:
        if c["cell"] == name:
            values = {"kernel": c["kernel"], "arch": c["arch"], "args": c["args"],
                      "tests": " ".join(c["tests"]),
                      "mem": c["expect"].get("mem", ""),
                      "machine": c["expect"].get("machine", ""),
                      "timeout": c["expect"].get("timeout", "")}
            return "\n".join(f"{k}={shlex.quote(v)}" for k, v in values.items())
    raise PolicyError(f"no cell named {name!r} in {shown(matrix)}")


# --- policy/lifetime and the channels ------------------------------------------

LIFETIME_VALUES = ("0", "found", "-", "n/a")


def lifetime_rows(path):
    """policy/lifetime as (header line, [cells], [(line, channel, [values])]),
    each row checked against the header."""
    header, cells, body, seen = None, None, [], {}
    path = shown(path)
    for lineno, line in lines(path):
        words = line.split()
        if cells is None:
            if words[0] != "channel":
                raise PolicyError(f"{path}:{lineno}: the first row must name the cells")
            header, cells = lineno, words[1:]
            dup = [c for c in cells if cells.count(c) > 1]
            if dup:
                raise PolicyError(f"{path}:{lineno}: column {dup[0]} named twice")
            continue
        if len(words) != len(cells) + 1:
            raise PolicyError(f"{path}:{lineno}: {len(words) - 1} values for "
                              f"{len(cells)} cells")
        if words[0] in seen:
            raise PolicyError(f"{path}:{lineno}: channel {words[0]} already has a row "
                              f"at line {seen[words[0]]}")
        seen[words[0]] = lineno
        for want in words[1:]:
            if want not in LIFETIME_VALUES:
                raise PolicyError(f"{path}:{lineno}: {want!r} is not 0, found, - or n/a")
        body.append((lineno, words[0], words[1:]))
    if cells is None:
        raise PolicyError(f"{path}: no row naming the cells")
    return header, cells, body


def read_lifetime(path=LIFETIME):
    """policy/lifetime: {cell: {channel: "0" | "found" | "-" | "n/a"}}."""
    _, cells, body = lifetime_rows(path)
    table = {c: {} for c in cells}
    for _, channel, values in body:
        for c, want in zip(cells, values):
            table[c][channel] = want
    return table


def read_channels(path=CHANNELS):
    """tests/scan/channels: {channel: line}, in file order."""
    channels = {}
    for lineno, line in lines(path):
        channels.setdefault(line.split()[0], lineno)
    return channels


def read_suites(path=None):
    """{name: {field: value}} of policy/suites, in file order; the files
    each names exist, a results folder is one suite's."""
    suites, folders = {}, {}
    for rec in named_records(shown(path or SUITES), SUITE_FIELDS, "suite", NAME,
                             "lower case, digits and '-'"):
        where, name = rec["where"], rec["suite"]
        for k in ("matrix", "lifetime", "channels"):
            if not os.path.isfile(os.path.join(TOP, rec[k])):
                raise PolicyError(f"{where}: {k} {rec[k]!r}: no such file")
        if rec["check"] not in ("yes", "no"):
            raise PolicyError(f"{where}: check must be yes or no, not {rec['check']!r}")
        if rec["results"] != "." and not NAME.match(rec["results"]):
            raise PolicyError(f"{where}: results {rec['results']!r}: a folder name "
                              f"(lower case, digits, '-') or '.'")
        if rec["results"] in folders:
            raise PolicyError(f"{where}: results folder {rec['results']!r} is already "
                              f"suite {folders[rec['results']]}'s")
        folders[rec["results"]] = name
        for word in rec["env"].split():
            var, eq, value = word.partition("=")
            if not eq or not re.match(r"^[A-Z][A-Z0-9_]*$", var) or not PLAIN_PATH.match(value):
                raise PolicyError(f"{where}: env {word!r}: VARIABLE=plain/path")
        suites[name] = rec
    return suites


def read_skips(path=SKIPS):
    """policy/skips: [{"kernels": [globs], "test": glob, "reason": text,
    "why": text, "where"}].  A skip a cell reports is allowed when its
    cell's kernel matches one of the kernels, its test path the test and
    its own reason contains the reason."""
    path = shown(path)
    out = []
    for lineno, (kernels, test, reason, why) in rows(path, 4):
        where = f"{path}:{lineno}"
        globs = kernels.split()
        if not globs or not all(re.match(r"^[a-z0-9*?-]+$", g) for g in globs):
            raise PolicyError(f"{where}: kernels {kernels!r}: kernel names or globs")
        if not re.match(r"^(kunit|guest)\.[\w*?.-]+$", test):
            raise PolicyError(f"{where}: test {test!r}: kunit.<suite>.<case> or "
                              f"guest.<program>.<check> (globs allowed)")
        if not reason or not why:
            raise PolicyError(f"{where}: a skip needs the reason it prints and why it "
                              f"is allowed")
        out.append({"kernels": globs, "test": test, "reason": reason, "why": why,
                    "where": where})
    return out



def unescape(text):
    r"""\n and \t in a mutation's strings, so one line can name several."""
    return text.replace("\\n", "\n").replace("\\t", "\t")


def read_mutants(path=None, kernels=None, suites=None):
    """policy/mutants: [{"name", "cells": [(suite, cell), ...], "kernels":
    [patched kernels to rebuild], "kind", "args", "where"}], each cell one
    of a make check suite's on a patched kernel, each mutation well formed
    (a revert names a patch of src-patches/series; a replace names a file
    and two strings)."""
    path = shown(path or MUTANTS)
    kernels = kernels if kernels is not None else read_kernels()
    suites = suites if suites is not None else read_suites()
    cells = {}
    for s in suites.values():
        if s["check"] == "yes":
            for c in read_matrix(os.path.join(TOP, s["matrix"]), kernels):
                cells.setdefault(c["cell"], (s["suite"], c))
    patches = sorted(f for f in os.listdir(os.path.join(TOP, "src-patches"))
                     if re.match(r"^\d{4}-.*\.patch$", f))
    out, seen = [], {}
    for lineno, (name, cell_names, mutation) in rows(path, 3, last_takes_rest=True):
        where = f"{path}:{lineno}"
        if not NAME.match(name):
            raise PolicyError(f"{where}: mutant name {name!r}: lower case, digits and '-'")
        once(seen, "mutant", name, where)
        picked, need = [], []
        for cell in cell_names.split():
            if cell not in cells:
                raise PolicyError(f"{where}: cell {cell!r} is not a cell of make check's "
                                  f"suites")
            suite, c = cells[cell]
            if kernels[c["kernel"]]["tree"] != "patched":
                raise PolicyError(f"{where}: cell {cell} boots {c['kernel']}, not a patched "
                                  f"kernel: a mutation cannot change it")
            picked.append((suite, cell))
            if c["kernel"] not in need:
                need.append(c["kernel"])
        if not picked:
            raise PolicyError(f"{where}: mutant {name} names no cell")
        try:
            words = [unescape(w) for w in shlex.split(mutation)]
        except ValueError as e:
            raise PolicyError(f"{where}: mutation: {e}")
        kind = words[0] if words else ""
        if kind == "revert":
            if len(words) != 2 or not re.match(r"^\d{4}$", words[1]):
                raise PolicyError(f"{where}: revert NNNN (a patch number)")
            if not any(p.startswith(words[1] + "-") for p in patches):
                raise PolicyError(f"{where}: no patch {words[1]} in src-patches/")
        elif kind in ("replace", "replace-all"):
            if len(words) != 4 or not words[2]:
                raise PolicyError(f"{where}: {kind} FILE OLD NEW")
            if words[1].startswith("/") or ".." in words[1].split("/"):
                raise PolicyError(f"{where}: {words[1]!r}: a path in the kernel tree")
        else:
            raise PolicyError(f"{where}: mutation {kind!r} is not one of "
                              f"{', '.join(MUTATION_KINDS)}")
        out.append({"name": name, "cells": picked, "kernels": need, "kind": kind,
                    "args": words[1:], "where": where})
    if not out:
        raise PolicyError(f"{path}: no mutants")
    return out


def lifetime_groups(suites):
    """(table, [matrices], channels) for each lifetime table the suites
    name: a table's columns are the lifetime cells of all of them."""
    groups = {}
    for s in suites.values():
        g = groups.setdefault(s["lifetime"], ([], s["channels"]))
        if g[1] != s["channels"]:
            raise PolicyError(f"{s['where']}: {s['lifetime']} is judged with "
                              f"{g[1]} by another suite, not {s['channels']}")
        g[0].append(os.path.join(TOP, s["matrix"]))
    return [(os.path.join(TOP, t), m, os.path.join(TOP, c)) for t, (m, c) in groups.items()]


def check_lifetime(path=LIFETIME, matrices=None, channels=CHANNELS, kernels=None):
    """Every column of policy/lifetime is a cell of one of the matrices that
    runs guest:lifetime, and every such cell has a column; every row is a
    channel of tests/scan/channels, and every channel has a row."""
    if matrices is None:
        matrices = [m for t, ms, _ in lifetime_groups(read_suites())
                    if os.path.abspath(t) == os.path.abspath(path) for m in ms]
    path, channels, matrices = shown(path), shown(channels), [shown(m) for m in matrices]
    header, cells, body = lifetime_rows(path)
    scanned = {}
    for m in matrices:
        for c in read_matrix(m, kernels):
            if "guest:lifetime" in c["tests"]:
                scanned.setdefault(c["cell"], c["where"])
            else:
                scanned.setdefault(c["cell"], None)
    for c in cells:
        if c not in scanned:
            raise PolicyError(f"{path}:{header}: column {c} is not a cell of "
                              f"{' or '.join(matrices)}")
        if scanned[c] is None:
            raise PolicyError(f"{path}:{header}: column {c}: the cell does not run "
                              f"guest:lifetime")
    for c, where in scanned.items():
        if where is not None and c not in cells:
            raise PolicyError(f"{where}: cell {c} runs guest:lifetime but {path} has "
                              f"no column for it")
    known = read_channels(channels)
    for lineno, channel, _ in body:
        if channel not in known:
            raise PolicyError(f"{path}:{lineno}: {channel} is not a channel of {channels}")
    rows_ = {channel for _, channel, _ in body}
    for channel, lineno in known.items():
        if channel not in rows_:
            raise PolicyError(f"{channels}:{lineno}: channel {channel} has no row in {path}")


# --- policy/bench and policy/bench-targets ------------------------------------

def read_bench(path=BENCH, kernels=None):
    """policy/bench as a list of configurations {"name", "kernel", "tree",
    "args", "where"}, in file order; every kernel checked."""
    kernels = read_kernels() if kernels is None else kernels
    configs, seen = [], {}
    path = shown(path)
    for lineno, (name, kernel, args) in rows(path, 3):
        where = f"{path}:{lineno}"
        if not NAME.match(name):
            raise PolicyError(f"{where}: configuration name {name!r}: lower case, digits and '-'")
        once(seen, "configuration", name, where)
        known_kernel(kernels, kernel, where)
        if kernels[kernel].get("arch", "x86_64") != "x86_64":
            raise PolicyError(f"{where}: kernel {kernel} is {kernels[kernel]['arch']}: the "
                              f"bench boots x86_64 kernels (tests/bench/run-bench.sh)")
        configs.append({"name": name, "kernel": kernel, "tree": kernels[kernel]["tree"],
                        "args": args, "where": where})
    return configs


def read_bench_wipe(path=BENCH_WIPE, bench=BENCH, kernels=None):
    """policy/bench-wipe: the names of the configurations of the bench file
    that get a boot wiping free memory (issue 35), in file order; each must
    boot a patched kernel (vanilla has no /sys/kernel/mm/sanitize/scrub_free)."""
    configs = {c["name"]: c for c in read_bench(bench, kernels)}
    names, seen = [], {}
    for where, name in single_names(path, "configuration"):
        c = configs.get(name)
        if c is None:
            raise PolicyError(f"{where}: configuration {name!r} is not in {shown(bench)} "
                              f"(one of {', '.join(configs)})")
        if c["tree"] != "patched":
            raise PolicyError(f"{where}: configuration {name} boots {c['kernel']}, not a "
                              f"patched kernel: it has no wipe of free memory")
        once(seen, "configuration", name, where)
        names.append(name)
    return names


def bench_assignments(configs, wanted, path, wipe=()):
    """The configurations to boot as lines of shell assignments, every
    value quoted for eval: all of them, or those named in wanted, in that
    order; wipe= says whether the configuration is one of wipe's."""
    by = {c["name"]: c for c in configs}
    out = []
    for name in wanted or by:
        c = by.get(name)
        if c is None:
            raise PolicyError(f"no configuration {name!r} in {shown(path)} "
                              f"(one of {', '.join(by)})")
        values = {"config": c["name"], "kernel": c["kernel"], "tree": c["tree"],
                  "args": c["args"], "wipe": "yes" if name in wipe else "no"}
        out.append(" ".join(f"{k}={shlex.quote(v)}" for k, v in values.items()))
    return "\n".join(out)


# A process workload's name: the guest program's w_<name> function, a
# word of its plan line (16 bytes a name there, with the comma).
WORKLOAD = re.compile(r"^[a-z][a-z0-9]{0,14}$")


def read_bench_workloads(path=None):
    """policy/bench-workloads: the process workloads' names, in the order
    the guest program (tests/guest/bench.c) runs them."""
    path = shown(path or BENCH_WORKLOADS)
    names, seen = [], {}
    for where, name in single_names(path, "workload"):
        if not WORKLOAD.match(name):
            raise PolicyError(f"{where}: workload name {name!r}: lower case letters and "
                              f"digits, at most 15")
        if name in seen:
            raise PolicyError(f"{where}: workload {name} is already listed at {seen[name]}")
        seen[name] = where
        names.append(name)
    if not names:
        raise PolicyError(f"{path}: no workloads")
    return names


# What a target of policy/bench-targets measures, and how many names
# follow the word: micro-delta two benchmarks, icount any number of the
# process workloads of policy/bench-workloads (none: every one),
# wipe-bytes none (both configurations must be in policy/bench-wipe).
BENCH_MEASURES = {"icount": None, "micro-delta": 2, "wipe-bytes": 0}
# "<" before the number: strictly below it.
BENCH_LIMIT = re.compile(r"^(<)?([0-9]+(?:\.([0-9]+))?)$")
BENCHMARK = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def read_bench_targets(path=BENCH_TARGETS, bench=BENCH, kernels=None,
                       workloads=BENCH_WORKLOADS, wipe=BENCH_WIPE):
    """policy/bench-targets as a list of {"name", "config", "base", "via",
    "measure", "benchmarks", "workloads", "limit", "strict", "decimals",
    "description", "where"}, every configuration a name of the bench file
    (and of the wipe file for a wipe measure) and every workload one of
    the workloads file."""
    configs = [c["name"] for c in read_bench(bench, kernels)]
    known_workloads = read_bench_workloads(workloads)
    wiped = None        # the wipe file, read if a target measures the wipe
    targets, seen = [], {}
    path = shown(path)
    for lineno, (name, config, base, via, measure, limit, description) in rows(path, 7):
        where = f"{path}:{lineno}"
        if not NAME.match(name):
            raise PolicyError(f"{where}: target name {name!r}: lower case, digits and '-'")
        once(seen, "target", name, where)
        for c in (config, base):
            if c not in configs:
                raise PolicyError(f"{where}: configuration {c!r} is not in {shown(bench)} "
                                  f"(one of {', '.join(configs)})")
        if config == base:
            raise PolicyError(f"{where}: target {name} compares {config} with itself")
        via = [] if via == "-" else via.split()
        for c in via:
            if c not in configs:
                raise PolicyError(f"{where}: via: configuration {c!r} is not in {shown(bench)} "
                                  f"(one of {', '.join(configs)})")
        if len(set([base] + via + [config])) != len(via) + 2:
            raise PolicyError(f"{where}: via {' '.join(via)!r} names {base}, {config} or "
                              f"a configuration twice")
        words = measure.split()
        if not words or words[0] not in BENCH_MEASURES:
            raise PolicyError(f"{where}: measure {measure!r} is not one of "
                              f"{', '.join(BENCH_MEASURES)}")
        names = words[1:]
        if words[0] == "wipe-bytes":
            if wiped is None:
                wiped = read_bench_wipe(wipe, bench, kernels)
            for c in (config, base):
                if c not in wiped:
                    raise PolicyError(f"{where}: measure wipe-bytes: configuration {c} "
                                      f"has no wipe boot (not in {shown(wipe)})")
        if words[0] == "icount":
            benchmarks = []
            for w in names:
                if w not in known_workloads:
                    raise PolicyError(f"{where}: {w!r} is not a workload of "
                                      f"{shown(workloads)} (one of "
                                      f"{', '.join(known_workloads)})")
        else:
            if via:
                raise PolicyError(f"{where}: via is for icount targets; write '-'")
            benchmarks = names
            if len(benchmarks) != BENCH_MEASURES[words[0]]:
                raise PolicyError(f"{where}: measure {words[0]} takes "
                                  f"{BENCH_MEASURES[words[0]]} benchmark names, got "
                                  f"{len(benchmarks)}")
            for b in benchmarks:
                if not BENCHMARK.match(b):
                    raise PolicyError(f"{where}: {b!r} is not a benchmark name")
        if len(set(names)) != len(names):
            raise PolicyError(f"{where}: measure {measure!r} names one twice")
        m = BENCH_LIMIT.match(limit)
        if not m or float(m.group(2)) <= 0:
            raise PolicyError(f"{where}: limit {limit!r} is not a positive decimal number")
        if not description:
            raise PolicyError(f"{where}: target {name} has no description")
        targets.append({"name": name, "config": config, "base": base, "via": tuple(via),
                        "measure": words[0],
                        "benchmarks": tuple(benchmarks) or None,
                        "workloads": tuple(names) if words[0] == "icount" and names else None,
                        "limit": float(m.group(2)), "strict": bool(m.group(1)),
                        "decimals": len(m.group(3) or ""), "description": description,
                        "where": where})
    if not targets:
        raise PolicyError(f"{path}: no targets")
    return targets


# --- policy/fastpath -------------------------------------------------------------

FASTPATH_RULES = ("free", "outline", "alloc")
SYMBOL = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def read_fastpath(path=FASTPATH):
    """policy/fastpath: {"free": [functions], "outline": [functions],
    "alloc": [functions]}."""
    table = {rule: [] for rule in FASTPATH_RULES}
    seen = {}
    path = shown(path)
    for lineno, line in lines(path):
        words = line.split()
        where = f"{path}:{lineno}"
        if len(words) != 2:
            raise PolicyError(f"{where}: expected '<rule> <function>', got {line.strip()!r}")
        rule, function = words
        if rule not in FASTPATH_RULES:
            raise PolicyError(f"{where}: rule {rule!r} is not one of "
                              f"{', '.join(FASTPATH_RULES)}")
        if not SYMBOL.match(function):
            raise PolicyError(f"{where}: {function!r} is not a function name")
        if function in seen:
            raise PolicyError(f"{where}: {function} is already listed at {seen[function]}")
        seen[function] = where
        table[rule].append(function)
    if not table["free"]:
        raise PolicyError(f"{path}: no free fast path to check")
    return table


# --- policy/uml: the KUnit suite and the bench under User-Mode Linux ----------

def read_uml(path=UML):
    """policy/uml as a list of dicts like read_matrix's cells (kernel "uml"),
    every field checked; a bad line is an error naming file and line."""
    out, seen = [], {}
    path = shown(path)
    for lineno, (name, args, tests, expect) in rows(path, 4):
        where = f"{path}:{lineno}"
        if not re.fullmatch(r"[a-z][a-z0-9-]*", name):
            raise PolicyError(f"{where}: bad name {name!r} (lower case, digits, '-')")
        if name in seen:
            raise PolicyError(f"{where}: {name} is already defined at {seen[name]}")
        seen[name] = where
        tests = tests.split()
        if not tests:
            raise PolicyError(f"{where}: no tests (kunit:<suite> and/or bench)")
        for t in tests:
            if t != "bench" and not re.fullmatch(r"kunit:[a-z0-9_]+", t):
                raise PolicyError(f"{where}: unknown test {t!r} (kunit:<suite> or bench)")
        if "sanitize_bench." in args or "kunit." in args:
            raise PolicyError(f"{where}: {args!r}: sanitize_bench.* and kunit.* are set by "
                              "tests/uml/uml.py, not by a policy line")
        out.append({"cell": name, "kernel": "uml", "args": args, "tests": tests,
                    "expect": parse_expect(expect, where), "where": where})
    if not out:
        raise PolicyError(f"{path}: no lines")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("kernels", "check"):
        p = sub.add_parser(name)
        p.add_argument("--matrix", action="append", default=[])
        p.add_argument("--bench", action="append", default=[])
    p = sub.choices["check"]
    p.add_argument("--suites", default=SUITES,
                   help="every suite's matrix, and each lifetime table against the "
                        "cells and channels of the suites that name it")
    p.add_argument("--fastpath", default=FASTPATH)
    p.add_argument("--bench-targets", default=BENCH_TARGETS,
                   help="checked against policy/bench")
    p.add_argument("--bench-workloads", default=BENCH_WORKLOADS)
    p.add_argument("--bench-wipe", default=BENCH_WIPE,
                   help="checked against policy/bench")
    p.add_argument("--uml", default=UML)
    p.add_argument("--skips", default=SKIPS)
    p.add_argument("--mutants", default=MUTANTS)
    p = sub.add_parser("suite")
    p.add_argument("name")
    p.add_argument("field", nargs="?", choices=SUITE_FIELDS)
    p = sub.add_parser("suites")
    p.add_argument("--check", choices=("yes", "no"), help="only those make check runs (yes) "
                   "or not")
    p.add_argument("--field", choices=SUITE_FIELDS, default="suite")
    p.add_argument("--summary-parts", action="store_true",
                   help="RESULTS=MATRIX of each (make summary's --part), the "
                        "main folder's aside")
    for name in ("kernel", "fragments"):
        p = sub.add_parser(name)
        p.add_argument("name")
    p = sub.add_parser("arch")
    p.add_argument("name")
    p.add_argument("field", nargs="?", choices=ARCH_FIELDS)
    p = sub.add_parser("cell")
    p.add_argument("--matrix", required=True)
    p.add_argument("name")
    p = sub.add_parser("bench")
    p.add_argument("--bench", default=BENCH)
    p.add_argument("--wipe", default=BENCH_WIPE,
                   help="the configurations of --bench that get a wipe boot")
    p.add_argument("--targets", default=BENCH_TARGETS,
                   help="checked against --bench (its report reads them)")
    p.add_argument("config", nargs="*")
    args = ap.parse_args(argv)

    if args.cmd == "suite":
        suites = read_suites()
        if args.name not in suites:
            raise PolicyError(f"no suite {args.name!r} in policy/suites "
                              f"(one of {', '.join(suites)})")
        rec = suites[args.name]
        print(rec[args.field] if args.field else
              "\n".join(f"{k}={shlex.quote(rec[k])}" for k in SUITE_FIELDS))
        return 0
    if args.cmd == "suites":
        for rec in read_suites().values():
            if args.check and rec["check"] != args.check:
                continue
            if not args.summary_parts:
                print(rec[args.field])
            elif rec["results"] != ".":
                print(f"{rec['results']}={rec['matrix']}")
        return 0
    if args.cmd == "arch":
        arches = read_arches()
        if args.name not in arches:
            raise PolicyError(f"no architecture {args.name!r} in policy/arches "
                              f"(one of {', '.join(arches)})")
        rec = arches[args.name]
        print(rec[args.field] if args.field else arch_assignments(rec))
        return 0
    kernels = read_kernels()
    if args.cmd in ("kernel", "fragments"):
        k = kernels.get(args.name)
        if k is None:
            raise PolicyError(f"no kernel {args.name!r} in policy/kernels "
                              f"(one of {', '.join(kernels)})")
        if args.cmd == "fragments":
            print(" ".join(os.path.join(FRAGMENTS, f) for f in k["fragments"]))
        else:
            print(f"tree={k['tree']} flavour={k['flavour']} arch={k['arch']} "
                  f"fragments='{' '.join(k['fragments'])}'")
        return 0
    if args.cmd == "cell":
        print(cell_assignments(read_matrix(args.matrix, kernels), args.name, args.matrix))
        return 0
    if args.cmd == "bench":
        configs = read_bench(args.bench, kernels)
        read_bench_targets(args.targets, args.bench, kernels, wipe=args.wipe)
        wipe = read_bench_wipe(args.wipe, args.bench, kernels)
        print(bench_assignments(configs, args.config, args.bench, wipe))
        return 0
    used = used_kernels(kernels, args.matrix, args.bench)
    if args.cmd == "kernels":
        for name in (used if args.matrix or args.bench else kernels):
            print(name)
        return 0
    for m in args.matrix:
        read_matrix(m, kernels)
    suites = read_suites(args.suites)
    for s in suites.values():
        read_matrix(os.path.join(TOP, s["matrix"]), kernels)
    for table, matrices, channels in lifetime_groups(suites):
        check_lifetime(table, matrices, channels, kernels)
    read_fastpath(args.fastpath)
    for b in args.bench:
        read_bench(b, kernels)
    read_bench_wipe(args.bench_wipe, BENCH, kernels)
    read_bench_targets(args.bench_targets, BENCH, kernels, wipe=args.bench_wipe)
    read_bench_workloads(args.bench_workloads)
    read_uml(args.uml)
    read_skips(args.skips)
    read_mutants(args.mutants, kernels, suites)
    return 0

