"""One bench boot checked: its console log (console.py) and its bench
channel (channel.py) together, as "report.py check" and the report read
them.

    parse_boot(log)       a boot of the process workloads: (console,
                          channel, problems)
    parse_boot(log, wipe=True)
                          a boot that dirtied and wiped free memory
    micro_problems(log)   a boot of the in-kernel microbenchmarks only:
                          (console, problems)

Python 3 standard library only.
"""

import os

from bench.channel import (PROCESS_WORKLOADS, WIPE_STEPS, channel_path, parse_channel,
                           wipe_problems, workload_problems)
from bench.console import parse_console


def parse_boot(log, wipe=False):
    """A boot's console log and its channel: (console, channel, problems);
    with wipe, a boot of the wipe's steps (bench.wipe=) instead of the
    process workloads."""
    expected = WIPE_STEPS if wipe else PROCESS_WORKLOADS
    con = parse_console(log)
    ch = parse_channel(channel_path(log))
    out = []
    if con is None:
        out.append("no console log")
    elif con["panic"]:
        out.append("the kernel panicked or oopsed")
    if ch is None:
        out.append("no bench channel file %s" % os.path.basename(channel_path(log)))
    elif not ch["problems"] and not ch["plan"] and not ch["ns"] and not ch["done"]:
        out.append("nothing on the bench channel, no figure for any workload (%s): the "
                   "bench program never started, or could not open its serial port" %
                   ", ".join(expected))
    else:
        out += ch["problems"] + workload_problems(ch, expected)
        if wipe:
            out += wipe_problems(ch)
    if con is not None and not con["end"]:
        out.append("the guest did not reach 'HARNESS: END'")
    return con, ch, out


def micro_problems(log):
    """What is wrong with a boot that ran only the in-kernel
    microbenchmarks (mm/sanitize_bench.c, sanitize_bench.run=1): every
    benchmark it announced must have reported, and the guest must have
    ended."""
    con = parse_console(log)
    if con is None:
        return None, ["no console log"]
    out = []
    if con["panic"]:
        out.append("the kernel panicked or oopsed")
    if con["micro_planned"] is None:
        out.append("the kernel never started its microbenchmarks (no 'sanitize_bench: "
                   "start' line: CONFIG_SANITIZE_MEM_BENCH not set?)")
    else:
        for name, why in sorted(con["micro_failed"].items()):
            out.append("microbenchmark %s failed: %s" % (name, why))
        if con["micro_done"] is None:
            out.append("the microbenchmarks never finished (no 'sanitize_bench: done' line)")
        elif len(con["micro"]) != con["micro_planned"]:
            out.append("%d of the %d microbenchmarks reported" %
                       (len(con["micro"]), con["micro_planned"]))
    if not con["end"]:
        out.append("the guest did not reach 'HARNESS: END'")
    return con, out

