#!/usr/bin/python3
"""Plot make bench-uml's results.json: ns per alloc/free pair per policy
(median, whiskers the quartiles of the rounds) beside the floor of the most
thorough policy, for the kmalloc sizes and the page orders.

    plot.py RESULTS_JSON OUT.svg

Run by Debian's /usr/bin/python3 because matplotlib is Debian's
python3-matplotlib (make bench-uml installs it when missing), which a
python3 elsewhere on PATH (pyenv, a venv) does not see.
"""

import json
import re
import sys

import matplotlib

matplotlib.use("Agg")  # no display: write the file only
import matplotlib.pyplot as plt  # noqa: E402


def main(src, out):
    with open(src, encoding="utf-8") as f:
        doc = json.load(f)
    table, configs = doc["table"], [c["name"] for c in doc["configs"]]
    groups = [("kmalloc(N)/kfree(), N bytes",
               [b for b in table if re.fullmatch(r"kmalloc-\d+", b)],
               lambda b: b.split("-")[1]),
              ("alloc_pages(order)/__free_pages()",
               [b for b in table if re.fullmatch(r"page-o\d(-zero)?", b)],
               lambda b: b[len("page-"):])]
    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    for ax, (title, benches, label) in zip(axes, groups):
        xs = range(len(benches))
        for n in configs:
            med = [table[b].get(n, {}).get("median") for b in benches]
            # Quartiles, not min–max: one preemption of UML's host
            # process makes a max ten times the median (the table has it).
            lo = [m - (table[b][n]["q1"] or m) if m is not None else 0
                  for b, m in zip(benches, med)]
            hi = [(table[b][n]["q3"] or m) - m if m is not None else 0
                  for b, m in zip(benches, med)]
            ax.errorbar(xs, med, yerr=[lo, hi], marker="o", ms=3, capsize=2, label=n)
        # The floor of the most thorough policy (the last one that clears
        # the most bytes): what clearing alone costs at memset speed.
        full = max(configs, key=lambda n: sum(table[b].get(n, {}).get("cleared_bytes") or 0
                                              for b in benches))
        off = [table[b].get("off", {}).get("median") or 0 for b in benches]
        ax.plot(xs, [o + (table[b].get(full, {}).get("floor_ns") or 0)
                     for o, b in zip(off, benches)],
                "k--", lw=1, label=f"off + floor of {full} (memset)")
        ax.set_xticks(list(xs), [label(b) for b in benches], rotation=45)
        ax.set_yscale("log")
        ax.set_ylabel("ns per alloc/free pair (UML, host clock)")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    meta = doc["meta"]
    fig.suptitle(f"sanitize_mem under User-Mode Linux on {meta['cpu']}: median of "
                 f"{meta['repeat']} rounds in one boot, whiskers: quartiles", fontsize=10)
    fig.tight_layout()
    fig.savefig(out)
    print(f"bench-uml: wrote {out}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
