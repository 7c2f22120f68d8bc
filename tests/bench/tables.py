"""bench.md: the report's tables for people, from what figures.py,
targets.py and sizes.py computed (bench.json holds the same figures for
machines, plot.py draws them).

Python 3 standard library only.
"""

import os
import statistics

from bench.sizes import SIZED_SYMBOLS


def fmt_ratio(r):
    return "–" if r is None else "%.4f" % r


def fmt_ns(ns):
    return "%.3f" % (ns / 1e9)


def fmt_gbps(x):
    return "–" if x is None else "%.3f" % x


def wipe_section(meta, configs):
    """The wipe of free memory (issue 35): one row per configuration with a
    wipe boot, its GB/s beside the guest's own memset and the host's."""
    wiped = [c for c in configs if c.get("wipe")]
    if not wiped:
        return []
    host = meta.get("host_memset")
    mem = sorted({c["wipe"]["mem_mib"] for c in wiped if c["wipe"]["mem_mib"]})
    accel = sorted({c["wipe"]["accel"] or "tcg" for c in wiped})
    rounds = max(len(c["wipe"]["rounds"]) for c in wiped)
    L = ["## The wipe of free memory (wall clock)", ""]
    L.append(
        "One more boot per configuration of `policy/bench-wipe`, without icount, in a "
        "guest of %s MiB (QEMU accelerator: %s): %d round(s) of dirtying most of its "
        "free memory (the bench program fills a mapping with a pattern and unmaps it) "
        "and writing 1 to `/sys/kernel/mm/sanitize/scrub_free`.  Bytes are the kernel's "
        "(`scrub_free_bytes`); the time is the host's, between the wipe step's lines on "
        "the bench channel (it also covers reading the figures back, about a "
        "millisecond), [the kernel's own, `scrub_free_ns`]: without icount the guest "
        "clock is only as good as its boot's TSC calibration.  The median round; GB/s is "
        "10^9 bytes per second by the host's time, median [min–max] of the rounds.  The "
        "first round is the slowest, most likely because guest RAM is a host file and "
        "the first wipe is the first to write the pages nobody used since boot.  The "
        "host's memset is `tests/uml/memset-bw.c` on as many bytes, the median of its "
        "rounds, taken once before the first guest." % (
            "/".join(map(str, mem)) or "?", "/".join(accel), rounds))
    if "tcg" in accel:
        L.append("")
        L.append(
            "Under TCG (no KVM) every store of the guest is emulated, so the guest's "
            "GB/s are far below the host's, as expected: read the ratio to the host's "
            "memset, the share of this machine's bandwidth the wipe gets under this "
            "emulator, not the GB/s.  The guest memset column is the bench program's "
            "own fill (glibc's memset, vector stores at that size) in the same guest: TCG emulates "
            "vector stores more slowly than the `rep stos` of the kernel's memset, so "
            "the wipe may outrun it.")
    L.append("")
    L.append("Where free pages are zero already (`pages`, `init_on_free=1`) the wipe skips "
             "its page pass and clears the slab's free objects only: that row's GB/s is the "
             "cost of walking the caches, not a clearing speed.")
    L.append("")
    L.append("| configuration | wiped (MiB) | free pages / slab objects / pages skipped "
             "| time (s) [kernel's] | GB/s [min–max] | host memset GB/s | wipe / host memset "
             "| guest memset GB/s (guest clock) |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for c in wiped:
        w = c["wipe"]
        ratio_host = w["gbps"] / host["libc_gbps"] if w["gbps"] and host else None
        L.append("| %s | %.1f | %d / %d / %d | %.3f [%.3f] | %s [%s–%s] | %s | %s | %s |" % (
            c["name"], w["bytes"] / 2**20, w["pages"], w["objects"], w["skipped"],
            w["host_s"], w["ns"] / 1e9, fmt_gbps(w["gbps"]), fmt_gbps(w["gbps_min"]),
            fmt_gbps(w["gbps_max"]), fmt_gbps(host["libc_gbps"] if host else None),
            "–" if ratio_host is None else "%.4f" % ratio_host,
            fmt_gbps(w["guest_memset_gbps"])))
    L.append("")
    coarse = ["%s (%s)" % (c["name"], c["wipe"]["clock"]) for c in wiped
              if c["wipe"].get("clock") and not c["wipe"]["clock"].startswith("tsc")]
    if coarse:
        L.append("The guest clock was not the TSC in %s: its calibration failed on a busy "
                 "host, so the kernel's time and the guest memset count jiffies there; read "
                 "the host's time." % ", ".join(coarse))
        L.append("")
    if host:
        L.append("Host memset of %d MiB: %.2f GB/s (glibc), %.2f GB/s (`rep stosb`, what "
                 "the kernel's memset reduces to on x86 with ERMS)." % (
                     host["bytes"] // 2**20, host["libc_gbps"], host["stosb_gbps"]))
    else:
        L.append("Host memset: not measured in this run (see the errors above).")
    L.append("")
    return L


def write_md(path, meta, configs, workloads, rat, tgts, sizes):
    L = []
    L.append("# sanitize_mem benchmarks")
    L.append("")
    L.append("Generated %s by `tests/bench/report.py` from `%s`." % (
        meta["generated"], meta["dir"]))
    L.append("icount: one boot per configuration (`-icount shift=0,sleep=off`, "
             "guest ns = instructions); wall: %s boot(s) per configuration at "
             "scale %s, each workload timed by the host.  QEMU %s; host: %s." % (
                 meta.get("wall_runs", "?"), meta.get("scale", "?"),
                 meta.get("qemu") or "?", meta.get("host") or "?"))
    L.append("")
    L.append("Configurations (`policy/bench`):")
    L.append("")
    L.append("| name | kernel | args | policy the kernel reported |")
    L.append("|---|---|---|---|")
    for c in configs:
        L.append("| %s | %s | `%s` | %s |" % (
            c["name"], c["kernel"], c["args"] or "", c["policy_reported"] or "?"))
    L.append("")
    stale = [c["name"] for c in configs if c["tree"] == "patched"
             and c["policy_reported"] in (None, "none")]
    if stale:
        L.append("**Warning:** the patched kernel reported no sanitize_mem policy "
                 "for %s: it has no framework (yet), so those figures measure "
                 "unpatched code." % ", ".join(stale))
        L.append("")
    errs = [(c["name"], e) for c in configs for e in c["errors"]]
    if errs:
        L.append("**Errors** (their figures are missing or partial):")
        L.append("")
        for n, e in errs:
            L.append("- %s: %s" % (n, e))
        L.append("")

    names = [c["name"] for c in configs]
    L.append("## icount: ratio to vanilla (deterministic)")
    L.append("")
    L.append("Scale %s, %s repetition(s) of each workload in one boot.  Each cell: "
             "mean of the configuration's repetitions / mean of vanilla's, "
             "[fastest – slowest repetition / vanilla's mean]; the vanilla column "
             "is its mean in guest seconds (10^9 instructions) and its own spread.  "
             "A boot is exactly repeatable (same kernel, same command line, same "
             "count), but the messaging workloads are chaotic: any change to the "
             "kernel or its command line reshuffles how 20 processes interleave, "
             "so a spread of a few percent between repetitions is that, not noise "
             "of the host.  `sockpair` runs socket's kernel path in one process, "
             "without the scheduler: read its ratio for what a kernel change "
             "costs per message." % (meta.get("icount_scale", "?"), meta.get("icount_reps", "?")))
    L.append("")
    L.append("| workload | vanilla (s) | " + " | ".join(n for n in names if n != "vanilla") + " |")
    L.append("|---|---:|" + "---:|" * (len(names) - 1))
    base = next((c for c in configs if c["name"] == "vanilla"), None)
    for w in workloads:
        b = base["icount"].get(w) if base else None
        row = ["%s" % w, fmt_ns(b) if b else "–"]
        if b and len(base["icount_reps"][w]) > 1:
            row[1] += " [%.3f–%.3f]" % (rat["vanilla"][w]["icount_min"],
                                         rat["vanilla"][w]["icount_max"])
        for n in names:
            if n == "vanilla":
                continue
            cell = rat[n][w]
            txt = fmt_ratio(cell.get("icount"))
            if "icount" in cell and cell["icount_max"] > cell["icount_min"]:
                txt += " [%.3f–%.3f]" % (cell["icount_min"], cell["icount_max"])
            row.append(txt)
        L.append("| " + " | ".join(row) + " |")
    L.append("")
    L.append("## wall clock: median ratio to vanilla [min–max]")
    L.append("")
    L.append("Each cell: median of the configuration's runs / median of "
             "vanilla's runs, [fastest / vanilla median – slowest / vanilla median]. "
             "The host is shared: read these as a sanity check of the icount "
             "figures, not as a measurement to 0.3%.")
    L.append("")
    L.append("| workload | vanilla median (s) | " + " | ".join(n for n in names if n != "vanilla") + " |")
    L.append("|---|---:|" + "---:|" * (len(names) - 1))
    for w in workloads:
        bw = base["wall"].get(w) if base else None
        row = [w, ("%.3f [%.3f–%.3f]" % (statistics.median(bw), min(bw), max(bw))) if bw else "–"]
        for n in names:
            if n == "vanilla":
                continue
            cell = rat[n][w]
            if "wall_median" in cell:
                row.append("%.3f [%.3f–%.3f]" % (cell["wall_median"], cell["wall_min"],
                                                  cell["wall_max"]))
            else:
                row.append("–")
        L.append("| " + " | ".join(row) + " |")
    L.append("")
    micro = []
    for c in configs:
        for k in c.get("micro", {}):
            if k not in micro:
                micro.append(k)
    if micro:
        # The microbenchmarks are part of the series (mm/sanitize_bench.c),
        # so vanilla has none: the base is the patched kernel with every
        # policy off.
        mcfgs = [c for c in configs if c.get("micro")]
        mbase = next((c for c in mcfgs if c["name"] == "off"), None)
        L.append("## In-kernel microbenchmarks (icount, ns = instructions per operation)")
        L.append("")
        L.append("One boot per patched configuration that runs only "
                 "mm/sanitize_bench.c (`sanitize_bench.run=1`, no process workload). "
                 "Each cell: ns per alloc/free pair in the median batch of 32%s." %
                 (", and the ratio to `off`" if mbase else ""))
        L.append("")
        L.append("| benchmark | " + " | ".join(c["name"] for c in mcfgs) + " |")
        L.append("|---|" + "---:|" * len(mcfgs))
        bm = mbase.get("micro", {}) if mbase else {}
        for k in micro:
            row = [k]
            for c in mcfgs:
                v = c.get("micro", {}).get(k)
                if v is None:
                    row.append("–")
                elif c is not mbase and bm.get(k):
                    row.append("%d (%.3f)" % (v, v / bm[k]))
                else:
                    row.append("%d" % v)
            L.append("| " + " | ".join(row) + " |")
        L.append("")
    L += wipe_section(meta, configs)
    L.append("## Targets (computed from the figures above, not asserted)")
    L.append("")
    L.append("| target | result | worst | detail |")
    L.append("|---|---|---|---|")
    for t in tgts:
        result = {True: "**met**", False: "**missed**", None: "not measured"}[t["met"]]
        if t["met"] and t.get("over_before_rounding"):
            result = "**met at %d decimals**" % t["precision"]
        worst = "%s %.4f" % (t["worst"]["workload"], t["worst"]["ratio"]) if t.get("worst") else "–"
        detail = []
        if t.get("figures") and t["measure"] == "icount":
            detail.append(", ".join("%s %.4f" % (w, r) for w, r in t["figures"].items()))
        bound = "not below" if t.get("strict") else "over"
        if t.get("missed_on"):
            detail.append("%s %.*f on: %s" % (bound, t.get("precision", 3), t["limit"],
                                               ", ".join(t["missed_on"])))
        for w, why in t.get("reasons", {}).items():
            detail.append("%s: %s" % (w, why))
        if t.get("over_before_rounding"):
            detail.append("%s %.*f before rounding on: %s" % (
                bound, t["precision"], t["limit"], ", ".join(t["over_before_rounding"])))
        if t.get("note"):
            detail.append(t["note"])
        L.append("| %s | %s | %s | %s |" % (t["description"], result, worst, "; ".join(detail)))
    L.append("")
    L.append("## Kernel size")
    L.append("")
    if sizes:
        L.append("| vmlinux | text | data | bss |")
        L.append("|---|---:|---:|---:|")
        for n, e in sizes.items():
            if "text" in e:
                L.append("| %s | %d | %d | %d |" % (n, e["text"], e["data"], e["bss"]))
            else:
                L.append("| %s | %s | | |" % (n, e.get("error", "?")))
        # The base is the kernel of the "vanilla" configuration.
        base = next((c["kernel"] for c in configs if c["name"] == "vanilla"), None)
        if all("text" in e for e in sizes.values()) and base in sizes and len(sizes) > 1:
            for n, e in sizes.items():
                if n != base:
                    d = e["text"] - sizes[base]["text"]
                    L.append("")
                    L.append("%s text vs %s: %+d bytes (%+.3f%%)." % (
                        n, base, d, 100.0 * d / sizes[base]["text"]))
        syms = sorted({s for e in sizes.values() for s in e.get("fast_paths", {})},
                      key=SIZED_SYMBOLS.index)
        if syms:
            L.append("")
            L.append("Fast paths (symbol size in bytes, `nm -S`; inlined helpers "
                     "count in their caller):")
            L.append("")
            L.append("| symbol | " + " | ".join(sizes) + " |")
            L.append("|---|" + "---:|" * len(sizes))
            for s in syms:
                L.append("| %s | %s |" % (s, " | ".join(
                    str(e.get("fast_paths", {}).get(s, "–")) for e in sizes.values())))
    else:
        L.append("(no vmlinux given)")
    L.append("")
    L.append("Plot: `%s`." % os.path.basename(meta["svg"]))
    L.append("")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(L))

