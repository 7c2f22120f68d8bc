#!/bin/sh
# The stress run of tests/guest/stress.sh with fault injection: the
# stressors' slab and page allocations fail at a small rate (failslab,
# fail_page_alloc from debugfs, verbose=0), and the faults injected at boot
# by failslab= / fail_page_alloc= on the cell's command line are counted.
# Needs a kernel with CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC and
# CONFIG_FAULT_INJECTION_DEBUG_FS (the debug flavour).
exec /usr/libexec/harness/stress faults
