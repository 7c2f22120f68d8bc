"""A bench boot's console log: what the kernel and /init say there (the
figures travel on the bench channel, tests/bench/channel.py): the policy
the kernel reported, the in-kernel microbenchmarks of mm/sanitize_bench.c,
the TSC and the clocksource, a panic, /init's end marker.

Python 3 standard library only.
"""

import re

MICRO_RE = re.compile(r"sanitize_bench: BENCH (\S+) (\d+) (\d+)")
MICRO_START_RE = re.compile(r"sanitize_bench: start: (\d+) benchmarks")
MICRO_DONE_RE = re.compile(r"sanitize_bench: done: (\d+) benchmarks(.*)$")
MICRO_FAILED_RE = re.compile(r"sanitize_bench: FAILED (\S+): (.*)$")
POLICY_RE = re.compile(r"^HARNESS: policy=(.*)$")
CLOCKSOURCE_RE = re.compile(r"clocksource: Switched to clocksource (\S+)")
TSC_RE = re.compile(r"tsc: (?:Detected|Refined TSC clocksource calibration:) ([\d.]+) MHz")


def parse_console(path):
    """What one boot's console says: the policy the kernel reported, the
    in-kernel microbenchmarks, the TSC, the clocksource it ended on, a
    panic, /init's end marker."""
    r = {"micro": {}, "policy": None, "end": False, "tsc_mhz": None, "panic": False,
         "clocksource": None,
         "micro_planned": None, "micro_done": None, "micro_failed": {}}
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        line = line.rstrip("\r")
        m = POLICY_RE.match(line)
        if m:
            r["policy"] = m.group(1).strip()
            continue
        if line.startswith("HARNESS: END"):
            r["end"] = True
            continue
        if "Kernel panic" in line or "BUG:" in line or "Oops" in line:
            r["panic"] = True
        m = MICRO_RE.search(line)
        if m:
            r["micro"][m.group(1)] = int(m.group(2))
            continue
        m = MICRO_START_RE.search(line)
        if m:
            r["micro_planned"] = int(m.group(1))
            continue
        m = MICRO_DONE_RE.search(line)
        if m:
            r["micro_done"] = int(m.group(1))
            continue
        m = MICRO_FAILED_RE.search(line)
        if m:
            r["micro_failed"][m.group(1)] = m.group(2)
            continue
        m = CLOCKSOURCE_RE.search(line)
        if m:
            r["clocksource"] = m.group(1)
            continue
        m = TSC_RE.search(line)
        if m:
            r["tsc_mhz"] = float(m.group(1))
    return r

