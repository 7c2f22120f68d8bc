#!/usr/bin/env python3
"""The bench plot: overhead against vanilla per workload and configuration.

    plot.py BENCH_JSON SVG

Reads what report.py report wrote (PREFIX.json: its "workloads",
"configs" and "ratios") and draws two panels with Debian's
python3-matplotlib: the icount figures (instructions: the mean of the
repetitions, the error bar from their min to their max) and the wall
clock (median of the runs, the error bar from min to max), one bar per
configuration, in percent of vanilla, with a legend.  A figure the
report left out (an error on the channel) is a missing bar, never a 0.
Run by run-bench.sh after the report and by make docs-results.
"""

import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")  # no display: files only
import matplotlib.pyplot as plt  # noqa: E402

# Colour-blind safe (Paul Tol's bright scheme), as the SVG had.
PALETTE = ["#4477aa", "#66ccee", "#228833", "#ccbb44", "#ee6677", "#aa3377",
           "#bbbbbb", "#000000"]
# (ratio key, low key, high key, panel title) per panel.
PANELS = (
    ("icount", "icount_min", "icount_max",
     "icount (instructions): mean, error bar min–max of the repetitions"),
    ("wall_median", "wall_min", "wall_max",
     "wall clock: median, error bar min–max of the runs"),
)


def series(doc, key, lo_key, hi_key):
    """{config: [(workload index, overhead %, below %, above %)]} for the
    configurations other than vanilla, the base of every ratio."""
    out = {}
    for c in doc["configs"]:
        name = c["name"]
        if name == "vanilla":
            continue
        bars = []
        for i, w in enumerate(doc["workloads"]):
            r = doc["ratios"].get(name, {}).get(w, {})
            if key not in r:
                continue
            value = (r[key] - 1) * 100
            bars.append((i, value, value - (r[lo_key] - 1) * 100,
                         (r[hi_key] - 1) * 100 - value))
        out[name] = bars
    return out


def plot(doc, path):
    workloads = doc["workloads"]
    names = [c["name"] for c in doc["configs"] if c["name"] != "vanilla"]
    fig, axes = plt.subplots(len(PANELS), 1, figsize=(10, 3.4 * len(PANELS)),
                             sharex=True, constrained_layout=True)
    width = 0.8 / max(1, len(names))
    for ax, (key, lo_key, hi_key, title) in zip(axes, PANELS):
        data = series(doc, key, lo_key, hi_key)
        for j, name in enumerate(names):
            bars = data.get(name, [])
            if not bars:
                continue
            x = [i - 0.4 + width * (j + 0.5) for i, _, _, _ in bars]
            ax.bar(x, [v for _, v, _, _ in bars], width * 0.9,
                   yerr=[[lo for _, _, lo, _ in bars], [hi for _, _, _, hi in bars]],
                   color=PALETTE[j % len(PALETTE)], ecolor="#333333", capsize=2,
                   label=name)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_title(title, fontsize=10, loc="left")
        ax.set_ylabel("overhead vs vanilla, %")
        ax.grid(axis="y", color="#dddddd")
        ax.set_axisbelow(True)
    axes[-1].set_xticks(range(len(workloads)), workloads)
    axes[-1].set_xlabel("workload")
    axes[0].legend(ncol=min(4, max(1, len(names))), fontsize=8, loc="upper left",
                   title="configuration", title_fontsize=8)
    # No date in the file: the same figures give the same SVG.
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("bench_json", help="report.py report's PREFIX.json")
    p.add_argument("svg", help="the plot to write")
    args = p.parse_args(argv)
    with open(args.bench_json, encoding="utf-8") as f:
        doc = json.load(f)
    matplotlib.rcParams["svg.hashsalt"] = "sanitize_mem"
    # Text as text, not outlines: smaller, and searchable in the SVG.
    matplotlib.rcParams["svg.fonttype"] = "none"
    tmp = args.svg + ".tmp"
    plot(doc, tmp)
    os.replace(tmp, args.svg)
    print(f"bench: plot in {args.svg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
