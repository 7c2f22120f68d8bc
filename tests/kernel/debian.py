#!/usr/bin/env python3
"""Debian's configuration for the distro areas, and where a kernel departs.

    debian.py fragment SRCDIR AREAS DEBIAN_CONFIG > debian.config
    debian.py diff SRCDIR AREAS DEBIAN_CONFIG DOTCONFIG NAME FRAGMENT...

"fragment" writes, for every option defined in the areas of AREAS
(Kconfig-fragments/distro.areas), Debian's value as a merge_config.sh
fragment: the line of Debian's file, "=m" built in (the guests load no
modules), and "is not set" for a bool or tristate with a prompt that
Debian's file does not mention (it was not even visible there: Debian's
value is n).  Other options Debian's file does not mention follow from the
others and are left to Kconfig.

"diff" prints, for the same options, every one where the built .config
differs from Debian's value, and why: asked for by a later fragment of the
kernel (policy/kernels), built in instead of a module, or a dependency that
is off here (named, with its value here and in Debian's file), or selected
here by an option that is on.  The last line counts them.

The Kconfig language is read only as far as this needs: entries, their
prompts, "depends on", "select", the "if" blocks around them and "source".
"""
import lzma
import os
import re
import sys

ENTRY = re.compile(r"^\s*(config|menuconfig)\s+(\w+)")
PROMPT = re.compile(r'^\s*(bool|tristate|int|hex|string|prompt)\s+"')
TYPE = re.compile(r"^\s*(bool|tristate|int|hex|string|def_bool|def_tristate)\b")
DEPENDS = re.compile(r"^\s*depends\s+on\s+(.*)")
SELECT = re.compile(r"^\s*(select|imply)\s+(\w+)(\s+if\s+(.*))?")
SOURCE = re.compile(r'^\s*(o?source|rsource)\s+"([^"]+)"')
IF = re.compile(r"^\s*if\s+(.*)")
ENDIF = re.compile(r"^\s*endif\b")
IDENT = re.compile(r"\b[A-Z][A-Z0-9_]+\b")
# Lines that end an entry's attributes.
BLOCKWORD = re.compile(r"^\s*(config|menuconfig|choice|endchoice|menu|endmenu|if|endif|"
                       r"comment|source|osource|rsource|mainmenu)\b")


def die(msg):
    sys.exit(f"debian.py: {msg}")


class Kconfig:
    """Every entry of every Kconfig file of a tree: symbol -> definitions."""

    def __init__(self, src):
        self.src = src
        self.defs = {}          # symbol -> [{"file", "line", "prompt", "deps", "selects"}]
        self.selected_by = {}   # symbol -> [(selector, condition)]
        for root, dirs, files in os.walk(src):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for name in files:
                if name.startswith("Kconfig"):
                    self._read(os.path.join(root, name))

    def _read(self, path):
        rel = os.path.relpath(path, self.src)
        ifs, cur = [], None
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.read().split("\n")
        except OSError:
            return
        for n, line in enumerate(lines, 1):
            m = ENTRY.match(line)
            if m:
                cur = {"file": rel, "line": n, "prompt": False, "type": None,
                       "deps": list(ifs), "selects": []}
                self.defs.setdefault(m.group(2), []).append(cur)
                cur["symbol"] = m.group(2)
                continue
            if BLOCKWORD.match(line):
                cur = None
                if IF.match(line):
                    ifs.append(IF.match(line).group(1).split("#")[0].strip())
                elif ENDIF.match(line) and ifs:
                    ifs.pop()
                continue
            if cur is None:
                continue
            if PROMPT.match(line):
                cur["prompt"] = True
            m = TYPE.match(line)
            if m and cur["type"] is None:
                cur["type"] = m.group(1).replace("def_", "")
            m = DEPENDS.match(line)
            if m:
                cur["deps"].append(m.group(1).split("#")[0].strip())
            m = SELECT.match(line)
            if m and m.group(1) == "select":
                self.selected_by.setdefault(m.group(2), []).append(
                    (cur["symbol"], (m.group(4) or "").strip()))

    def can_be_off(self, sym):
        """A bool or tristate the user could set: absent from a .config means n."""
        defs = self.defs.get(sym, [])
        return (any(d["prompt"] for d in defs)
                and any(d["type"] in ("bool", "tristate") for d in defs))


def read_areas(path):
    """distro.areas: [(area, file, kind, args)]."""
    areas = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            words = re.findall(r'"((?:[^"\\]|\\.)*)"|(\S+)', line)
            words = [q.replace('\\"', '"') if q else w for q, w in words]
            if len(words) < 2:
                die(f"{path}:{lineno}: expected 'area file [block FIRST LAST | symbols NAME...]'")
            area, kfile, rest = words[0], words[1], words[2:]
            if not rest:
                areas.append((area, kfile, "file", []))
            elif rest[0] == "block" and len(rest) == 3:
                areas.append((area, kfile, "block", rest[1:]))
            elif rest[0] == "symbols" and len(rest) > 1:
                areas.append((area, kfile, "symbols", rest[1:]))
            else:
                die(f"{path}:{lineno}: cannot read {' '.join(rest)!r} "
                    "(expected block \"FIRST\" \"LAST\" or symbols NAME...)")
    return areas


def file_symbols(src, rel, first=None, last=None, seen=None):
    """Symbols defined in a Kconfig file (between two lines), and its sources."""
    seen = set() if seen is None else seen
    path = os.path.join(src, rel.replace("$(SRCARCH)", "x86"))
    if path in seen:
        return []
    seen.add(path)
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError:
        die(f"{rel}: no such Kconfig file in {src} (Kconfig-fragments/distro.areas)")
    inside = first is None
    found_first = found_last = first is None
    syms = []
    for line in lines:
        if not inside and line.strip() == first:
            inside = found_first = True
        if inside:
            m = ENTRY.match(line)
            if m:
                syms.append(m.group(2))
            m = SOURCE.match(line)
            if m:
                inc = m.group(2)
                if m.group(1) == "rsource":
                    inc = os.path.join(os.path.dirname(rel), inc)
                syms += file_symbols(src, inc, seen=seen)
        if first is not None and inside and line.strip() == last:
            found_last = True
            break
    if not (found_first and found_last):
        die(f"{rel}: the block {first!r} .. {last!r} of Kconfig-fragments/distro.areas "
            "is not in this tree")
    return syms


def area_symbols(src, areas, kconfig):
    """{symbol: area} for every option of the areas, in order."""
    out = {}
    for area, kfile, kind, args in areas:
        if kind == "symbols":
            for s in args:
                if s not in kconfig.defs:
                    die(f"distro.areas: area {area}: no option {s} in {kfile}")
                out.setdefault(s, area)
        else:
            first, last = (args if kind == "block" else (None, None))
            for s in file_symbols(src, kfile, first, last):
                out.setdefault(s, area)
    return out


def read_config(path):
    """A .config (plain or .xz) as {symbol: value}; "n" for "is not set"."""
    opener = lzma.open if path.endswith(".xz") else open
    values = {}
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            for line in f:
                m = re.match(r"^CONFIG_(\w+)=(.*)$", line)
                if m:
                    values[m.group(1)] = m.group(2)
                    continue
                m = re.match(r"^# CONFIG_(\w+) is not set$", line)
                if m:
                    values[m.group(1)] = "n"
    except OSError as e:
        die(f"cannot read {path}: {e.strerror}"
            + (" (install the Debian package linux-config-6.12)" if "linux-config" in path else ""))
    return values


def debian_value(sym, debian, kconfig):
    """Debian's value, or None where it cannot be told (no prompt, not in the file)."""
    if sym in debian:
        return debian[sym]
    return "n" if kconfig.can_be_off(sym) else None


def cmd_fragment(src, areas_path, debian_path):
    kconfig = Kconfig(src)
    syms = area_symbols(src, read_areas(areas_path), kconfig)
    debian = read_config(debian_path)
    print(f"# Debian's values ({os.path.basename(debian_path)}) for the options of the areas of")
    print("# Kconfig-fragments/distro.areas; made by tests/kernel/debian.py, not edited.")
    current = None
    for sym, area in syms.items():
        value = debian_value(sym, debian, kconfig)
        if value is None:
            continue
        if area != current:
            print(f"# area {area}")
            current = area
        if value == "n":
            print(f"# CONFIG_{sym} is not set")
        else:
            print(f"CONFIG_{sym}={'y' if value == 'm' else value}")


def fragment_lines(paths):
    """{symbol: fragment basename} of the last fragment that sets each."""
    last = {}
    for p in paths:
        for sym in read_config(p):
            last[sym] = os.path.basename(p)
    return last


def why(sym, here, debian, built, kconfig, asked):
    if sym in asked:
        return f"asked for by {asked[sym]}"
    dvalue = debian.get(sym, "n")
    if dvalue == "m" and here.get(sym) == "y":
        return "built in: the guests load no modules"
    reasons = []
    if here.get(sym, "n") == "n":
        for d in kconfig.defs.get(sym, []):
            for dep in d["deps"]:
                off = [s for s in IDENT.findall(dep)
                       if s in kconfig.defs and here.get(s, "n") == "n"]
                for s in off:
                    reasons.append(f"depends on {s} (here n, Debian {debian.get(s, 'n')}"
                                   f"{', ' + asked[s] if s in asked else ''})")
        if not reasons:
            sel = sorted({x for x, _ in kconfig.selected_by.get(sym, [])
                          if debian.get(x, "n") != "n" and here.get(x, "n") == "n"})
            if sel:
                more = f" and {len(sel) - 4} more" if len(sel) > 4 else ""
                reasons.append("selected in Debian by " + ", ".join(sel[:4]) + more +
                               " (here n: outside the distro areas)")
            else:
                reasons.append("no dependency of its own is off here: "
                               "a choice or a default decided by the base")
    else:
        on = [s for s, _ in kconfig.selected_by.get(sym, []) if here.get(s, "n") != "n"]
        if on:
            reasons.append("selected by " + ", ".join(
                f"{s}{' (' + asked[s] + ')' if s in asked else ''}" for s in sorted(set(on))))
        else:
            reasons.append("a default or a range that follows from the base")
    seen, out = set(), []
    for r in reasons:
        if r not in seen:
            seen.add(r)
            out.append(r)
    return "; ".join(out)


def cmd_diff(src, areas_path, debian_path, dotconfig, name, fragments):
    kconfig = Kconfig(src)
    syms = area_symbols(src, read_areas(areas_path), kconfig)
    debian = read_config(debian_path)
    built = read_config(dotconfig)
    asked = {s: f for s, f in fragment_lines(fragments).items()}
    rows = []
    for sym, area in syms.items():
        want = debian_value(sym, debian, kconfig)
        if want is None:
            continue
        have = built.get(sym, "n")
        if have == want:
            continue
        rows.append((area, sym, want, have, why(sym, built, debian, built, kconfig, asked)))
    print(f"# {name}: options of Kconfig-fragments/distro.areas where build/obj/{name}/.config "
          f"differs from Debian's {os.path.basename(debian_path)}")
    width = max([len(r[1]) for r in rows] + [10])
    for area, sym, want, have, reason in rows:
        print(f"{area:<11} CONFIG_{sym:<{width}} debian={want:<6} here={have:<6} {reason}")
    print(f"{name}: {len(rows)} of {len(syms)} options differ from Debian's")


def main(argv):
    if len(argv) >= 4 and argv[0] == "fragment" and len(argv) == 4:
        cmd_fragment(*argv[1:4])
    elif len(argv) >= 6 and argv[0] == "diff":
        cmd_diff(argv[1], argv[2], argv[3], argv[4], argv[5], argv[6:])
    else:
        sys.exit(__doc__.strip().split("\n\n")[0])


if __name__ == "__main__":
    main(sys.argv[1:])
