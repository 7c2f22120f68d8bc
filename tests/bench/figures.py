"""A bench run's figures: every boot's logs of every configuration read
(boot.py), and their ratios to the "vanilla" configuration.

    collect(bench_dir, configs)   fills each configuration of policy/bench
                                  (tests/harness/policy.py read_bench) with its
                                  figures and errors; the workloads measured
    ratios(configs, workloads)    {config: {workload: ratios to vanilla}}

Python 3 standard library only.
"""

import os
import re
import statistics

from bench.boot import micro_problems, parse_boot
from bench.channel import PROCESS_WORKLOADS, channel_path


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

