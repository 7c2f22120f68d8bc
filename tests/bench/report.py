#!/usr/bin/env python3
"""The sanitize_mem benchmarks (issue 6): host-side helpers and the report.

    report.py stamp [--timeout S] FIFO OUT
                                 read the bench channel from FIFO until
                                 QEMU closes it, and write each line to OUT
                                 as "<host s>\t<line>", stamped as it arrives
    report.py check LOG          did this boot (console LOG, channel LOG's
                                 ".clock" twin) report every workload it
                                 planned, on an intact channel?  exit 1 and
                                 say what is wrong
    report.py report --dir D --policy policy/bench --out PREFIX
                     [--vmlinux NAME=PATH ...]
                                 write PREFIX.md and PREFIX.json (plot.py
                                 draws PREFIX.svg from the JSON)

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
import re
import shutil
import signal
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from policy import read_kernels  # noqa: E402  (tests/policy.py)

# The kernels of policy/kernels: a configuration's tree is its kernel's.
KERNELS = read_kernels()
import time
import zlib

CHANNEL_RE = re.compile(r"^bench-clock: (.*) crc=([0-9a-f]{8})$")
MICRO_RE = re.compile(r"sanitize_bench: BENCH (\S+) (\d+) (\d+)")
MICRO_START_RE = re.compile(r"sanitize_bench: start: (\d+) benchmarks")
MICRO_DONE_RE = re.compile(r"sanitize_bench: done: (\d+) benchmarks(.*)$")
MICRO_FAILED_RE = re.compile(r"sanitize_bench: FAILED (\S+): (.*)$")
POLICY_RE = re.compile(r"^HARNESS: policy=(.*)$")
TSC_RE = re.compile(r"tsc: (?:Detected|Refined TSC clocksource calibration:) ([\d.]+) MHz")

# Process workloads, in the order bench.c runs them.
PROCESS_WORKLOADS = ["pipe", "socket", "sockpair", "forkexec", "tmpfs", "getppid", "readzero"]

# Free (and matching alloc) fast paths whose size is worth comparing.
FAST_PATHS = [
    "kfree", "kmem_cache_free", "kmem_cache_free_bulk", "__slab_free",
    "kmem_cache_alloc_noprof", "__kmalloc_noprof", "__kmalloc_cache_noprof",
    "free_unref_page", "free_unref_folios", "__free_pages", "__free_pages_ok",
    "free_pages_prepare", "free_pcppages_bulk", "post_alloc_hook",
    "prep_new_page", "get_page_from_freelist", "kfree_sensitive",
    "free_task", "free_thread_stack", "stackleak_erase",
]


# --- the bench channel ----------------------------------------------------------

class ReaderTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise ReaderTimeout()


def cmd_stamp(args):
    """Read the bench channel from a FIFO until its writer (QEMU) closes
    it, writing each line to OUT with the host's monotonic time (seconds
    since the reader started) as it completes.  Opening the FIFO blocks
    until QEMU opens it too; the whole read is bounded by --timeout."""
    t0 = time.monotonic()
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(args.timeout)
    stage = "waiting for QEMU to open"
    fd = -1
    with open(args.out, "w", encoding="utf-8") as out:
        try:
            fd = os.open(args.fifo, os.O_RDONLY)
            stage = "reading"
            buf = b""
            while True:
                chunk = os.read(fd, 4096)
                now = time.monotonic() - t0
                if not chunk:
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    out.write("%.6f\t%s\n" % (now, channel_text(line)))
                    out.flush()
            if buf:        # an unterminated last line: kept, judged damaged
                out.write("%.6f\t%s\n" % (now, channel_text(buf)))
        except ReaderTimeout:
            print("bench channel: gave up after %d s %s %s" % (
                args.timeout, stage, args.fifo), file=sys.stderr)
            return 1
        except OSError as e:
            print("bench channel: %s %s: %s" % (stage, args.fifo, e), file=sys.stderr)
            return 1
        finally:
            signal.alarm(0)
            if fd >= 0:
                os.close(fd)
    return 0


def channel_text(raw):
    """A channel line as text; bytes that are not UTF-8 stay visible."""
    return raw.decode("utf-8", "backslashreplace").rstrip("\r")


def channel_path(log):
    """The channel file of a boot's console log: icount.log -> icount.clock."""
    return (log[:-4] if log.endswith(".log") else log) + ".clock"


def parse_channel(path):
    """What one boot's bench channel says, checked line by line: seq gapless
    from 1, every crc right, "event=done" last.  Returns None if there is
    no channel file, else a dict: plan (workloads, scale, reps, or None),
    ns[name] and host_s[name] (lists, one per repetition with a start/end
    pair), failed[name] (the reason), done (True/False) and problems (what
    is wrong with the lines, naming the workload where it can)."""
    try:
        with open(path, encoding="utf-8", errors="backslashreplace") as f:
            rows = f.read().splitlines()
    except OSError:
        return None
    r = {"plan": None, "ns": {}, "host_s": {}, "failed": {}, "done": False,
         "problems": []}
    probs = r["problems"]
    events = {}         # seq -> (host time, fields)
    for lineno, row in enumerate(rows, 1):
        stamp, tab, text = row.partition("\t")
        try:
            t = float(stamp)
        except ValueError:
            t = None
        if not tab or t is None:
            probs.append("channel line %d is not '<time>\\t<line>': %r" % (lineno, row[:80]))
            continue
        if not text.strip():
            continue
        m = CHANNEL_RE.match(text)
        if not m:
            probs.append("channel line %d damaged (not a bench-clock line): %r" % (
                lineno, text[:80]))
            continue
        body, crc = m.groups()
        if zlib.crc32(body.encode("utf-8", "surrogateescape")) != int(crc, 16):
            probs.append("channel line %d damaged (crc mismatch): %r" % (lineno, text[:80]))
            continue
        fields = {}
        head, sep, why = body.partition(" why=")
        for word in head.split():
            k, eq, v = word.partition("=")
            if eq:
                fields[k] = v
        if sep:
            fields["why"] = why
        try:
            seq = int(fields.get("seq", ""))
        except ValueError:
            probs.append("channel line %d has no seq=: %r" % (lineno, text[:80]))
            continue
        if seq in events:
            probs.append("channel seq %d arrived twice" % seq)
            continue
        events[seq] = (t, fields)
    if events:
        have = sorted(events)
        gaps = sorted(set(range(1, have[-1] + 1)) - set(have))
        if gaps:
            probs.append("channel lines lost or damaged: seq %s missing (of 1..%d)" % (
                ", ".join(map(str, gaps)), have[-1]))
    # The events in order; pair each start with the end of the same run.
    starts = {}
    for seq in sorted(events):
        t, f = events[seq]
        ev, name, rep = f.get("event"), f.get("name"), f.get("rep")
        if r["done"]:
            probs.append("channel seq %d after event=done" % seq)
        if ev == "plan":
            try:
                r["plan"] = {"workloads": [w for w in f["workloads"].split(",") if w],
                             "scale": int(f["scale"]), "reps": int(f["reps"])}
            except (KeyError, ValueError):
                probs.append("channel seq %d: bad plan %r" % (seq, f))
        elif ev == "start" and name:
            starts[(name, rep)] = t
        elif ev == "end" and name:
            if (name, rep) not in starts:
                continue        # the missing start is named below
            try:
                ns = int(f["ns"])
            except (KeyError, ValueError):
                probs.append("channel seq %d: workload %s has no ns=" % (seq, name))
                continue
            r["ns"].setdefault(name, []).append(ns)
            r["host_s"].setdefault(name, []).append(t - starts.pop((name, rep)))
        elif ev == "failed" and name:
            r["failed"][name] = f.get("why", "?")
            starts.pop((name, rep), None)
        elif ev == "done":
            r["done"] = True
        else:
            probs.append("channel seq %d: unknown event %r" % (seq, f))
    if events and not r["done"]:
        probs.append("channel ended without event=done (lines lost at the end, "
                     "or the bench program did not finish)")
    return r


def workload_problems(ch):
    """Each planned workload that has fewer figures than repetitions, by
    name (the plan's names, or all of bench.c's if the plan line is lost)."""
    if ch["plan"]:
        names, reps = ch["plan"]["workloads"], ch["plan"]["reps"]
    else:
        names, reps = PROCESS_WORKLOADS, 1
    out = []
    for name in names:
        got = len(ch["ns"].get(name, []))
        if name in ch["failed"]:
            out.append("workload %s failed: %s" % (name, ch["failed"][name]))
        elif got < reps:
            out.append("workload %s: no figure%s (%d of %d repetitions have an intact "
                       "start/end pair on the channel)" % (
                           name, "" if reps == 1 else "s for every repetition", got, reps))
    for name in ch["ns"]:
        if name not in names:
            out.append("workload %s reported but not in the plan" % name)
    return out


def parse_console(path):
    """What one boot's console says: the policy the kernel reported, the
    in-kernel microbenchmarks, the TSC, a panic, /init's end marker."""
    r = {"micro": {}, "policy": None, "end": False, "tsc_mhz": None, "panic": False,
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
        m = TSC_RE.search(line)
        if m:
            r["tsc_mhz"] = float(m.group(1))
    return r


def parse_boot(log):
    """A boot's console log and its channel: (console, channel, problems)."""
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
                   ", ".join(PROCESS_WORKLOADS))
    else:
        out += ch["problems"] + workload_problems(ch)
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


def cmd_check(args):
    if args.micro:
        _, probs = micro_problems(args.log)
    else:
        _, _, probs = parse_boot(args.log)
    for p in probs:
        print(p)
    return 1 if probs else 0


# --- the report ---------------------------------------------------------------

def read_policy(path):
    configs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            fields = [x.strip() for x in s.split("|")]
            fields += [""] * (3 - len(fields))
            kernel = KERNELS.get(fields[1], {})
            configs.append({"name": fields[0], "kernel": fields[1],
                            "tree": kernel.get("tree"), "args": fields[2]})
    return configs


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


def targets(configs, workloads):
    """The targets of issue 6, each met, missed, or not measurable."""
    by = {c["name"]: c for c in configs}
    res = []

    def compare(name, num, den, limit, only, desc):
        t = {"target": name, "description": desc, "limit": limit,
             "numerator": num, "denominator": den, "figures": {}, "met": None}
        a, b = by.get(num), by.get(den)
        if not a or not b:
            t["note"] = "%s or %s not in this run" % (num, den)
            res.append(t)
            return
        ws = [w for w in workloads if w in only]
        missing = []
        for w in ws:
            if w in a["icount"] and b["icount"].get(w):
                t["figures"][w] = a["icount"][w] / b["icount"][w]
                t.setdefault("spread", {})[w] = [min(a["icount_reps"][w]) / b["icount"][w],
                                                 max(a["icount_reps"][w]) / b["icount"][w]]
            else:
                missing.append(w)
        if not t["figures"]:
            t["note"] = "no icount figures"
        else:
            worst = max(t["figures"], key=t["figures"].get)
            t["worst"] = {"workload": worst, "ratio": t["figures"][worst]}
            # compared at the precision the target is written with
            # ("1.00": two decimals, "1.003": three)
            places = len(repr(limit).split(".")[1]) if "." in repr(limit) else 0
            places = max(places, 2)
            missed = [w for w, r in t["figures"].items() if round(r, places) > limit]
            t["precision"] = places
            t["missed_on"] = missed
            # Met only thanks to the rounding (compared at the four decimals
            # the tables show): the report says so and names the workloads.
            t["over_before_rounding"] = [w for w, r in t["figures"].items()
                                         if round(r, 4) > limit and w not in missed]
            t["met"] = not missed and not missing
            if missing:
                t["note"] = "no figure for: " + ", ".join(missing)
        res.append(t)

    compare("off-vs-vanilla", "off", "vanilla", 1.003, PROCESS_WORKLOADS,
            "patched `off` vs vanilla: ratio <= 1.003 on every workload")
    compare("full-vs-vanilla-iof", "full", "vanilla-iof", 1.00, PROCESS_WORKLOADS,
            "`full` vs vanilla `init_on_free=1`: ratio <= 1.00 on every "
            "process workload")
    t = {"target": "gfp-zero-no-second-clear",
         "description": "`__GFP_ZERO` page allocations under `pages`: no "
                        "second clear (order-0 `__GFP_ZERO` microbench)",
         "met": None}
    # What __GFP_ZERO adds to an order-0 alloc/free pair: one clear under
    # "off"; under "pages" the page was cleared when freed, so it should add
    # (next to) nothing.  Met if it adds at most a tenth of what it adds
    # under "off".
    mo = by.get("off", {}).get("micro", {})
    mp = by.get("pages", {}).get("micro", {})
    if all(k in m for m in (mo, mp) for k in ("page-o0", "page-o0-zero")):
        d_off = mo["page-o0-zero"] - mo["page-o0"]
        d_pages = mp["page-o0-zero"] - mp["page-o0"]
        t["figures"] = {"zero_cost_off_ns": d_off, "zero_cost_pages_ns": d_pages}
        t["met"] = d_off > 0 and d_pages <= 0.1 * d_off
        t["note"] = ("__GFP_ZERO adds %d ns/pair under off, %d under pages "
                     "(met if <= 10%% of off)" % (d_off, d_pages))
    else:
        t["note"] = ("not measured: needs the in-kernel microbenchmark "
                     "(mm/sanitize_bench.c, CONFIG_SANITIZE_MEM_BENCH) in the patched kernel")
    res.append(t)
    return res


def vmlinux_sizes(specs):
    """`size` of each vmlinux, and the symbol sizes of the fast paths."""
    out = {}
    size_tool = shutil.which("size")
    nm_tool = shutil.which("nm")
    for spec in specs:
        name, _, path = spec.partition("=")
        ent = {"path": path}
        out[name] = ent
        if not os.path.exists(path):
            ent["error"] = "missing"
            continue
        if size_tool:
            try:
                p = subprocess.run([size_tool, path], capture_output=True,
                                   text=True, check=True)
                vals = p.stdout.splitlines()[1].split()
                ent["text"], ent["data"], ent["bss"] = (int(v) for v in vals[:3])
            except (subprocess.CalledProcessError, IndexError, ValueError) as e:
                ent["error"] = "size: %s" % e
        if nm_tool:
            try:
                p = subprocess.run([nm_tool, "-S", path], capture_output=True,
                                   text=True, check=True)
                syms = {}
                for line in p.stdout.splitlines():
                    parts = line.split()
                    if len(parts) == 4 and parts[2] in "tTwW" and parts[3] in FAST_PATHS:
                        syms[parts[3]] = syms.get(parts[3], 0) + int(parts[1], 16)
                ent["fast_paths"] = syms
            except subprocess.CalledProcessError as e:
                ent["error"] = "nm: %s" % e
    return out


def fmt_ratio(r):
    return "–" if r is None else "%.4f" % r


def fmt_ns(ns):
    return "%.3f" % (ns / 1e9)


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
                 "Each cell: ns per alloc/free pair%s." %
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
    L.append("## Targets (computed from the icount figures, not asserted)")
    L.append("")
    L.append("| target | result | worst | detail |")
    L.append("|---|---|---|---|")
    for t in tgts:
        result = {True: "**met**", False: "**missed**", None: "not measured"}[t["met"]]
        if t["met"] and t.get("over_before_rounding"):
            result = "**met at %d decimals**" % t["precision"]
        worst = "%s %.4f" % (t["worst"]["workload"], t["worst"]["ratio"]) if t.get("worst") else "–"
        detail = []
        if t.get("figures") and t["target"] != "gfp-zero-no-second-clear":
            detail.append(", ".join("%s %.4f" % (w, r) for w, r in t["figures"].items()))
        if t.get("missed_on"):
            detail.append("over %.*f on: %s" % (t.get("precision", 3), t["limit"],
                                                 ", ".join(t["missed_on"])))
        if t.get("over_before_rounding"):
            detail.append("over %.*f before rounding on: %s" % (
                t["precision"], t["limit"], ", ".join(t["over_before_rounding"])))
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
                      key=FAST_PATHS.index)
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


def cmd_report(args):
    # Only the configurations this run booted (--smoke boots two).
    configs = [c for c in read_policy(args.policy)
               if os.path.isdir(os.path.join(args.dir, c["name"]))]
    workloads = collect(args.dir, configs)
    rat = ratios(configs, workloads)
    tgts = targets(configs, workloads)
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
    }
    write_md(args.out + ".md", meta, configs, workloads, rat, tgts, sizes)
    doc = {
        "meta": meta,
        "workloads": workloads,
        "configs": [{k: c.get(k) for k in (
            "name", "kernel", "args", "cmdline", "kernel_image", "policy_reported",
            "tsc_mhz", "icount_scale", "scale", "errors", "icount", "icount_reps", "micro",
            "wall", "wall_guest_ns")}
            for c in configs],
        "units": {"icount": "guest ns under -icount shift=0 (1 ns = 1 instruction), "
                            "mean of icount_reps",
                  "wall": "host seconds between the arrival of a workload's start "
                          "and end lines on the bench channel",
                  "wall_guest_ns": "the ns= of the channel's end lines in wall runs: "
                                   "guest CLOCK_MONOTONIC, not good to 0.1% without icount"},
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
    p.add_argument("--micro", action="store_true",
                   help="LOG is a boot that ran only the in-kernel microbenchmarks")
    p.add_argument("log", help="a boot's console log (its channel: LOG's .clock twin)")
    p = sub.add_parser("report")
    p.add_argument("--dir", required=True, help="the bench logs (build/results/bench)")
    p.add_argument("--policy", required=True)
    p.add_argument("--out", required=True, help="output prefix (build/results/bench)")
    p.add_argument("--vmlinux", action="append", metavar="NAME=PATH")
    args = ap.parse_args()
    return {"stamp": cmd_stamp, "check": cmd_check, "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
