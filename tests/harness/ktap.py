"""KTAP, as the kernel and our guest programs print it on a console.

clean_lines() takes a console log to lines (no CR, no printk timestamps);
parse_ktap() finds every leaf result in them, with the range of log lines
that belong to it, so a kernel report can be attributed to a test case.
Used by the judge (tests/harness/judge.py), by python3 -m harness ktap (a host
suite's KTAP) and by lava/lava_verdict.py.  Standard library only.
"""

import re

TIMESTAMP = re.compile(r"^\[\s*\d+\.\d+\]\s?")
KTAP_RESULT = re.compile(
    r"^(?P<indent> *)(?P<ok>ok|not ok) (?P<num>\d+)(?: -)? ?(?P<name>[^#]*?)"
    r"\s*(?:#\s*(?P<directive>.*))?$"
)
# KUnit's own words for a failed expectation, on the lines before the
# case's "not ok": the message of a failure that carries none itself.
KUNIT_FAILED = re.compile(r"^\s*# [\w-]+: ((?:EXPECTATION|ASSERTION) FAILED at \S+)")
KTAP_HEADER = re.compile(r"^(?P<indent> *)(KTAP version \d+|# Subtest: .*|1\.\.(?P<plan>\d+))\s*$")


def clean_lines(text):
    """Console text to lines without CR, timestamps or trailing blanks."""
    lines = []
    for raw in text.replace("\r", "").split("\n"):
        lines.append(TIMESTAMP.sub("", raw).rstrip())
    return lines


def kunit_failure(lines, first, last):
    """The first KUnit "EXPECTATION FAILED at file:line" of lines
    first..last, with the line that says what was expected, or ""."""
    for i in range(first, last):
        m = KUNIT_FAILED.match(lines[i])
        if m:
            detail = next((x.strip() for x in lines[i + 1:last] if x.strip()), "")
            return f"{m.group(1)}: {detail}" if detail else m.group(1)
    return ""


def parse_ktap(lines, plans=None):
    """Every leaf KTAP result in the log, as dicts with its path and the range
    of log lines that belong to it (from the end of its previous sibling to
    its own result line), so a report can be attributed to a test case.

    With a list as plans, every test with subtests whose plan line
    ("1..N") announced more than it reported is appended to it as
    {"path", "plan", "reported", "line"}: a case that vanished from the log.

    A subtest's name is taken from its parent's result line, which KTAP
    requires, not from the optional "# Subtest:" header; kernel lines that
    interleave with the KTAP are ignored."""
    frames = {}  # depth -> {"children": [...], "next": first line of next child}
    roots = []

    def frame(depth, i):
        return frames.setdefault(depth, {"children": [], "next": i})

    for i, line in enumerate(lines):
        m = KTAP_RESULT.match(line)
        if not m:
            h = KTAP_HEADER.match(line)
            if h:
                f = frame(len(h.group("indent")) // 4, i)
                if h.group("plan") is not None:
                    f["plan"] = int(h.group("plan"))
            continue
        depth = len(m.group("indent")) // 4
        inner = frames.pop(depth + 1, {"children": []})
        children = inner["children"]
        for d in [d for d in frames if d > depth]:
            del frames[d]
        directive = (m.group("directive") or "").strip()
        if m.group("ok") == "not ok":
            status = "FAIL"
        elif directive.upper().startswith("SKIP"):
            status = "SKIP"
        else:
            status = "PASS"
        f = frame(depth, i)
        if status == "FAIL" and not directive:
            directive = kunit_failure(lines, f["next"], i)
        node = {"name": m.group("name").strip(), "status": status, "message": directive,
                "first_line": f["next"], "line": i, "children": children,
                "plan": inner.get("plan")}
        f["next"] = i + 1
        f["children"].append(node)
        if depth == 0:
            roots.append(node)
            del frames[0]

    leaves = []

    def walk(node, prefix):
        path = prefix + [node["name"]]
        # A parent's verdict repeats its children's, except when it failed
        # on its own (a guest program that exits non-zero after printing
        # only "ok" lines): then it is a result of its own.
        own_failure = node["status"] == "FAIL" and not any(
            c["status"] == "FAIL" for c in node["children"])
        if not node["children"] or own_failure:
            leaves.append({k: node[k] for k in ("status", "message", "first_line", "line")}
                          | {"path": path})
        if plans is not None and node["plan"] is not None \
                and len(node["children"]) < node["plan"]:
            plans.append({"path": path, "plan": node["plan"],
                          "reported": len(node["children"]), "line": node["line"]})
        for child in node["children"]:
            walk(child, path)

    for node in roots:
        walk(node, [])
    return leaves
