#!/usr/bin/env python3
"""The patched kernel under User-Mode Linux (ARCH=um), driven by the
kernel's own tools/testing/kunit/kunit.py, as its developers run KUnit.

    uml.py check [--policy policy/uml]
        fail, naming file and line, on a malformed policy/uml
    uml.py kunit --src SRC --build-dir D --out DIR [--policy F] ...
        build the UML kernel of the series' kunitconfigs once
        (kunit.py build), boot it once per line of policy/uml that runs a
        KUnit suite (kunit.py exec --kernel_args=<args>), judge each
        console like a matrix cell (tests/harness/__main__.py) and write
        DIR/<name>/console.log and one DIR/result.json for the summary
    uml.py bench --src SRC --build-dir D --out DIR --memset-bw BIN ...
        the same kernel booted once per "bench" line with the in-kernel
        microbenchmark repeated in that boot; with the host's memset
        bandwidth, DIR/results.json and DIR/table.md (tests/uml/plot.py
        draws DIR/plot.svg)
    uml.py report --out DIR [--icount F ...]
        DIR/table.md again from DIR/results.json, without booting

Every external step has a timeout; a kernel that does not build or a boot
that hangs is a failed test with the reason, never a hang or a skip.
Only standard library modules are used.
"""

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

from harness.policy import UML as POLICY, PolicyError, read_uml, shown
from harness import manifest
from harness.judge import BOOT_LINE, judge_cell
from harness.ktap import clean_lines
from harness import result_json
# The microbenchmark's lines, as the QEMU bench reads them.
from bench.console import MICRO_DONE_RE as BENCH_DONE_RE
from bench.console import MICRO_FAILED_RE as BENCH_FAIL_RE
from bench.console import MICRO_RE as BENCH_RE

TOP = os.path.dirname(os.path.dirname(HERE))
# The series' kunitconfigs, merged by kunit.py into one kernel: the suite's
# and the microbenchmark's, so that make check also proves the bench
# builds for ARCH=um and make bench-uml needs no second kernel.
KUNITCONFIGS = ("mm/sanitize_mem.kunitconfig", "mm/sanitize_bench.kunitconfig")
TEST_KINDS = ("kunit", "bench")


# --- policy/uml ------------------------------------------------------------------

# --- running kunit.py --------------------------------------------------------------

def kunit_cmd(src, build_dir, verb, *extra):
    return [sys.executable, os.path.join(src, "tools/testing/kunit/kunit.py"), verb,
            "--arch=um", "--build_dir=" + os.path.abspath(build_dir), *extra]


def run(cmd, log, timeout, cwd=None):
    """Run cmd with its output to log; (returncode or None on timeout, s)."""
    t0 = time.monotonic()
    with open(log, "w", encoding="utf-8") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        # A new session, so that a timeout kills kunit.py's make and the
        # UML kernel's host processes with it, not kunit.py alone.
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=cwd,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            p.wait()
            rc = None
    return rc, round(time.monotonic() - t0, 1)


def tail(path, n=25):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return ""
    # The compiler's or Kconfig's complaint, not make's last words.
    errs = [i for i, line in enumerate(lines) if re.search(r"error|ERROR|not all Kconfig", line)]
    if errs:
        i = errs[0]
        return "\n".join(lines[max(0, i - 5):i + n - 5])
    return "\n".join(lines[-n:])


def build(args):
    """kunit.py build with the series' kunitconfigs: (ok, message, seconds)."""
    missing = [k for k in KUNITCONFIGS if not os.path.isfile(os.path.join(args.src, k))]
    if missing:
        return False, (f"{', '.join(missing)} missing in {args.src}: the series does not "
                       "carry the kunitconfig the UML run needs"), 0
    os.makedirs(args.build_dir, exist_ok=True)
    extra = [f"--kunitconfig={k}" for k in KUNITCONFIGS] + [f"--jobs={args.jobs}"]
    # kunit.py's UML defaults build virtio PCI without a device ID, and
    # 6.12's um_pci_init() then WARNs on every boot; the judge fails a
    # boot on any WARNING, and nothing here needs PCI.
    extra += ["--kconfig_add", "CONFIG_UML_PCI_OVER_VIRTIO=n"]
    if shutil.which("ccache"):
        extra += ["--make_options", "CC=ccache gcc"]
    log = os.path.join(args.out, "build.log")
    rc, secs = run(kunit_cmd(args.src, args.build_dir, "build", *extra), log,
                   args.build_timeout, cwd=args.src)
    if rc is None:
        return False, f"kunit.py build timed out after {args.build_timeout} s", secs
    if rc != 0 or not os.path.isfile(os.path.join(args.build_dir, "linux")):
        return False, f"kunit.py build failed (exit {rc}; {shown(log)})", secs
    return True, f"kunit.py build in {secs} s", secs


def boot(args, line, extra_args, console, timeout):
    """One kunit.py exec of the built kernel: (status dict, lines)."""
    cmd = kunit_cmd(args.src, args.build_dir, "exec", "--raw_output=all",
                    f"--timeout={timeout}",
                    "--kernel_args=" + " ".join(a for a in (line["args"], extra_args) if a))
    # kunit.py's own --timeout first; ours, a little later, if it hangs anyway.
    rc, secs = run(cmd, console, timeout + 30, cwd=args.src)
    with open(console, encoding="utf-8", errors="replace") as f:
        lines = clean_lines(f.read())
    if rc is None:
        status = {"result": "timeout", "reason": f"kunit.py exec did not end in {timeout} s",
                  "seconds": secs}
    elif any(re.match(r"Command .* timed out after \d+ seconds", x) for x in lines[-20:]):
        # kunit.py's own timeout: it prints subprocess's TimeoutExpired
        # and terminates the kernel, then parses what came.
        status = {"result": "timeout", "reason": f"the UML kernel did not halt in {timeout} s",
                  "seconds": secs}
    else:
        # kunit.py exits 1 on a failed case too: the KTAP says which.
        status = {"result": "pass", "seconds": secs, "exit": rc}
    return status, lines


def judge_uml(line, lines, status, cases=None, skips=None):
    """A console judged as a matrix cell's (tests/harness/__main__.py), but for the
    policy: kunit.py boots no user space that could read sysfs, so the
    policy is judged on the kernel's boot line alone."""
    want = line["expect"].get("policy")
    cell = dict(line, expect={k: v for k, v in line["expect"].items() if k != "policy"},
                tests=[t for t in line["tests"] if t != "bench"])
    tests = judge_cell(cell, lines, status, cases=cases, skips=skips)
    if want is not None:
        booted = [m.group("policy") for m in map(BOOT_LINE.search, lines) if m]
        if booted == [want]:
            verdict = ("PASS", f"policy={want} in the boot line")
        elif len(booted) != 1:
            verdict = ("FAIL", f"expected one 'sanitize_mem: policy=' boot line, "
                               f"found {len(booted)}")
        else:
            verdict = ("FAIL", f"boot line says policy={booted[0]}, expected {want}")
        tests.insert(1, {"path": "policy", "status": verdict[0], "message": verdict[1],
                         "context": ""})
    return tests


def write_result(out, name, tests, meta):
    result_json.write(out, cell=name, kernel="uml", tests=tests,
                     log=f"{name}/build.log", **meta)
    bad = result_json.failed(tests)
    print(f"{name}: {'PASS' if not bad else 'FAIL'} ({len(tests) - len(bad)}/{len(tests)} "
          f"tests)" + (f" first problem: {bad[0]['path']}: {bad[0]['message']}" if bad else ""),
          flush=True)
    for t in bad[:1]:
        if t.get("context"):
            print("    | " + t["context"].replace("\n", "\n    | "))
    return 1 if bad else 0


def cmd_kunit(args):
    lines_ = [c for c in read_uml(args.policy) if any(t.startswith("kunit:") for t in c["tests"])]
    # Every case of the series must report, and only policy/skips's skips.
    cases, skips = manifest.kunit_cases(args.patches), manifest.read_skips(args.skips)
    os.makedirs(args.out, exist_ok=True)
    tests = []
    ok, msg, secs = build(args)
    meta = {"comment": f"User-Mode Linux on the host CPU ({platform.machine()}), "
                       f"built from {args.src}", "build_seconds": secs}
    tests.append({"path": "build", "status": "PASS" if ok else "FAIL", "message": msg,
                  "context": "" if ok else tail(os.path.join(args.out, "build.log"))})
    for line in lines_:
        name = line["cell"]
        if not ok:
            tests.append({"path": f"{name}.boot", "status": "ERROR",
                          "message": "not run: the UML kernel did not build", "context": ""})
            continue
        d = os.path.join(args.out, name)
        os.makedirs(d, exist_ok=True)
        timeout = int(line["expect"].get("timeout", args.timeout))
        status, lines = boot(args, line, "", os.path.join(d, "console.log"), timeout)
        for t in judge_uml(line, lines, status, cases, skips):
            tests.append({**t, "path": f"{name}.{t['path']}"})
        print(f"uml: {name} ({line['args']}) booted in {status['seconds']} s", flush=True)
    return write_result(args.out, os.path.basename(os.path.normpath(args.out)), tests, meta)


# --- the microbenchmark --------------------------------------------------------------

def bench_rounds(lines):
    """{benchmark: [ns per op, one per round]}, failures, rounds done."""
    per, failed, done = {}, {}, 0
    for line in lines:
        m = BENCH_RE.search(line)
        if m:
            per.setdefault(m.group(1), []).append(int(m.group(2)))
        m = BENCH_FAIL_RE.search(line)
        if m:
            failed[m.group(1)] = m.group(2)
        if BENCH_DONE_RE.search(line):
            done += 1
    return per, failed, done


def cleared_bytes(bench, components):
    """Bytes one alloc/free pair of a benchmark must clear under a policy's
    components ({"pages", "slab", "stack"}): what the floor is made of.
    Marked memory is cleared under every policy; __GFP_ZERO clears once,
    on free under pages (the allocation then skips it), else on alloc."""
    m = re.fullmatch(r"kmalloc-(\d+)", bench)
    if m:
        return int(m.group(1)) if "slab" in components else 0
    m = re.fullmatch(r"kmalloc-sens-(\d+)", bench)
    if m:
        return int(m.group(1))
    # kzalloc: once, unless slab zeroes on free and the allocation clears
    # again: always, but where the kernel says clear-once=...slab (the
    # "once" opt-in, reported as the pseudo-component "clear-once-slab").
    m = re.fullmatch(r"kzalloc-(\d+)", bench)
    if m:
        n = int(m.group(1))
        return 2 * n if "slab" in components and "clear-once-slab" not in components else n
    if bench == "cache-plain":
        return 256 if "slab" in components else 0
    if bench == "cache-sanitize":
        return 256
    m = re.fullmatch(r"page-o(\d)(-zero)?", bench)
    if m:
        size = 4096 << int(m.group(1))
        return size if m.group(2) or "pages" in components else 0
    m = re.fullmatch(r"vmalloc-(\d+)k", bench)
    if m:
        return int(m.group(1)) * 1024 if "pages" in components else 0
    if bench == "vmalloc-sens-64k":
        return 64 * 1024
    return None


def policy_components(lines):
    """The components of the boot line, and "clear-once-slab" where it says
    the slab's alloc-time clear is skipped."""
    for line in lines:
        m = re.search(r"sanitize_mem: policy=\S+ \(([^)]*)\)(?: clear-once=(\S+))?", line)
        if m:
            comps = {p for p in re.split(r"[,\s]+", m.group(1)) if p in ("pages", "slab", "stack")}
            if "slab" in (m.group(2) or "").split(","):
                comps.add("clear-once-slab")
            return comps
    return None


def memset_bw(binary, sizes, timeout):
    """{size: {"libc": ns, "stosb": ns}} from tests/uml/memset-bw.c."""
    p = subprocess.run([binary, *map(str, sizes)], capture_output=True, text=True,
                       timeout=timeout, check=True)
    out = {}
    for line in p.stdout.splitlines():
        f = line.split()
        out[int(f[1])] = {"libc": float(f[3]), "stosb": float(f[5])}
    return out


def cpu_model():
    """/proc/cpuinfo's model name, and the flags that make rep stos fast
    (the kernel's memset and clear_page use it where they are set)."""
    model, flags = platform.processor() or "unknown", []
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    have = line.split(":", 1)[1].split()
                    flags = [x for x in ("erms", "fsrm", "fsrs") if x in have]
                    break
    except OSError:
        pass
    return f"{model} (cpuinfo flags: {' '.join(flags) or 'no erms/fsrm'})"


def cmd_bench(args):
    lines_ = [c for c in read_uml(args.policy) if "bench" in c["tests"]]
    os.makedirs(args.out, exist_ok=True)
    errors = []
    ok, msg, _ = build(args)
    if not ok:
        print(f"bench-uml: {msg}", file=sys.stderr)
        print(tail(os.path.join(args.out, "build.log")), file=sys.stderr)
        return 1
    configs = []
    for line in lines_:
        d = os.path.join(args.out, line["cell"])
        os.makedirs(d, exist_ok=True)
        # kunit.enable=0: the suite's own allocations would run in the
        # same boot; the bench alone, as in make bench's micro boots.
        extra = (f"kunit.enable=0 sanitize_bench.run=1 sanitize_bench.repeat={args.repeat} "
                 f"sanitize_bench.iters={args.iters}")
        timeout = int(line["expect"].get("timeout", args.timeout))
        status, lines = boot(args, line, extra, os.path.join(d, "console.log"), timeout)
        per, failed, done = bench_rounds(lines)
        comps = policy_components(lines)
        errs = []
        if status["result"] != "pass":
            errs.append(status["reason"])
        if done != args.repeat:
            errs.append(f"{done} of {args.repeat} rounds reported done (a kernel without "
                        "sanitize_bench.repeat runs one)")
        errs += [f"{b} failed: {why}" for b, why in failed.items()]
        if comps is None:
            errs.append("no 'sanitize_mem: policy=' line")
        errors += [f"{line['cell']}: {e}" for e in errs]
        configs.append({"name": line["cell"], "args": line["args"], "components":
                        sorted(comps or []), "rounds": per, "seconds": status["seconds"],
                        "errors": errs})
        print(f"bench-uml: {line['cell']} ({line['args']}): {done} rounds in "
              f"{status['seconds']} s" + (f"; {'; '.join(errs)}" if errs else ""), flush=True)
    benches = [b for c in configs for b in c["rounds"]]
    benches = list(dict.fromkeys(benches))
    sizes = sorted({n for c in configs for b in benches
                    if (n := cleared_bytes(b, set(c["components"]))) and n > 0})
    bw = memset_bw(args.memset_bw, sizes, 120) if sizes else {}
    table = {}
    for c in configs:
        for b in benches:
            vals = c["rounds"].get(b, [])
            n = cleared_bytes(b, set(c["components"]))
            q = statistics.quantiles(vals, n=4) if len(vals) > 1 else [None] * 3
            table.setdefault(b, {})[c["name"]] = {
                "median": statistics.median(vals) if vals else None,
                "q1": q[0], "q3": q[2],
                "min": min(vals) if vals else None, "max": max(vals) if vals else None,
                "runs": vals, "cleared_bytes": n,
                "floor_ns": round(bw[n]["libc"], 1) if n else 0.0,
            }
    doc = {
        "meta": {
            "generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "cpu": cpu_model(), "cpus": os.cpu_count(),
            "host": " ".join(platform.uname()[i] for i in (0, 2, 4)),
            "load": open("/proc/loadavg", encoding="utf-8").read().split()[:3],
            "repeat": args.repeat, "iters": args.iters, "src": args.src,
            "command": args.command or " ".join(sys.argv),
        },
        "units": {"median": "ns per alloc/free pair (ktime under UML: the host's clock), "
                            "median of the rounds of one boot",
                  "floor_ns": "cleared_bytes / the host's memset bandwidth at that size: "
                              "one glibc memset of cleared_bytes (tests/uml/memset-bw.c)"},
        "memset_ns": {str(k): v for k, v in bw.items()},
        "configs": configs, "table": table, "errors": errors,
    }
    with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    write_table(args.out, doc, args.icount)
    return 1 if errors else 0


def write_table(out, doc, icount):
    with open(os.path.join(out, "table.md"), "w", encoding="utf-8") as f:
        f.write(markdown(doc, read_icount(icount)))
    print(f"bench-uml: wrote {shown(out)}/results.json and table.md"
          + (f" ({len(doc['errors'])} errors)" if doc["errors"] else ""))


def cmd_report(args):
    """table.md again from a saved results.json (a change to the table
    or a newer make bench, without booting)."""
    with open(os.path.join(args.out, "results.json"), encoding="utf-8") as f:
        doc = json.load(f)
    write_table(args.out, doc, args.icount)
    return 1 if doc["errors"] else 0


def read_icount(paths):
    """{benchmark: {config: icount ns}} of make bench's microbenchmarks:
    build/results/bench.json, or else the table the last make
    docs-results wrote in docs/results.md (the first of paths found)."""
    for path in paths or []:
        if not os.path.isfile(path):
            continue
        if path.endswith(".json"):
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
            out = {}
            for c in doc.get("configs", []):
                for b, ns in (c.get("micro") or {}).items():
                    out.setdefault(b, {})[c["name"]] = ns
            if out:
                return out, shown(path)
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        m = re.search(r"In-kernel microbenchmarks \(icount.*?\n(\|.*?)\n\n", text, re.S)
        if not m:
            continue
        rows_ = [r.strip().strip("|").split("|") for r in m.group(1).splitlines()]
        head = [h.strip() for h in rows_[0]]
        out = {}
        for r in rows_[2:]:
            for h, v in zip(head[1:], r[1:]):
                out.setdefault(r[0].strip(), {})[h] = int(v.split()[0])
        return out, shown(path)
    return {}, None


def fmt(x):
    return "–" if x is None else f"{x:.0f}" if x >= 100 else f"{x:.1f}"


def markdown(doc, icount):
    meta, table, configs = doc["meta"], doc["table"], doc["configs"]
    names = [c["name"] for c in configs]
    icount, isrc = icount
    L = ["# In-kernel microbenchmarks on the host CPU (User-Mode Linux)", "",
         f"Generated {meta['generated']} by `{meta['command']}`: the patched kernel built "
         f"for ARCH=um by kunit.py, one boot per line of `policy/uml`, "
         f"mm/sanitize_bench.c run {meta['repeat']} times in that boot, "
         f"{meta['iters']} operations per benchmark and round (vmalloc: a quarter; "
         "`sanitize_bench.run=1 sanitize_bench.repeat=N sanitize_bench.iters=M`). "
         f"Host: {meta['cpu']}, {meta['cpus']} cpus, {meta['host']}, load at start "
         f"{' '.join(meta['load'])}.", "",
         "UML runs the kernel's code natively, so these are the host's nanoseconds; "
         "TCG `-icount` counts each `rep stos` iteration as an instruction and "
         "overweights clearing, so its ratios compare configurations, not machines. "
         "The floor is the physical limit of a policy's clearing on this CPU: the "
         "bytes the pair must clear under that policy divided by the host's memset "
         "bandwidth at that size (one glibc memset, `tests/uml/memset-bw.c`, -O2, "
         "median of 15 timed rounds, buffer hot in cache).", "",
         "## ns per alloc/free pair: median [min–max] of the rounds", "",
         "| benchmark | " + " | ".join(names) + " |",
         "|---|" + "---:|" * len(names)]
    for b, per in table.items():
        cells = []
        for n in names:
            v = per.get(n, {})
            cells.append("–" if v.get("median") is None else
                         f"{fmt(v['median'])} [{fmt(v['min'])}–{fmt(v['max'])}]")
        L.append(f"| {b} | " + " | ".join(cells) + " |")
    L += ["", "## Cost over `off` beside the floor, and beside icount", "",
          "Each cell: UML median minus off's median, in ns / floor in ns (bytes "
          "cleared / memset bandwidth); then the ratio to off under UML and, in "
          "brackets, under icount (`make bench`"
          + (f", from {isrc}" if isrc else ": not measured") + "). "
          "A floor of 0: this policy clears nothing for this pair.", "",
          "| benchmark | " + " | ".join(n for n in names if n != "off") + " |",
          "|---|" + "---:|" * (len(names) - 1)]
    for b, per in table.items():
        off = per.get("off", {}).get("median")
        cells = []
        for n in names:
            if n == "off":
                continue
            v = per.get(n, {})
            med = v.get("median")
            if med is None or off is None:
                cells.append("–")
                continue
            ic = icount.get(b, {})
            iratio = (f" [{ic[n] / ic['off']:.2f}]" if n in ic and ic.get("off") else "")
            cells.append(f"{med - off:+.0f} / {fmt(v['floor_ns'])}; "
                         f"×{med / off:.2f}{iratio}" if off else "–")
        L.append(f"| {b} | " + " | ".join(cells) + " |")
    L += ["", "Host memset, ns per call (glibc; `rep stosb` beside it):", "",
          "| bytes | " + " | ".join(doc["memset_ns"]) + " |",
          "|---|" + "---:|" * len(doc["memset_ns"]),
          "| glibc | " + " | ".join(fmt(v["libc"]) for v in doc["memset_ns"].values()) + " |",
          "| GB/s | " + " | ".join(f"{int(k) / v['libc']:.0f}"
                                  for k, v in doc["memset_ns"].items()) + " |",
          "| rep stosb | " + " | ".join(fmt(v["stosb"]) for v in doc["memset_ns"].values())
          + " |", ""]
    L += ["Plot: `bench-uml.svg` (ns per pair, median and quartiles, beside off plus the "
          "floor; make docs-results copies it from build/results/bench-uml/plot.svg).", ""]
    if doc["errors"]:
        L += ["Errors: " + "; ".join(doc["errors"]), ""]
    return "\n".join(L)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("check")
    p.add_argument("--policy", default=POLICY)
    for name in ("kunit", "bench"):
        p = sub.add_parser(name)
        p.add_argument("--policy", default=POLICY)
        p.add_argument("--src", required=True, help="the patched kernel tree")
        p.add_argument("--patches", default=manifest.PATCHES,
                       help="the series whose KUnit cases every cell must report")
        p.add_argument("--skips", default=manifest.SKIPS, help="the skips a cell may report")
        p.add_argument("--build-dir", required=True, help="kunit.py's --build_dir")
        p.add_argument("--out", required=True)
        p.add_argument("--jobs", type=int, default=2)
        p.add_argument("--build-timeout", type=int, default=3600,
                       help="seconds kunit.py build may take (cold: 13 min here)")
        p.add_argument("--timeout", type=int, default=120,
                       help="seconds a boot may take (policy/uml timeout= overrides)")
    p = sub.choices["bench"]
    # 11 rounds take about 40 s here under load; a slower host gets room.
    p.set_defaults(timeout=600)
    p.add_argument("--memset-bw", required=True, help="tests/uml/memset-bw.c, built")
    p.add_argument("--repeat", type=int, default=11, help="rounds of the bench in one boot")
    # 4 times the bench's default: a round of kmalloc-8 then lasts about a
    # millisecond, not 70 us that one preemption of UML's host process
    # can double.  vmalloc runs a quarter of it.
    p.add_argument("--iters", type=int, default=16384,
                   help="operations per benchmark and round (sanitize_bench.iters)")
    p.add_argument("--icount", action="append",
                   help="make bench's figures: bench.json or docs/results.md")
    p.add_argument("--command", help="how the run was started, for the report")
    p = sub.add_parser("report", help="table.md again from DIR/results.json")
    p.add_argument("--out", required=True, help="make bench-uml's directory")
    p.add_argument("--icount", action="append",
                   help="make bench's figures: bench.json or docs/results.md")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "check":
            print(f"{shown(args.policy)}: {len(read_uml(args.policy))} lines")
            return 0
        return {"kunit": cmd_kunit, "bench": cmd_bench, "report": cmd_report}[args.cmd](args)
    except subprocess.TimeoutExpired as e:
        print(f"uml: {e.cmd[0]} timed out after {e.timeout} s", file=sys.stderr)
        return 1
    except (Exception, PolicyError) as e:  # noqa: BLE001
        # make check's summary counts result.json: a runner that died
        # must leave a red one, not none at all.
        if args.cmd == "kunit":
            import traceback
            os.makedirs(args.out, exist_ok=True)
            write_result(args.out, os.path.basename(os.path.normpath(args.out)),
                         [{"path": "harness", "status": "ERROR",
                           "message": f"tests/uml/uml.py failed: {e}",
                           "context": traceback.format_exc()}], {})
        raise


if __name__ == "__main__":
    sys.exit(main())
