"""The kernels' sizes for the bench report: `size` of each vmlinux and
`nm -S` of the allocator's fast paths (inlined helpers count in their
caller).  What make fastpath checks in the machine code is policy/fastpath;
this is only the report's table of bytes, and its list is not that one
(below).

Python 3 standard library only.
"""

import os
import shutil
import subprocess

# The symbols whose size bench.md compares, in the table's order.  Not
# policy/fastpath, on purpose: that file names the entry points whose
# machine code make fastpath proves (each under a rule, free or alloc),
# this the functions where the series' code lands, so its cost in bytes
# shows: the entry points, and the helpers they call out of line
# (__slab_free, free_pages_prepare, post_alloc_hook, ...), the task-exit
# and STACKLEAK paths (free_task, free_thread_stack, stackleak_erase),
# which no rule of policy/fastpath could check.  It leaves out the node
# variants of the allocation entries (kmem_cache_alloc_node_noprof,
# __kmalloc_node_track_caller_noprof): make fastpath checks them, but
# their code is their siblings' (slab_alloc_node inlined), so their rows
# would repeat those.  What the two lists must share is tested
# (tests/bench/test_report.py SizesTest): every free path that make
# fastpath checks has its size here.
SIZED_SYMBOLS = [
    "kfree", "kmem_cache_free", "kmem_cache_free_bulk", "__slab_free",
    "kmem_cache_alloc_noprof", "__kmalloc_noprof", "__kmalloc_cache_noprof",
    "free_unref_page", "free_unref_folios", "__free_pages", "__free_pages_ok",
    "free_pages_prepare", "free_pcppages_bulk", "post_alloc_hook",
    "prep_new_page", "get_page_from_freelist", "kfree_sensitive",
    "free_task", "free_thread_stack", "stackleak_erase",
]


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
                    if len(parts) == 4 and parts[2] in "tTwW" and parts[3] in SIZED_SYMBOLS:
                        syms[parts[3]] = syms.get(parts[3], 0) + int(parts[1], 16)
                ent["fast_paths"] = syms
            except subprocess.CalledProcessError as e:
                ent["error"] = "nm: %s" % e
    return out

