#!/usr/bin/env python3
"""The sanitize_mem benchmarks (issue 6): the host side's command line.

    report.py stamp [--timeout S] FIFO OUT
                                 read the bench channel from FIFO until
                                 QEMU closes it, and write each line to OUT
                                 as "<host s>\t<line>", stamped as it arrives
    report.py check [--micro | --wipe] LOG
                                 did this boot (console LOG, channel LOG's
                                 ".clock" twin) report every workload (or
                                 wipe step) it planned, on an intact
                                 channel?  exit 1 and say what is wrong
    report.py report --dir D --policy policy/bench --out PREFIX
                     [--targets policy/bench-targets] [--wipe policy/bench-wipe]
                     [--vmlinux NAME=PATH ...]
                                 write PREFIX.md and PREFIX.json (plot.py
                                 draws PREFIX.svg from the JSON)

Each job has its own module beside this one:

  channel.py   the bench channel: the FIFO's reader, its lines checked
  console.py   a boot's console log: policy, microbenchmarks, panic, end
  boot.py      one boot checked: console and channel together ("check")
  figures.py   a run's figures per configuration, their ratios to vanilla
  targets.py   the targets of policy/bench-targets: met, missed, worst
  sizes.py     vmlinux and fast path sizes
  tables.py    bench.md

Every figure comes from the bench channel: the guest's bench program
(tests/guest/bench.c) writes each event, numbered and with a CRC-32, to a
second serial port that nothing else writes to; run-bench.sh gives QEMU a
FIFO as its host end and runs "stamp" on it.  Two kinds of boot of each
configuration (run-bench.sh):

  icount   QEMU -icount shift=0,sleep=off: the guest clock counts executed
           instructions, so the ns= of each "event=end" line is the same on
           every run whatever the host does.  One run.
  wall     ordinary TCG, R runs.  The guest clock is not good to 0.1% here,
           so the workload is timed by the host, between the arrival of its
           "event=start" and "event=end" lines.  Median, min and max over
           the runs.
  wipe     (the configurations of policy/bench-wipe) ordinary TCG, a bigger
           guest that dirties its free memory and wipes it, a few rounds:
           the kernel's own bytes and ns of each wipe, set beside the
           host's memset of as many bytes (the run's host-memset file).

A line that is missing (seq gap, no "event=done" at the end), damaged (bad
crc, not a channel line) or a workload without a start/end pair is an
error naming the workload; the report lists it, never a wrong figure.  The
console gives only what the kernel says: the policy it reported, the
in-kernel microbenchmarks, a panic, /init's end marker.

Every figure is reported as a ratio to the "vanilla" configuration of the
same run.  Targets are computed and reported, never asserted.

Python 3 standard library only.
"""

import argparse
import datetime
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
from harness.policy import BENCH_TARGETS, BENCH_WIPE, read_bench, read_bench_targets
from bench.boot import micro_problems, parse_boot
from bench.channel import stamp
from bench.figures import collect, host_memset, ratios, read_text
from bench.sizes import vmlinux_sizes
from bench.tables import write_md
from bench import targets


def cmd_stamp(args):
    return stamp(args.fifo, args.out, args.timeout)


def cmd_check(args):
    if args.micro:
        _, probs = micro_problems(args.log)
    else:
        _, _, probs = parse_boot(args.log, wipe=args.wipe)
    for p in probs:
        print(p)
    return 1 if probs else 0


def cmd_report(args):
    # Only the configurations this run booted (--smoke boots two).
    configs = [c for c in read_bench(args.policy)
               if os.path.isdir(os.path.join(args.dir, c["name"]))]
    specs = read_bench_targets(args.targets, args.policy, wipe=args.wipe)
    workloads = collect(args.dir, configs)
    rat = ratios(configs, workloads)
    tgts = targets.evaluate(configs, workloads, specs)
    sizes = vmlinux_sizes(args.vmlinux or [])
    scale = next((c["scale"] for c in configs if c.get("scale")), None)
    iscale = next((c["icount_scale"] for c in configs if c.get("icount_scale")), None)
    ireps = max((len(v) for c in configs for v in c["icount_reps"].values()), default=0)
    meta = {
        "icount_scale": iscale,
        "icount_reps": ireps,
        "generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "dir": os.path.relpath(args.dir),
        "scale": scale,
        "wall_runs": max((len(v) for c in configs for v in c["wall"].values()), default=0),
        "svg": args.out + ".svg",
        "qemu": read_text(os.path.join(args.dir, "qemu-version")),
        "host": read_text(os.path.join(args.dir, "host")),
        "host_memset": host_memset(os.path.join(args.dir, "host-memset")),
    }
    # A wipe's GB/s means little without the host's beside it.
    if meta["host_memset"] is None and any(c["wipe"] for c in configs):
        why = read_text(os.path.join(args.dir, "host-memset.err"))
        for c in configs:
            if c["wipe"]:
                c["errors"].append("wipe: no host memset figure to set it beside%s" % (
                    " (%s)" % why if why else ""))
    write_md(args.out + ".md", meta, configs, workloads, rat, tgts, sizes)
    doc = {
        "meta": meta,
        "workloads": workloads,
        "configs": [{k: c.get(k) for k in (
            "name", "kernel", "args", "cmdline", "kernel_image", "policy_reported",
            "tsc_mhz", "icount_scale", "scale", "errors", "icount", "icount_reps", "micro",
            "wall", "wall_guest_ns", "wipe")}
            for c in configs],
        "units": {"icount": "guest ns under -icount shift=0 (1 ns = 1 instruction), "
                            "mean of icount_reps",
                  "wall": "host seconds between the arrival of a workload's start "
                          "and end lines on the bench channel",
                  "wall_guest_ns": "the ns= of the channel's end lines in wall runs: "
                                   "guest CLOCK_MONOTONIC, not good to 0.1% without icount",
                  "wipe": "per round: the kernel's scrub_free_bytes, _pages, _objects, "
                          "_skipped and scrub_free_ns (guest ns, no icount), host_s between "
                          "the wipe step's start and end lines, dirty_bytes/dirty_ns the "
                          "guest's memset before it; gbps = bytes / ns (10^9 bytes/s), "
                          "medians over the rounds",
                  "host_memset": "tests/uml/memset-bw.c on the host: ns per memset of "
                                 "bytes, median of its rounds (glibc, rep stosb)"},
        "ratios": rat,
        "targets": tgts,
        "vmlinux": sizes,
    }
    with open(args.out + ".json", "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    nerr = sum(len(c["errors"]) for c in configs)
    print("bench: wrote %s.md, %s.json%s" % (
        args.out, args.out, (" (%d errors, see %s.md)" % (nerr, args.out)) if nerr else ""))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("stamp")
    p.add_argument("--timeout", type=int, default=1000,
                   help="seconds the whole read may take (default 1000)")
    p.add_argument("fifo", help="the host end of the guest's bench channel")
    p.add_argument("out", help="the stamped channel (a boot's .clock file)")
    p = sub.add_parser("check")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--micro", action="store_true",
                     help="LOG is a boot that ran only the in-kernel microbenchmarks")
    how.add_argument("--wipe", action="store_true",
                     help="LOG is a boot that dirtied and wiped free memory (bench.wipe=)")
    p.add_argument("log", help="a boot's console log (its channel: LOG's .clock twin)")
    p = sub.add_parser("report")
    p.add_argument("--dir", required=True, help="the bench logs (build/results/bench)")
    p.add_argument("--policy", required=True, help="the configurations (policy/bench)")
    p.add_argument("--targets", default=BENCH_TARGETS,
                   help="the targets (default policy/bench-targets)")
    p.add_argument("--wipe", default=BENCH_WIPE,
                   help="the configurations with a wipe boot (default policy/bench-wipe)")
    p.add_argument("--out", required=True, help="output prefix (build/results/bench)")
    p.add_argument("--vmlinux", action="append", metavar="NAME=PATH")
    args = ap.parse_args()
    return {"stamp": cmd_stamp, "check": cmd_check, "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
