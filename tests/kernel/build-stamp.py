#!/usr/bin/env python3
"""The stamp that lets make kernel skip a kernel's build check when
nothing it is built from changed (build-kernel.sh; a no-op kernel make
still costs ~9 s per kernel, and make check calls make kernel five times).

    build-stamp.py inputs SRC OBJ FRAGMENT...
        the state of what the build of OBJ reads, one line each: the source
        tree's HEAD and whether it has changes (git status), each fragment
        of policy/kernels in order (Kconfig-fragments/<name>; "@debian":
        $DEBIAN_CONFIG, distro.areas and debian.py), the scripts that
        configure and build (build-kernel.sh, configure.sh, this file), the
        toolchain's versions (gcc, ld, pahole), the environment kbuild
        reads.  Files by sha256, size
        and mtime, so a touched file counts as changed too.
    build-stamp.py seal INPUTS OBJ
        INPUTS (taken before the build started) plus the outputs as the
        build left them (the boot image, vmlinux, .config: size, mtime), printed:
        the stamp
    build-stamp.py check STAMP SRC OBJ FRAGMENT...
        exit 0 if STAMP is what seal printed for these inputs and the
        outputs are untouched since; else say what changed, write the
        inputs as they are now to STAMP.inputs (for seal, once the build
        succeeded) and exit 1

A source tree with uncommitted or untracked changes is never up to date:
its state is not one HEAD, and a second edit of a modified file would not
show in git status.  Python 3 standard library only.
"""

import hashlib
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
FRAGMENTS = os.path.join(TOP, "Kconfig-fragments")
# The build's scripts and the data they read besides the fragments,
# relative to the top.
SCRIPTS = ("tests/kernel/build-kernel.sh", "tests/kernel/configure.sh",
           "tests/kernel/build-stamp.py", "policy/arches")
DEBIAN_INPUTS = ("Kconfig-fragments/distro.areas", "tests/kernel/debian.py")
# What kbuild reads from the environment besides the command line
# build-kernel.sh gives it (covered by its own hash).
KBUILD_ENV = ("ARCH", "CROSS_COMPILE", "LLVM", "KCFLAGS", "KCPPFLAGS", "KAFLAGS",
              "KBUILD_BUILD_USER", "KBUILD_BUILD_HOST", "KBUILD_BUILD_TIMESTAMP",
              "KBUILD_BUILD_VERSION", "INSTALL_MOD_PATH")
# The toolchain whose version kbuild records in .config (CC_VERSION_TEXT,
# LD_VERSION, PAHOLE_VERSION) and rebuilds for (the cross compiler's too,
# for another architecture's kernel).
TOOLS = ("gcc", "ld", "pahole")
# The outputs, the boot image of the ARCH build-kernel.sh exports
# (policy/arches; none: the host's).
IMAGES = {"": "arch/x86/boot/bzImage", "arm64": "arch/arm64/boot/Image"}
OUTPUTS = ("vmlinux", ".config")


def file_state(path):
    """sha256, size and mtime of a file, or "missing"."""
    try:
        st = os.stat(path)
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return "missing"
    return "%s %d %d" % (digest, st.st_size, st.st_mtime_ns)


def stat_state(path):
    """size and mtime of a (large) file, or "missing"."""
    try:
        st = os.stat(path)
    except OSError:
        return "missing"
    return "%d %d" % (st.st_size, st.st_mtime_ns)


def git(src, *args):
    # --no-optional-locks: a check never rewrites the tree's index (another
    # build may be reading the tree).
    p = subprocess.run(["git", "--no-optional-locks", "-C", src] + list(args),
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return None
    return p.stdout


def tree_state(src):
    """(lines, why it is never up to date or None)."""
    head = git(src, "rev-parse", "HEAD")
    if head is None:
        return ["tree %s not a git tree" % src], "%s is not a git tree" % src
    status = git(src, "status", "--porcelain", "--untracked-files=normal")
    if status is None:
        return ["tree %s status failed" % src], "git status failed in %s" % src
    lines = ["tree %s %s" % (src, head.strip())]
    if status.strip():
        digest = hashlib.sha256(status.encode()).hexdigest()
        lines.append("tree-changes %s" % digest)
        first = status.splitlines()[0]
        return lines, "%s has uncommitted changes (%s ...)" % (src, first.strip())
    return lines, None


def inputs(src, obj, fragments):
    """(the inputs' lines, why they can never be up to date or None)."""
    lines, never = tree_state(src)
    lines.append("obj %s" % os.path.abspath(obj))
    for frag in fragments:
        if frag == "@debian":
            config = os.environ.get("DEBIAN_CONFIG", "")
            lines.append("fragment @debian %s %s" % (config, file_state(config)))
            for name in DEBIAN_INPUTS:
                lines.append("debian %s %s" % (os.path.basename(name),
                                               file_state(os.path.join(TOP, name))))
        else:
            lines.append("fragment %s %s" % (frag, file_state(os.path.join(FRAGMENTS, frag))))
    for name in SCRIPTS:
        lines.append("script %s %s" % (os.path.basename(name),
                                           file_state(os.path.join(TOP, name))))
    cross = os.environ.get("CROSS_COMPILE", "")
    for tool in TOOLS + ((cross + "gcc", cross + "ld") if cross else ()):
        try:
            out = subprocess.run([tool, "--version"], capture_output=True, text=True,
                                 timeout=60).stdout.splitlines()[:1]
        except (OSError, subprocess.TimeoutExpired):
            out = []
        lines.append("tool %s %s" % (tool, out[0] if out else "?"))
    for var in KBUILD_ENV:
        if var in os.environ:
            lines.append("env %s=%s" % (var, os.environ[var]))
    return lines, never


def outputs(obj):
    image = IMAGES.get(os.environ.get("ARCH", ""), IMAGES[""])
    return ["output %s %s" % (o, stat_state(os.path.join(obj, o))) for o in (image,) + OUTPUTS]


def check(stamp, src, obj, fragments):
    """None if up to date, else what changed (and the inputs as they are
    now written to stamp.inputs)."""
    now, never = inputs(src, obj, fragments)
    why = compare(stamp, now, never, obj)
    if why:
        with open(stamp + ".inputs", "w", encoding="utf-8") as f:
            f.write("\n".join(now) + "\n")
    return why


def compare(stamp, now, never, obj):
    try:
        with open(stamp, encoding="utf-8") as f:
            old = f.read().splitlines()
    except OSError:
        return "no stamp %s" % stamp
    if never:
        return never
    now = now + outputs(obj)
    if any(line.endswith(" missing") for line in now if line.startswith("output ")):
        return "an output is missing"
    if old == now:
        return None
    changed = [line for line in now if line not in old] + \
        ["no longer: " + line for line in old if line not in now]
    return "changed since the last build: " + "; ".join(c[:100] for c in changed[:3])


def main(argv):
    if len(argv) >= 3 and argv[0] == "inputs":
        lines, _ = inputs(argv[1], argv[2], argv[3:])
        print("\n".join(lines))
        return 0
    if len(argv) == 3 and argv[0] == "seal":
        with open(argv[1], encoding="utf-8") as f:
            lines = f.read().splitlines()
        print("\n".join(lines + outputs(argv[2])))
        return 0
    if len(argv) >= 4 and argv[0] == "check":
        why = check(argv[1], argv[2], argv[3], argv[4:])
        if why:
            print(why)
            return 1
        return 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
