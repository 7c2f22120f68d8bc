"""The bench channel: the second serial port that only the guest's bench
program (tests/guest/bench.c) writes, one numbered, CRC-32'd line per
event (plan, start, end with ns= and, for the wipe's steps, more
figures, failed with why=, done).

    stamp(fifo, out, timeout)   read it from QEMU's FIFO, each line stamped
                                with its host arrival time (report.py stamp)
    parse_channel(path)         a stamped channel checked line by line: its
                                figures and what is wrong with it
    workload_problems(ch)       each planned workload without its figures
    wipe_problems(ch)           each step of a wipe boot without its figures

The workloads are policy/bench-workloads, read by tests/harness/policy.py.
Python 3 standard library only.
"""

import os
import re
import signal
import sys
import time
import zlib

from harness import policy

CHANNEL_RE = re.compile(r"^bench-clock: (.*) crc=([0-9a-f]{8})$")

# The process workloads, in the order bench.c runs them: the list bench.c
# is built with (policy/bench-workloads, through the loader).
PROCESS_WORKLOADS = policy.read_bench_workloads()

# The steps of a wipe boot (bench.wipe=, issue 35), in the order bench.c
# runs them each round, and the figures each step's end line carries
# besides ns= (bench.c's wipe_steps).
WIPE_STEPS = ("dirty", "wipe")
WIPE_FIGURES = {"dirty": ("bytes",), "wipe": ("bytes", "pages", "objects", "skipped")}
# The fields every event has; any other numeric field of an end line is
# one of its figures.
EVENT_FIELDS = ("seq", "event", "name", "rep", "ns")


class ReaderTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise ReaderTimeout()


def stamp(fifo, out_path, timeout):
    """Read the bench channel from a FIFO until its writer (QEMU) closes
    it, writing each line to out_path with the host's monotonic time
    (seconds since the reader started) as it completes.  Opening the FIFO
    blocks until QEMU opens it too; the whole read is bounded by timeout
    seconds.  0, or 1 after saying why on stderr."""
    t0 = time.monotonic()
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    stage = "waiting for QEMU to open"
    fd = -1
    with open(out_path, "w", encoding="utf-8") as out:
        try:
            fd = os.open(fifo, os.O_RDONLY)
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
                timeout, stage, fifo), file=sys.stderr)
            return 1
        except OSError as e:
            print("bench channel: %s %s: %s" % (stage, fifo, e), file=sys.stderr)
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
    no channel file, else a dict: plan (workloads, scale, reps, wipe_mib
    for a wipe boot, or None), ns[name] and host_s[name] (lists, one per
    repetition with a start/end pair), figures[name] (for an end line with
    more than ns=, a list of {field: int} in the same order), failed[name]
    (the reason), done (True/False) and problems (what is wrong with the
    lines, naming the workload where it can)."""
    try:
        with open(path, encoding="utf-8", errors="backslashreplace") as f:
            rows = f.read().splitlines()
    except OSError:
        return None
    r = {"plan": None, "ns": {}, "host_s": {}, "figures": {}, "failed": {}, "done": False,
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
                if "wipe_mib" in f:
                    r["plan"]["wipe_mib"] = int(f["wipe_mib"])
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
            extra = {}
            for k, v in f.items():
                if k not in EVENT_FIELDS:
                    try:
                        extra[k] = int(v)
                    except ValueError:
                        probs.append("channel seq %d: workload %s: %s=%r is not a number" % (
                            seq, name, k, v))
            if extra:
                r["figures"].setdefault(name, []).append(extra)
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


def workload_problems(ch, expected=PROCESS_WORKLOADS):
    """Each planned workload that has fewer figures than repetitions, by
    name (the plan's names, or those expected if the plan line is lost:
    all of bench.c's process workloads, or WIPE_STEPS in a wipe boot)."""
    if ch["plan"]:
        names, reps = ch["plan"]["workloads"], ch["plan"]["reps"]
    else:
        names, reps = list(expected), 1
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



def wipe_problems(ch):
    """What a wipe boot's channel lacks beyond workload_problems(): a plan
    that is not the wipe's, or an end line of a step without the figures
    that step reports (WIPE_FIGURES)."""
    out = []
    plan = ch["plan"]
    if plan and (tuple(plan["workloads"]) != WIPE_STEPS or "wipe_mib" not in plan):
        out.append("the plan is not a wipe boot's (workloads=%s, no wipe_mib=?): "
                   "was bench.wipe= on the command line?" % ",".join(plan["workloads"]))
    for step, fields in WIPE_FIGURES.items():
        figs = ch["figures"].get(step, [])
        whole = [f for f in figs if all(k in f for k in fields)]
        if len(whole) < len(ch["ns"].get(step, [])):
            out.append("wipe step %s: %d of %d end lines carry %s" % (
                step, len(whole), len(ch["ns"][step]), ", ".join(k + "=" for k in fields)))
    return out
