"""The kernels' sizes for the bench report: `size` of each vmlinux and
`nm -S` of the allocator's fast paths (inlined helpers count in their
caller).  What make fastpath checks in the machine code is policy/fastpath;
this is only the report's table of bytes.

Python 3 standard library only.
"""

import os
import shutil
import subprocess

# Free (and matching alloc) fast paths whose size is worth comparing.
FAST_PATHS = [
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
                    if len(parts) == 4 and parts[2] in "tTwW" and parts[3] in FAST_PATHS:
                        syms[parts[3]] = syms.get(parts[3], 0) + int(parts[1], 16)
                ent["fast_paths"] = syms
            except subprocess.CalledProcessError as e:
                ent["error"] = "nm: %s" % e
    return out

