#!/usr/bin/env python3
"""The guest's channel list, generated from the one list of channels.

    channels-h.py [tests/scan/channels] > channels.h
    channels-h.py --real tests/scan/channels-real > channels-real.h

tests/scan/channels names every channel of the attacker's-view test; the
host scanner reads it at run time and tests/harness/policy.py checks
policy/lifetime against it.  The guest program (tests/guest/lifetime/)
is static C in the initramfs, so it takes the same list at build time,
as this header: one X(id, "name") per channel, in the file's order, id
being the name with "-" and "." as "_" (the program's function for a
channel is ch_<id>, declared from this list in lifetime.h and defined in
one of its ch-*.c files: a channel listed without one does not link).
With --real the macros are CHANNEL_LIST_REAL and NCHANNELS_REAL: the
list of the channels driven by real Debian programs (make lifetime-real),
compiled into the same program beside the first.
Written by make into build/guest-gen/, never committed.
"""

import os
import re
import sys

from harness import policy


def header(path, suffix=""):
    ids = {}
    for name, lineno in policy.read_channels(path).items():
        ident = re.sub(r"[-.]", "_", name)
        where = f"{policy.shown(path)}:{lineno}"
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", ident):
            raise policy.PolicyError(f"{where}: channel {name!r} cannot be a C name")
        if ident in ids:
            raise policy.PolicyError(f"{where}: channel {name!r} is {ids[ident]!r} in C")
        ids[ident] = name
    out = [f"/* Generated from {policy.shown(path)} by tests/guest/channels-h.py. */",
           f"#define CHANNEL_LIST{suffix}(X) \\"]
    out += [f'\tX({ident}, "{name}") \\' for ident, name in ids.items()]
    out += ["", f"#define NCHANNELS{suffix} {len(ids)}", ""]
    return "\n".join(out)


def main(argv):
    args = argv[1:]
    suffix = ""
    if args[:1] == ["--real"]:
        args, suffix = args[1:], "_REAL"
    path = args[0] if args else policy.CHANNELS
    sys.stdout.write(header(path, suffix))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
