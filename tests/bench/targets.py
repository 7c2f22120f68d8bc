"""The bench's targets, each met, missed or not measured: the data is
policy/bench-targets (loaded and checked by tests/harness/policy.py
read_bench_targets), the verdicts are computed here from a run's figures
(figures.py) and reported in bench.md and bench.json, never asserted.

    evaluate(configs, workloads, specs)   one result per target, in the
                                          file's order

Python 3 standard library only.
"""

from bench.channel import PROCESS_WORKLOADS


def icount_target(spec, by, workloads):
    """The ratio of the configuration's icount figure to the base's, on
    every process workload (or those the target names), at most the limit
    (below it, for a strict "<" limit), compared at the decimals the limit
    is written with (at least two)."""
    num, den, limit = spec["config"], spec["base"], spec["limit"]
    t = {"target": spec["name"], "description": spec["description"], "limit": limit,
         "numerator": num, "denominator": den, "figures": {}, "met": None}
    a, b = by.get(num), by.get(den)
    if not a or not b:
        t["note"] = "%s or %s not in this run" % (num, den)
        return t
    ws = [w for w in workloads if w in PROCESS_WORKLOADS and
          (not spec.get("workloads") or w in spec["workloads"])]
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
        return t
    worst = max(t["figures"], key=t["figures"].get)
    t["worst"] = {"workload": worst, "ratio": t["figures"][worst]}
    # compared at the precision the target is written with
    # ("1.00": two decimals, "1.003": three)
    places = max(spec["decimals"], 2)
    strict = spec.get("strict", False)

    def over(r, p):
        return round(r, p) >= limit if strict else round(r, p) > limit

    def meets(r):
        return not over(r, places)
    missed = [w for w, r in t["figures"].items() if over(r, places)]
    t["precision"] = places
    t["strict"] = strict
    t["missed_on"] = missed
    # Met only thanks to the rounding (compared at the four decimals
    # the tables show): the report says so and names the workloads.
    t["over_before_rounding"] = [w for w, r in t["figures"].items()
                                 if over(r, 4) and w not in missed]
    t["met"] = not missed and not missing
    t["reasons"] = {w: miss_reason(spec, a, b, w, t["spread"][w], meets) for w in missed}
    if missed and spec.get("via"):
        t["steps"] = {}
        for w in missed:
            steps, why = miss_steps(spec, by, w)
            if steps:
                t["steps"][w] = steps
            t["reasons"][w] += "; " + why
    if missing:
        t["note"] = "no figure for: " + ", ".join(missing)
    return t


def miss_reason(spec, a, b, w, spread, meets):
    """Why a workload missed, from the run's own repetitions: noise when
    some repetition of the configuration meets the limit and the base's
    repetitions spread at least as far as the miss; not noise (a cost, or
    a saving smaller than the target) when every repetition misses or the
    miss is wider than the base's own spread."""
    num, den, limit = spec["config"], spec["base"], spec["limit"]
    reps = b["icount_reps"].get(w) or [b["icount"][w]]
    base_lo, base_hi = min(reps) / b["icount"][w], max(reps) / b["icount"][w]
    ratio = a["icount"][w] / b["icount"][w]
    # the best repetition is the lowest ratio: if it misses, all do
    lo, hi = spread
    said = ("%s's %d repetitions %.4f-%.4f of %s's mean, %s's own %.4f-%.4f"
            % (num, len(a["icount_reps"].get(w) or []), lo, hi, den, den, base_lo, base_hi))
    if meets(lo) and base_hi - base_lo >= abs(ratio - limit):
        return "noise: %s" % said
    if not meets(lo):
        return "not noise: every repetition misses (%s)" % said
    return "not noise: the miss is wider than %s's own spread (%s)" % (den, said)


def change(p, q):
    """What differs between two configurations, for a step's name: the
    kernel, the command line arguments dropped (-) and added (+), and the
    policy the kernels reported when it differs ("off init_on_free=1" is
    "pages,slab": from there to "full" adds the stack component)."""
    said = []
    if p.get("kernel") != q.get("kernel"):
        said.append("%s -> %s" % (p.get("kernel"), q.get("kernel")))
    pp, qp = p.get("policy_reported"), q.get("policy_reported")
    if pp and qp and "none" not in (pp, qp) and pp != qp:
        said.append("policy %s -> %s" % (pp, qp))
    pa, qa = (p.get("args") or "").split(), (q.get("args") or "").split()
    said += ["-" + x for x in pa if x not in qa] + ["+" + x for x in qa if x not in pa]
    return " ".join(said) or "nothing"


def miss_steps(spec, by, w):
    """A missed workload's ratio as the product of the steps of the
    target's via chain (base -> via... -> config), each the ratio of one
    configuration to the one before it on that workload: it telescopes to
    config/base exactly.  Returns (steps, what the report says)."""
    chain = [spec["base"]] + list(spec["via"]) + [spec["config"]]
    absent = [c for c in chain if w not in by.get(c, {}).get("icount", {})]
    if absent:
        return None, "not broken down: no %s figure for %s" % (w, ", ".join(absent))
    steps = [{"from": p, "to": q, "ratio": by[q]["icount"][w] / by[p]["icount"][w],
              "change": change(by[p], by[q])} for p, q in zip(chain, chain[1:])]
    # the step that carries the miss: the largest ratio for a ceiling
    big = max(steps, key=lambda s: s["ratio"])
    return steps, "steps: %s; the largest: %s/%s %.4f (%s)" % (
        " x ".join("%s/%s %.4f" % (s["to"], s["from"], s["ratio"]) for s in steps),
        big["to"], big["from"], big["ratio"], big["change"])


def micro_delta_target(spec, by):
    """What one in-kernel microbenchmark costs more than another (per
    alloc/free pair, icount ns) under the configuration, at most limit
    times what it costs more under the base (which must cost more).  For
    __GFP_ZERO: one clear under "off"; under "pages" the page was cleared
    when freed, so it should add (next to) nothing."""
    with_, without = spec["benchmarks"]
    cfg, base, limit = spec["config"], spec["base"], spec["limit"]
    t = {"target": spec["name"], "description": spec["description"], "met": None}
    mb = by.get(base, {}).get("micro", {})
    mc = by.get(cfg, {}).get("micro", {})
    if all(k in m for m in (mb, mc) for k in (with_, without)):
        d_base = mb[with_] - mb[without]
        d_cfg = mc[with_] - mc[without]
        t["figures"] = {"extra_ns_under_%s" % base: d_base, "extra_ns_under_%s" % cfg: d_cfg}
        t["met"] = d_base > 0 and d_cfg <= limit * d_base
        t["note"] = ("%s costs %d ns/pair more than %s under %s, %d under %s "
                     "(met if <= %g%% of %s)" % (with_, d_base, without, base, d_cfg, cfg,
                                                 100 * limit, base))
    else:
        t["note"] = ("not measured: needs the in-kernel microbenchmark "
                     "(mm/sanitize_bench.c, CONFIG_SANITIZE_MEM_BENCH) in the patched kernel")
    return t


def wipe_bytes_target(spec, by):
    """What the wipe of free memory clears under the configuration, at most
    limit times what it clears under the base (medians of the rounds of
    their wipe boots, compared at the decimals the limit is written with).
    Under "pages" free pages are zero already, so the page pass is skipped
    and only the slab's free objects are left."""
    cfg, base, limit = spec["config"], spec["base"], spec["limit"]
    t = {"target": spec["name"], "description": spec["description"], "met": None}
    a, b = (by.get(cfg) or {}).get("wipe"), (by.get(base) or {}).get("wipe")
    if not a or not b:
        t["note"] = "not measured: no wipe figures for %s" % " and ".join(
            n for n, w in ((cfg, a), (base, b)) if not w)
        return t
    ratio = a["bytes"] / b["bytes"] if b["bytes"] else None
    t["figures"] = {"bytes_under_%s" % cfg: a["bytes"], "bytes_under_%s" % base: b["bytes"],
                    "pages_under_%s" % cfg: a["pages"], "pages_under_%s" % base: b["pages"]}
    if ratio is None:
        t["note"] = "the wipe under %s cleared nothing: no ratio" % base
        return t
    places = max(spec["decimals"], 2)
    over = round(ratio, places) >= limit if spec.get("strict") else round(ratio, places) > limit
    t["met"] = not over
    t["ratio"] = ratio
    t["note"] = ("the wipe clears %d bytes (%d free pages, %d slab objects) under %s, "
                 "%d bytes (%d free pages) under %s: ratio %.*f, met if %s %g" % (
                     a["bytes"], a["pages"], a["objects"], cfg, b["bytes"], b["pages"], base,
                     places + 2, ratio, "<" if spec.get("strict") else "<=", limit))
    return t


def evaluate(configs, workloads, specs):
    """Every target of specs (policy/bench-targets) on this run."""
    by = {c["name"]: c for c in configs}
    out = []
    for spec in specs:
        if spec["measure"] == "icount":
            t = icount_target(spec, by, workloads)
        elif spec["measure"] == "wipe-bytes":
            t = wipe_bytes_target(spec, by)
        else:
            t = micro_delta_target(spec, by)
        t["measure"] = spec["measure"]
        out.append(t)
    return out
