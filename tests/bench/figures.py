"""A bench run's figures: every boot's logs of every configuration read
(boot.py), and their ratios to the "vanilla" configuration.

    collect(bench_dir, configs)   fills each configuration of policy/bench
                                  (tests/harness/policy.py read_bench) with its
                                  figures and errors; the workloads measured
    ratios(configs, workloads)    {config: {workload: ratios to vanilla}}
    wipe_figures(ch, accel)       a wipe boot's rounds and their medians
    host_memset(path)             the host's memset of the run (memset-bw)

Python 3 standard library only.
"""

import os
import re
import statistics

from bench.boot import micro_problems, parse_boot
from bench.channel import PROCESS_WORKLOADS, WIPE_FIGURES, channel_path


def read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return None


def collect(bench_dir, configs):
    """Parse every log of every configuration."""
    workloads = []
    for c in configs:
        d = os.path.join(bench_dir, c["name"])
        c["errors"] = []
        err = read_text(os.path.join(d, "errors"))
        if err:
            c["errors"] += err.splitlines()
        c["cmdline"] = {m: read_text(os.path.join(d, m + ".cmdline"))
                        for m in ("icount", "wall-1")}
        c["kernel_image"] = read_text(os.path.join(d, "kernel"))
        c["icount"] = {}
        c["icount_reps"] = {}
        c["icount_scale"] = None
        c["micro"] = {}
        c["policy_reported"] = None
        c["tsc_mhz"] = None
        c["scale"] = None
        ic_log = os.path.join(d, "icount.log")
        if os.path.exists(ic_log) or os.path.exists(channel_path(ic_log)):
            con, ch, probs = parse_boot(ic_log)
            c["errors"] += ["icount: " + p for p in probs]
            if ch is not None:
                # one figure per workload: the mean over the repetitions
                c["icount_reps"] = {n: ns for n, ns in ch["ns"].items()
                                    if n not in ch["failed"]}
                c["icount"] = {n: statistics.mean(v) for n, v in c["icount_reps"].items()}
                c["icount_scale"] = ch["plan"]["scale"] if ch["plan"] else None
            if con is not None:
                c["policy_reported"] = con["policy"]
                c["tsc_mhz"] = con["tsc_mhz"]
        # the microbenchmarks have a boot of their own (patched kernels)
        micro_log = os.path.join(d, "micro.log")
        if os.path.exists(micro_log):
            con, probs = micro_problems(micro_log)
            c["errors"] += ["micro: " + p for p in probs]
            if con is not None:
                c["micro"] = con["micro"]
        c["wall"] = {}
        c["wall_guest_ns"] = {}
        runs = sorted((f for f in os.listdir(d) if re.match(r"wall-\d+\.log$", f)),
                      key=lambda f: int(re.findall(r"\d+", f)[0])) \
            if os.path.isdir(d) else []
        for f in runs:
            con, ch, probs = parse_boot(os.path.join(d, f))
            c["errors"] += ["%s: %s" % (f[:-4], p) for p in probs]
            if con is not None and c["policy_reported"] is None:
                c["policy_reported"] = con["policy"]
            if ch is None:
                continue
            if c["scale"] is None and ch["plan"]:
                c["scale"] = ch["plan"]["scale"]
            for n in ch["ns"]:
                if n in ch["failed"]:
                    continue
                c["wall"].setdefault(n, []).append(statistics.mean(ch["host_s"][n]))
                c["wall_guest_ns"].setdefault(n, []).append(statistics.mean(ch["ns"][n]))
        # the wipe of free memory has a boot of its own (policy/bench-wipe)
        c["wipe"] = None
        wipe_log = os.path.join(d, "wipe.log")
        if os.path.exists(wipe_log) or os.path.exists(channel_path(wipe_log)):
            con, ch, probs = parse_boot(wipe_log, wipe=True)
            c["errors"] += ["wipe: " + p for p in probs]
            if ch is not None:
                c["wipe"] = wipe_figures(ch, read_text(os.path.join(d, "wipe.accel")),
                                         con["clocksource"] if con else None)
        for n in list(c["icount"]) + list(c["wall"]):
            if n not in workloads:
                workloads.append(n)
    order = {n: i for i, n in enumerate(PROCESS_WORKLOADS)}
    workloads.sort(key=lambda n: order.get(n, len(order)))
    return workloads


def ratios(configs, workloads, base_name="vanilla"):
    base = next((c for c in configs if c["name"] == base_name), None)
    out = {}
    for c in configs:
        row = {}
        for w in workloads:
            cell = {}
            if base and w in c["icount"] and base["icount"].get(w):
                b = base["icount"][w]
                cell["icount"] = c["icount"][w] / b
                reps = c["icount_reps"][w]
                cell["icount_min"] = min(reps) / b
                cell["icount_max"] = max(reps) / b
            if base and c["wall"].get(w) and base["wall"].get(w):
                bmed = statistics.median(base["wall"][w])
                vals = c["wall"][w]
                if bmed > 0:
                    cell["wall_median"] = statistics.median(vals) / bmed
                    cell["wall_min"] = min(vals) / bmed
                    cell["wall_max"] = max(vals) / bmed
            row[w] = cell
        out[c["name"]] = row
    return out



def wipe_figures(ch, accel=None, clock=None):
    """A wipe boot's figures from its channel: one round per wipe whose end
    line carried every figure, each with the dirty step before it (the
    guest's own memset of what the wipe then cleared); the medians over
    the rounds.  bytes and ns are the kernel's (scrub_free_bytes and
    scrub_free_ns); host_s is the host's time between the step's start and
    end lines.  gbps (GB = 10^9 bytes) is bytes over host_s, as the wall
    runs are timed by the host: without icount the guest clock is only as
    good as the TSC calibration of its boot, and where that fails on a
    busy host the kernel counts in jiffies (clock says which).  kernel_gbps
    is bytes over the kernel's ns, beside it.  None if no round is whole."""
    def steps(name):
        figs, ns = ch["figures"].get(name, []), ch["ns"].get(name, [])
        if len(figs) != len(ns) or not all(k in f for f in figs for k in WIPE_FIGURES[name]):
            return []           # misaligned or partial: wipe_problems() names it
        return [dict(f, ns=n, host_s=h) for f, n, h in zip(figs, ns, ch["host_s"].get(name, []))]
    wipes, dirties = steps("wipe"), steps("dirty")
    rounds = []
    for i, w in enumerate(wipes):
        r = dict(w)
        if i < len(dirties):
            r["dirty_bytes"], r["dirty_ns"] = dirties[i]["bytes"], dirties[i]["ns"]
        rounds.append(r)
    if not rounds:
        return None
    gbps = [r["bytes"] / r["host_s"] / 1e9 for r in rounds if r["host_s"] > 0]
    kernel_gbps = [r["bytes"] / r["ns"] for r in rounds if r["ns"] > 0]
    memset = [r["dirty_bytes"] / r["dirty_ns"] for r in rounds if r.get("dirty_ns")]
    out = {"mem_mib": (ch["plan"] or {}).get("wipe_mib"), "accel": accel, "clock": clock,
           "rounds": rounds,
           "bytes": statistics.median(r["bytes"] for r in rounds),
           "ns": statistics.median(r["ns"] for r in rounds),
           "host_s": statistics.median(r["host_s"] for r in rounds),
           "gbps": statistics.median(gbps) if gbps else None,
           "gbps_min": min(gbps) if gbps else None,
           "gbps_max": max(gbps) if gbps else None,
           "kernel_gbps": statistics.median(kernel_gbps) if kernel_gbps else None,
           "guest_memset_gbps": statistics.median(memset) if memset else None}
    for k in ("pages", "objects", "skipped"):
        out[k] = statistics.median(r[k] for r in rounds)
    return out


def host_memset(path):
    """The host's memset of the run (tests/uml/memset-bw.c's line "SIZE
    <bytes> libc <ns> stosb <ns>", median of its rounds): {"bytes",
    "libc_ns", "stosb_ns", "libc_gbps", "stosb_gbps"}, or None."""
    text = read_text(path)
    for line in (text or "").splitlines():
        f = line.split()
        if len(f) == 6 and f[0] == "SIZE" and f[2] == "libc" and f[4] == "stosb":
            try:
                size, libc, stosb = int(f[1]), float(f[3]), float(f[5])
            except ValueError:
                return None
            if libc <= 0 or stosb <= 0:
                return None
            return {"bytes": size, "libc_ns": libc, "stosb_ns": stosb,
                    "libc_gbps": size / libc, "stosb_gbps": size / stosb}
    return None
