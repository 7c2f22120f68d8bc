#!/usr/bin/env python3
"""What a disabled sanitize_mem costs on the free fast paths, read from the
machine code.

For each function, the instructions that can run while every static key is
in its initial state (sanitize_mem=off, init_on_free off) are those
reachable from the entry when a jump-label site is taken as what the
compiler emitted: a NOP falls through, so the out-of-line block behind a
disabled key is unreachable, while both directions of every ordinary
conditional branch are followed.  That reachable code of the patched kernel
is compared with the vanilla kernel's: it may gain jump-label NOPs, but no
call, no instruction touching memory, no other instruction and no deeper
frame.  A call may replace code vanilla inlined when policy/fastpath
names its target "outline" (a rare case moved out of line, with the test
of a mark folded into the test vanilla made for it): the reachable code
must then still not grow.

The functions and the rule each is held to are policy/fastpath's.  The
allocation fast paths ("alloc") are held to a weaker rule, since a
__GFP_SENSITIVE allocation has to be marked whatever the keys say: the
reachable code of each may call nothing that
vanilla's does not call but a sanitize_mem_* helper.  A hook that makes
the compiler stop inlining a helper (post_alloc_hook() into
get_page_from_freelist() once cost 0.4% of a tmpfs loop with every key
off) shows as a call to it; a hook that makes the prologue save one more
register (the slab verify hook once did, in every kmalloc() variant) shows
as a deeper frame, which every allocating syscall pays in STACKLEAK's
erase.

usage: fastpath.py VANILLA_VMLINUX PATCHED_VMLINUX OUTDIR [--fastpath policy/fastpath]
Writes OUTDIR/<function>.{vanilla,patched}.s (the reachable code),
OUTDIR/<function>.diff, and OUTDIR/result.json (one test per function).
"""

import argparse
import os
import re
import subprocess
import sys
import difflib

from harness import policy
from harness import result_json

INSN = re.compile(r"^\s*([0-9a-f]+):\s+(.*?)\s*$")
TARGET = re.compile(r"\b([0-9a-f]{16}) <([^>+]+)(?:\+0x([0-9a-f]+))?>")
TARGET_NAME = re.compile(r"<([^>+]+)>")
UNCONDITIONAL_END = ("ret", "jmp", "ud2", "int3", "hlt")


def disassemble(vmlinux, function):
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--disassemble={function}",
                          vmlinux], capture_output=True, text=True, check=True).stdout
    insns = []
    for line in out.splitlines():
        m = INSN.match(line)
        if m and m.group(2):
            insns.append((int(m.group(1), 16), m.group(2)))
    if not insns:
        raise SystemExit(f"fastpath: {function} not found in {vmlinux}")
    return insns


def mnemonic(text):
    words = text.split()
    # Prefixes such as "lock", "rep", "notrack", "bnd" come before the verb.
    while words and words[0] in ("lock", "rep", "repz", "repnz", "notrack", "bnd", "cs", "ds"):
        words = words[1:]
    return words[0] if words else ""


def is_nop(text):
    m = mnemonic(text)
    return m.startswith("nop") or text.startswith("xchg   %ax,%ax") or m == "endbr64"


REG = re.compile(r"%(r[0-9]+[dwb]?|[re]?[abcd]x|[abcd][lh]|[re]?(?:si|di|bp|sp)|(?:si|di|bp|sp)l)\b")
CALLER_SAVED = {"rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11"}
NO_WRITE = ("cmp", "test", "push", "j", "call", "ret", "nop", "bt", "endbr", "ud2", "int3",
            "prefetch", "clflush", "lfence", "mfence", "sfence", "pause", "out", "wrmsr")


def register(name):
    """The 64-bit register an operand name is part of."""
    name = name.lstrip("%")
    m = re.fullmatch(r"r([0-9]+)[dwb]?", name)
    if m:
        return "r" + m.group(1)
    m = re.fullmatch(r"[re]?([abcd])[xlh]", name)
    if m:
        return "r" + m.group(1) + "x"
    m = re.fullmatch(r"[re]?(si|di|bp|sp)l?", name)
    if m:
        return "r" + m.group(1)
    return name


def written(text):
    """(register, constant or None) the instruction writes, or None."""
    verb = mnemonic(text)
    if verb.startswith(NO_WRITE):
        return None
    ops = text.split(None, 1)[1] if " " in text.strip() else ""
    ops = ops.split("#")[0].strip()
    last = ops.rsplit(",", 1)[-1].strip()
    if not re.fullmatch(r"%[a-z0-9]+", last):
        return None
    reg = register(last)
    if verb.startswith("xor") and ops.count(",") == 1:
        a, b = (register(x.strip()) for x in ops.split(","))
        if a == b:
            return reg, 0
    m = re.fullmatch(r"\$0x([0-9a-f]+),\s*%[a-z0-9]+", ops)
    if verb.startswith("mov") and m:
        return reg, int(m.group(1), 16)
    return reg, None


def successors(insns, index, i, zero):
    """Where control can go from instruction i, given the registers known
    to hold zero there."""
    text = insns[i][1]
    verb = mnemonic(text)
    target = TARGET.search(text)
    local = target and int(target.group(1), 16) in index and "*" not in text
    if verb.startswith("j"):
        out = [index[int(target.group(1), 16)]] if local else []
        if verb == "jmp":
            return out
        # "test %r,%r" then je/jne on a register known to be zero.
        prev = insns[i - 1][1] if i else ""
        m = re.fullmatch(r"test\s+(%[a-z0-9]+),\s*(%[a-z0-9]+)", prev.strip())
        if m and register(m.group(1)) == register(m.group(2)) and \
                register(m.group(1)) in zero and verb in ("je", "jz", "jne", "jnz"):
            return out if verb in ("je", "jz") else [i + 1]
        return out + [i + 1]
    if verb in UNCONDITIONAL_END or verb.startswith("ret"):
        return []
    return [i + 1]


SLOT = re.compile(r"-?0x[0-9a-f]+\(%rbp\)")


def transfer(text, zero):
    """Registers (and %rbp stack slots, where a flag is spilled around a
    call) known to be zero after the instruction."""
    verb = mnemonic(text)
    if verb.startswith("call"):
        return zero - CALLER_SAVED
    ops = text.split(None, 1)[1].split("#")[0].strip() if " " in text.strip() else ""
    parts = [x.strip() for x in ops.split(",")] if ops else []
    if verb.startswith("mov") and len(parts) == 2:
        src, dst = parts
        if SLOT.fullmatch(dst):
            known = src == "$0x0" or (src.startswith("%") and register(src) in zero)
            return zero | {dst} if known else zero - {dst}
        if SLOT.fullmatch(src) and dst.startswith("%"):
            return zero | {register(dst)} if src in zero else zero - {register(dst)}
    if parts and SLOT.fullmatch(parts[-1]) and not verb.startswith(NO_WRITE):
        return zero - {parts[-1]}
    w = written(text)
    if not w:
        return zero
    return zero | {w[0]} if w[1] == 0 else zero - {w[0]}


def reachable(insns):
    """Indices of instructions reachable with every static key in its
    initial state.  Jump-label NOPs fall through, so the code behind a
    disabled key is unreachable.  A flag the compiler derived from such a
    key (init = want_init_on_free()) lives in a register that the
    fall-through path sets to zero: a forward data flow of the registers
    known to be zero lets a branch on it go one way only.  Every other
    branch is followed both ways."""
    index = {addr: i for i, (addr, _) in enumerate(insns)}
    state = {0: frozenset()}
    todo = [0]
    while todo:
        i = todo.pop()
        if i >= len(insns):
            continue
        after = frozenset(transfer(insns[i][1], state[i]))
        for j in successors(insns, index, i, state[i]):
            if j >= len(insns):
                continue
            joined = after if j not in state else state[j] & after
            if j not in state or joined != state[j]:
                state[j] = joined
                todo.append(j)
    return sorted(i for i in state if i < len(insns))


def normalise(text):
    """An instruction without addresses or offsets that move between builds."""
    text = TARGET.sub(lambda m: f"<{m.group(2)}>", text)
    text = re.sub(r"-?0x[0-9a-f]+\(%rip\)", "(%rip)", text)
    text = re.sub(r"%gs:-?0x[0-9a-f]+(\(%rip\))?", "%gs:X", text)
    text = re.sub(r"#.*?<([^>+]+)(\+0x[0-9a-f]+)?>", r"# <\1>", text)
    text = re.sub(r"# [0-9a-f]+ ", "# ", text)
    return re.sub(r"\s+", " ", text).strip()


def profile(code):
    """Calls by target, memory-touching instructions and all non-NOPs."""
    calls, memory, other = [], [], []
    for text in code:
        if is_nop(text):
            continue
        verb = mnemonic(text)
        if verb.startswith("call"):
            calls.append(normalise(text))
        elif "(" in text and verb != "lea" or "%gs:" in text:
            memory.append(normalise(text))
        other.append(normalise(text))
    return calls, memory, other


def check(vanilla, patched, outdir, function, outlined=()):
    v_insns, p_insns = disassemble(vanilla, function), disassemble(patched, function)
    v_code = [v_insns[i][1] for i in reachable(v_insns)]
    p_code = [p_insns[i][1] for i in reachable(p_insns)]
    for name, code in (("vanilla", v_code), ("patched", p_code)):
        with open(os.path.join(outdir, f"{function}.{name}.s"), "w", encoding="utf-8") as f:
            f.write("\n".join(code) + "\n")
    diff = list(difflib.unified_diff([normalise(x) for x in v_code],
                                     [normalise(x) for x in p_code],
                                     f"{function} (vanilla)", f"{function} (patched, keys off)",
                                     lineterm="", n=2))
    with open(os.path.join(outdir, f"{function}.diff"), "w", encoding="utf-8") as f:
        f.write("\n".join(diff) + "\n")

    (vc, vm, vo), (pc, pm, po) = profile(v_code), profile(p_code)
    moved = [c for c in pc if TARGET_NAME.search(c) and TARGET_NAME.search(c).group(1) in outlined]
    extra_calls = [c for c in pc if pc.count(c) > vc.count(c) and c not in moved]
    nops = sum(1 for x in p_code if is_nop(x)) - sum(1 for x in v_code if is_nop(x))
    v_frame, p_frame = frame_bytes(v_insns), frame_bytes(p_insns)
    facts = (f"reachable with keys off: vanilla {len(vo)} instructions, {len(vc)} calls, "
             f"{len(vm)} memory accesses, frame {v_frame} bytes; patched {len(po)}, "
             f"{len(pc)}, {len(pm)}, {p_frame}; jump-label/other NOPs {nops:+d}"
             + (f"; moved out of line: {', '.join(sorted(set(TARGET_NAME.search(c).group(1) for c in moved)))}"
                if moved else ""))
    if extra_calls:
        return "FAIL", f"{facts}; added calls: {sorted(set(extra_calls))}"
    if len(pm) > len(vm):
        return "FAIL", f"{facts}; {len(pm) - len(vm)} added memory accesses (see {function}.diff)"
    if len(po) > len(vo):
        return "FAIL", f"{facts}; {len(po) - len(vo)} added instructions (see {function}.diff)"
    if p_frame > v_frame:
        return "FAIL", f"{facts}; a frame {p_frame - v_frame} bytes deeper than vanilla's"
    return "PASS", facts


def check_outline(vanilla, patched, function):
    """An "outline" function holds code the patched kernel moved out of
    line: it exists in the patched kernel only."""
    if symbol_in(vanilla, function):
        return "FAIL", f"{function} is in vanilla too: nothing was moved into it"
    if not symbol_in(patched, function):
        return "FAIL", f"{function} is not in the patched kernel"
    return "PASS", f"{function}: in the patched kernel only"


def symbol_in(vmlinux, function):
    out = subprocess.run(["nm", vmlinux], capture_output=True, text=True, check=True).stdout
    return any(line.split()[-1] == function for line in out.splitlines() if line.strip())


def callees(code):
    """The functions a piece of code calls directly."""
    out = set()
    for text in code:
        if mnemonic(text).startswith("call"):
            m = TARGET.search(text)
            if m and "*" not in text:
                out.add(m.group(2))
    return out


SUB_RSP = re.compile(r"^sub\s+\$0x([0-9a-f]+),%rsp$")


def frame_bytes(insns):
    """The stack the prologue takes: pushes and a "sub $N,%rsp" before the
    first branch, call or return."""
    size = 0
    for _, text in insns:
        m = mnemonic(text)
        if m.startswith(("j", "call", "ret")):
            break
        if m == "push":
            size += 8
        sub = SUB_RSP.match(text)
        if sub:
            size += int(sub.group(1), 16)
    return size


def check_inline(vanilla, patched, function):
    v_insns, p_insns = disassemble(vanilla, function), disassemble(patched, function)
    v_calls = callees(v_insns[i][1] for i in reachable(v_insns))
    p_calls = callees(p_insns[i][1] for i in reachable(p_insns))
    added = sorted(c for c in p_calls - v_calls if not c.startswith("sanitize_mem_"))
    v_frame, p_frame = frame_bytes(v_insns), frame_bytes(p_insns)
    facts = (f"calls reachable with keys off: vanilla {len(v_calls)} functions, "
             f"patched {len(p_calls)}; frame: vanilla {v_frame} bytes, patched {p_frame}")
    problems = []
    if added:
        problems.append("calls what vanilla inlines or does not call: " + ", ".join(added))
    # A hook whose call keeps one more value live saves one more register
    # in the prologue: every syscall that allocates then reaches deeper
    # into its stack, which STACKLEAK erases on the way out.
    if p_frame > v_frame:
        problems.append(f"a frame {p_frame - v_frame} bytes deeper than vanilla's")
    if problems:
        return "FAIL", f"{facts}; " + "; ".join(problems)
    return "PASS", facts


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("vanilla", help="vmlinux of the kernel without the series")
    p.add_argument("patched", help="vmlinux of the kernel with it")
    p.add_argument("outdir", help="the reachable code, the diffs and result.json go here")
    p.add_argument("--fastpath", default=policy.FASTPATH,
                   help="the functions and their rules")
    args = p.parse_args(argv)
    functions = policy.read_fastpath(args.fastpath)
    vanilla, patched, outdir = args.vanilla, args.patched, args.outdir
    os.makedirs(outdir, exist_ok=True)
    tests = []
    for fn in functions["free"]:
        status, message = check(vanilla, patched, outdir, fn, functions["outline"])
        print(f"fastpath: {status} {fn}: {message}")
        tests.append(result_json.test(f"fastpath.{fn}", status, message))
    for fn in functions["outline"]:
        status, message = check_outline(vanilla, patched, fn)
        print(f"fastpath: {status} outline {fn}: {message}")
        tests.append(result_json.test(f"fastpath.outline.{fn}", status, message))
    for fn in functions["alloc"]:
        status, message = check_inline(vanilla, patched, fn)
        print(f"fastpath: {status} inline {fn}: {message}")
        tests.append(result_json.test(f"fastpath.inline.{fn}", status, message))
    result_json.write(outdir, cell="fastpath", kernel="patched", args="sanitize_mem=off",
                     log=os.path.basename(outdir), tests=tests)
    return 0 if all(t["status"] == "PASS" for t in tests) else 1


if __name__ == "__main__":
    sys.exit(main())
