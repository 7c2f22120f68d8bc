#!/usr/bin/env python3
"""Write one LAVA job definition per cell of policy/matrix.

    lava/make-jobs.py [--out build/lava/jobs] [--base-url URL] [--accel tcg|kvm]
                      [--cell NAME ...] [--sha256] [--list]

Each job boots the cell's kernel (a bzImage of policy/kernels) with our
initramfs on LAVA's "qemu" device type, with the kernel command line the
local harness uses (tests/harness/run-cell.sh), and turns the console into LAVA
results with a "monitors" test action: our guest has no lava-test-shell
overlay (busybox initramfs whose /init powers off by itself), so LAVA only
watches the serial console and matches patterns, in console order:

    monitor                      LAVA suite               LAVA case
    sanitize_mem: invalid value  <cell>                   invalid_value  (cells with expect error=)
    KUnit KTAP, per suite        <cell>.kunit.<suite>     <case>
    HARNESS: policy=...          <cell>                   policy
    guest KTAP, per program      <cell>.guest.<program>   <case>
    HARNESS: END + reboot line   <cell>                   boot

so that "<suite>.<case>" is the name tests/harness/judge.py gives the same result
(<cell>.kunit.<suite>.<case>, <cell>.policy, <cell>.invalid_value, ...).

The job is lava/job.yaml.j2, rendered with Jinja2 (Debian's python3-jinja2)
and read back with python3-yaml before it is written, so a job that is not
YAML or lacks what LAVA needs is an error here, not in the lab.  Cells are
read with tests/harness/policy.py's read_matrix, so they are defined once, in
policy/matrix.  tests/selftest/test_lava.py checks the jobs of a few cells
against golden files (tests/selftest/lava/).
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys

import jinja2
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
from harness.policy import read_matrix

TEMPLATE = "job.yaml.j2"


def read_base_cmdline(arch="x86_64"):
    """The base kernel command line every harness guest of arch starts
    with, as qemu-boot/base-cmdline.sh prints it for tests/harness/run-cell.sh."""
    return subprocess.run([os.path.join(TOP, "qemu-boot", "base-cmdline.sh"), arch],
                          check=True, capture_output=True, text=True,
                          timeout=60).stdout.strip()


# The jobs boot the x86_64 cells of policy/matrix (bzImage, qemu x86_64).
BASE_CMDLINE = read_base_cmdline()
DEFAULT_TIMEOUT = 300          # seconds, the harness's TIMEOUT default
MEMORY = 512                   # MiB, qemu-boot/run-qemu.sh's MEM default;
                               # a cell's expect mem=<MiB> overrides it
SMP = 2                        # run-qemu.sh's SMP default

# Guest programs that need the host during the run (they print
# "HARNESS: SCAN" / "HARNESS: TYPE" and wait for the expect driver to
# answer on the console).  A LAVA monitor cannot answer, so these programs
# are left out of the LAVA jobs (with a comment in the job).
HOST_ASSISTED = {"lifetime"}

# One KTAP result line at a given indentation, whole (up to its newline:
# pexpect matches while the line is still arriving).  The case name is
# captured by a lookahead, so the result group can sit on "ok", "not ok"
# or on the SKIP directive; fixupdict maps those to pass/fail/skip.
KTAP_FIXUP = {"ok": "pass", "not ok": "fail", "SKIP": "skip"}

# Monitors run one after the other on one console: one whose text never
# comes (a KUnit suite not built in, a guest program that printed nothing)
# would swallow the rest of the console.  So each also starts and ends,
# without consuming anything, at the next /init marker: it then reports
# nothing (a missing result, which lava/lava_verdict.py counts as a failure)
# and the later monitors still run.
UNTIL_INIT = "(?=HARNESS: policy=)"
UNTIL_END = "(?=HARNESS: END)"


def ktap_pattern(indent):
    sp = " {%d}" % indent
    return (r"\n(?:\[[ 0-9.]+\] ?)?" + sp +
            r"(?=(?:not )?ok \d+ (?P<test_case_id>[^\s#]+)[^\n]*\n)"
            r"(?:ok \d+ [^\s#]+ +# *(?=SKIP))?"
            r"(?P<result>not ok|ok|SKIP)")


def line_check(prefix, case, value):
    """A monitor pattern for '<prefix><case>=<value>' on a whole line:
    result is the value when it is exactly the expected one, else empty;
    fixupdict maps value -> pass and '' -> fail."""
    return (re.escape(prefix) + "(?P<test_case_id>" + re.escape(case) + ")=" +
            "(?P<result>(?:" + re.escape(value) + r"(?=\r*\n))?)[^\r\n]*\r*\n")


def job_monitors(cell):
    """The monitors of one cell, in the order their text reaches the console."""
    name = cell["cell"]
    expect = cell["expect"]
    kunit = [t.split(":", 1)[1] for t in cell["tests"] if t.startswith("kunit:")]
    guest = guest_programs(cell)
    mons = []
    if "error" in expect:
        value = expect["error"]
        # early_param prints it while parsing the command line, before the
        # "policy=" boot line: fail closed means naming the value and full.
        mons.append({
            "name": name,
            "start": "Linux version [0-9]",
            "end": "sanitize_mem: policy=|" + UNTIL_INIT,
            "pattern": (r"sanitize_mem: (?P<test_case_id>invalid value) "
                        r"(?P<result>(?:" + re.escape(json.dumps(value)) +
                        r"(?= \([^\n]*applying full\r*\n))?)[^\n]*\n"),
            "fixupdict": {json.dumps(value): "pass", "": "fail"},
        })
    for suite in kunit:
        # Built-in KUnit suites run before /init, at depth 1 of the kernel's
        # KTAP document: cases are indented by 4 spaces.
        mons.append({
            "name": f"{name}.kunit.{suite}",
            "start": r"# Subtest: " + re.escape(suite) + r"(?=\s)|" + UNTIL_INIT,
            "end": (r"\n(?:\[[ 0-9.]+\] ?)?(?:not )?ok \d+ " + re.escape(suite) +
                    r"(?=\s)|" + UNTIL_INIT),
            "pattern": ktap_pattern(4),
            "fixupdict": KTAP_FIXUP,
        })
    # /init: "HARNESS: policy=<sysfs policy or none>", then "HARNESS: tests=".
    if "policy" in expect:
        mons.append({
            "name": name,
            "start": "(?=HARNESS: policy=)",
            "end": "HARNESS: tests=",
            "pattern": line_check("HARNESS: ", "policy", expect["policy"]),
            "fixupdict": {expect["policy"]: "pass", "": "fail"},
        })
    # /init's guest KTAP: one document, subtest "guest" at depth 1, each
    # program's own KTAP at depth 2 (8 spaces), closed by its depth-1 line.
    for i, prog in enumerate(guest):
        mons.append({
            "name": f"{name}.guest.{prog}",
            "start": (r"# Subtest: guest(?=\s)|" if i == 0 else r"(?=\n)|") + UNTIL_END,
            "end": (r"\n(?:\[[ 0-9.]+\] ?)? {4}(?:not )?ok \d+ " + re.escape(prog) +
                    r"(?=\s)|" + UNTIL_END),
            "pattern": ktap_pattern(8),
            "fixupdict": KTAP_FIXUP,
        })
    # The end marker, then busybox "reboot -f" makes the kernel print
    # "reboot: Restarting system": the case name is read from that line.
    mons.append({
        "name": name,
        "start": "(?=HARNESS: END)",
        "end": "reboot: Restarting system",
        "pattern": (r"HARNESS: (?P<result>END)"
                    r"(?=[\s\S]*?re(?P<test_case_id>boot): Restarting system)"),
        "fixupdict": {"END": "pass"},
    })
    for m in mons:
        if not re.fullmatch(r"[-_a-zA-Z0-9.]+", m["name"]):
            raise SystemExit(f"cell {name}: {m['name']!r} is not a valid LAVA monitor name")
        for key in ("start", "end", "pattern"):
            re.compile(m[key])
    return mons


def guest_programs(cell):
    return [t.split(":", 1)[1] for t in cell["tests"]
            if t.startswith("guest:") and t.split(":", 1)[1] not in HOST_ASSISTED]


def cmdline(cell):
    """tests/harness/run-cell.sh's command line (host-assisted programs left out)."""
    words = [BASE_CMDLINE]
    guest = guest_programs(cell)
    if guest:
        words.append("harness.tests=" + ",".join(guest))
    if cell["args"]:
        words.append(cell["args"])
    line = " ".join(words)
    if '"' in line or "'" in line or "{" in line:
        raise SystemExit(f"cell {cell['cell']}: quotes or braces in the kernel "
                         "command line cannot go through LAVA's image_arg")
    return line


def expected_results(cell):
    """What a complete run of the job reports, as (suite, case) patterns;
    a case of None means any number of cases, at least one."""
    name = cell["cell"]
    out = []
    if "error" in cell["expect"]:
        out.append((name, "invalid_value"))
    for t in cell["tests"]:
        kind, _, what = t.partition(":")
        if kind == "kunit":
            out.append((f"{name}.kunit.{what}", None))
        elif kind == "guest" and what not in HOST_ASSISTED:
            out.append((f"{name}.guest.{what}", None))
    if "policy" in cell["expect"]:
        out.append((name, "policy"))
    out.append((name, "boot"))
    return out


# --- the job ---------------------------------------------------------------------

def q(s):
    """A YAML double-quoted scalar (JSON strings are valid YAML); the
    template's q filter.  Not Jinja2's tojson, which escapes <, > and &
    for HTML."""
    return json.dumps(str(s), ensure_ascii=False)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def template():
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE),
                             undefined=jinja2.StrictUndefined, autoescape=False,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["q"] = q
    return env.get_template(TEMPLATE)


def job_context(cell, args):
    """What lava/job.yaml.j2 needs for one cell."""
    budget = int(cell["expect"].get("timeout", DEFAULT_TIMEOUT))
    kernel_rel = args.kernel_path.format(kernel=cell["kernel"])
    base = args.base_url.rstrip("/")
    line = cmdline(cell)
    images = []
    for label, url, arg, path in (
            ("kernel", f"{base}/{kernel_rel}", f'-kernel {{kernel}} -append "{line}"',
             os.path.join(args.build, kernel_rel)),
            ("ramdisk", f"{base}/{args.initrd_path}", "-initrd {ramdisk}",
             os.path.join(args.build, args.initrd_path))):
        digest = None
        if args.sha256:
            if not os.path.isfile(path):
                raise SystemExit(f"--sha256: {path} does not exist (build it first)")
            digest = sha256(path)
        images.append({"label": label, "url": url, "arg": arg, "sha256": digest})
    extra = [f"-smp {SMP}"]
    if args.accel == "tcg":
        extra.append("-cpu max")
    extra.append("-no-reboot")   # reboot -f (or a panic) ends QEMU
    return {
        "cell": cell,
        "expect_text": " ".join(f"{k}={v!r}" for k, v in cell["expect"].items()),
        "expect_json": json.dumps(cell["expect"], sort_keys=True),
        "left_out": [t for t in cell["tests"]
                     if t.startswith("guest:") and t.split(":", 1)[1] in HOST_ASSISTED],
        "budget": budget,
        "memory": cell["expect"].get("mem", MEMORY),
        "no_kvm": args.accel == "tcg",
        "extra_options": extra,
        "images": images,
        "monitors": job_monitors(cell),
    }


def check_job(text, cell):
    """The rendered job read back as LAVA's scheduler will: YAML with the
    actions, timeouts and monitors of the cell."""
    try:
        job = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise SystemExit(f"cell {cell['cell']}: the job is not YAML: {e}")
    for key in ("job_name", "device_type", "timeouts", "context", "actions"):
        if key not in job:
            raise SystemExit(f"cell {cell['cell']}: the job has no {key}")
    actions = [next(iter(a)) for a in job["actions"]]
    if actions != ["deploy", "boot", "test"]:
        raise SystemExit(f"cell {cell['cell']}: actions {actions}, expected deploy, boot, test")
    monitors = job["actions"][2]["test"]["monitors"]
    if [m["name"] for m in monitors] != [m["name"] for m in job_monitors(cell)]:
        raise SystemExit(f"cell {cell['cell']}: the job's monitors are not the cell's")
    return job


def render_job(cell, args):
    text = template().render(job_context(cell, args))
    check_job(text, cell)
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--matrix", default=os.path.join(TOP, "policy", "matrix"))
    ap.add_argument("--build", default=os.path.join(TOP, "build"),
                    help="where the artifacts are on this machine (for --sha256)")
    ap.add_argument("--out", default=os.path.join(TOP, "build", "lava", "jobs"))
    ap.add_argument("--base-url", default=None,
                    help="URL the lab downloads artifacts from "
                         "(default file://<build>, for lava-run on this machine)")
    ap.add_argument("--kernel-path", default="obj/{kernel}/arch/x86/boot/bzImage",
                    help="kernel below the base URL; {kernel} is a name of policy/kernels")
    ap.add_argument("--initrd-path", default="initramfs.cpio",
                    help="initramfs below the base URL (uncompressed newc cpio)")
    ap.add_argument("--accel", choices=("tcg", "kvm"), default="tcg",
                    help="tcg: context no_kvm and -cpu max (works everywhere); "
                         "kvm: the qemu device type's -cpu host -enable-kvm")
    ap.add_argument("--sha256", action="store_true",
                    help="pin the artifacts by checksum (needs them built)")
    ap.add_argument("--cell", action="append", help="only this cell (repeatable)")
    ap.add_argument("--list", action="store_true",
                    help="print the cells and what each job must report, write nothing")
    args = ap.parse_args(argv)
    if args.base_url is None:
        args.base_url = "file://" + os.path.abspath(args.build)

    cells = read_matrix(args.matrix)
    if args.cell:
        known = {c["cell"] for c in cells}
        for c in args.cell:
            if c not in known:
                raise SystemExit(f"no cell named {c!r} in {args.matrix}")
        cells = [c for c in cells if c["cell"] in args.cell]

    if args.list:
        for c in cells:
            want = " ".join(s + ("." + k if k else ".*") for s, k in expected_results(c))
            print(f"{c['cell']}\t{want}")
        return 0

    os.makedirs(args.out, exist_ok=True)
    for c in cells:
        path = os.path.join(args.out, f"{c['cell']}.yaml")
        text = render_job(c, args)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
        # The results a complete run must report, for lava/lava_verdict.py.
        with open(os.path.join(args.out, f"{c['cell']}.expect.json"), "w",
                  encoding="utf-8") as f:
            json.dump({"cell": c["cell"],
                       "results": [[s, k] for s, k in expected_results(c)],
                       "left_out": [t for t in c["tests"] if t.startswith("guest:")
                                    and t.split(":", 1)[1] in HOST_ASSISTED]},
                      f, indent=1)
            f.write("\n")
    print(f"lava: {len(cells)} job(s) in {os.path.relpath(args.out)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
