// SPDX-License-Identifier: GPL-2.0
/*
 * sanitize_bench - in-kernel microbenchmarks of the sanitize_mem fast paths
 * (issue 6, phase 2).  Standalone for now; the lead turns it into a patch of
 * the series as mm/sanitize_bench.c behind CONFIG_SANITIZE_MEM_BENCH
 * (tristate, depends on DEBUG_KERNEL); what it needs from the series is
 * listed at the end of this comment.
 *
 * Each benchmark does a fixed number of operations and reports the mean
 * cost of one in ktime nanoseconds.  Under QEMU "-icount shift=0,sleep=off"
 * a nanosecond is an instruction, so the figures are exact and repeatable
 * and comparable across kernels and policies.
 *
 *   kmalloc-N         kmalloc(N)/kfree() pairs, N = 8 B .. 8 KiB, in
 *                     batches of BATCH (allocate BATCH, free BATCH)
 *   cache-plain       kmem_cache_alloc/free on a 256 B cache
 *   cache-sanitize    the same on a SLAB_SANITIZE cache (series only)
 *   kmalloc-sens-N    kmalloc(N, GFP_KERNEL | __GFP_SENSITIVE)/kfree()
 *                     (series only); on a kernel without the flag the same
 *                     name measures kmalloc() + kfree_sensitive(), the
 *                     baseline the flag replaces
 *   page-oK           alloc_pages(GFP_KERNEL, K)/__free_pages(), K = 0..3
 *   page-oK-zero      the same with __GFP_ZERO: under sanitize_mem=pages
 *                     the page is already clean, so this should cost what
 *                     page-oK costs under "off" plus nothing (one clear,
 *                     moved to the free side, not two)
 *   vmalloc-N         vmalloc(N)/vfree(), N = 4 KiB, 64 KiB
 *
 * Output on the console, one line per benchmark, between a start and a
 * done line (not KTAP: this runs during boot, among KUnit's own KTAP):
 *
 *   sanitize_bench: BENCH <name> <ns per op> <ops>
 *
 * Built in, it runs at late_initcall when the command line has
 * sanitize_bench.run=1 (the bench boots of tests/bench/run-bench.sh would
 * add it); as a module it runs at insmod.  sanitize_bench.iters=N sets the
 * operations per benchmark (default 4096).  tests/bench/report.py reads
 * the BENCH lines from the icount boot (run-bench.sh passes
 * sanitize_bench.run=1 there) into bench.md and computes the __GFP_ZERO
 * target from page-o0 and page-o0-zero under "off" and "pages".
 *
 * What it needs from the series:
 *   - SLAB_SANITIZE, a slab_flags_t defined as a macro in <linux/slab.h>
 *     (as every SLAB_* flag of 6.12 is), so "#ifdef SLAB_SANITIZE" finds it;
 *   - __GFP_SENSITIVE, a gfp_t macro in <linux/gfp_types.h>, likewise;
 *   - nothing else: no exports beyond kmalloc/kfree/kfree_sensitive,
 *     kmem_cache_*, alloc_pages/__free_pages, vmalloc/vfree, ktime_get_ns,
 *     all EXPORT_SYMBOL in 6.12, so it also builds as a module against the
 *     vanilla tree (where the two benches above fall back or skip);
 *   - Kconfig: config SANITIZE_MEM_BENCH, tristate, "sanitize_mem
 *     microbenchmarks", depends on DEBUG_KERNEL (not on SANITIZE_MEM: the
 *     vanilla comparison needs the same file); obj-$(CONFIG_SANITIZE_MEM_BENCH)
 *     += sanitize_bench.o in mm/Makefile; and =y in a fragment that both
 *     kernels of the bench get (Kconfig-fragments/test.config), or the
 *     vanilla kernel cannot be compared.
 */
#define pr_fmt(fmt) "sanitize_bench: " fmt

#include <linux/gfp.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#define BATCH 32

static bool run;
module_param(run, bool, 0444);
MODULE_PARM_DESC(run, "run the benchmarks at boot (built in) or at load (module)");

static unsigned int iters = 4096;
module_param(iters, uint, 0444);
MODULE_PARM_DESC(iters, "operations per benchmark (rounded up to a batch)");

static void *objs[BATCH];
static struct page *pages[BATCH];
static unsigned int test_no;
static bool failed;

static void report(const char *name, u64 ns, unsigned long ops)
{
	test_no++;
	if (!ops) {
		pr_err("FAILED %s: allocation failed\n", name);
		failed = true;
		return;
	}
	pr_info("BENCH %s %llu %lu\n", name, div64_u64(ns, ops), ops);
}

static unsigned long rounds(void)
{
	return max_t(unsigned long, 1, DIV_ROUND_UP(iters, BATCH));
}

/* kmalloc(size, gfp) then free(): mean ns per pair; 0 ops on failure. */
static void bench_kmalloc(const char *name, size_t size, gfp_t gfp,
			  void (*free_fn)(const void *))
{
	unsigned long r, n = rounds(), ops = 0;
	u64 t0, t;
	int i;

	t0 = ktime_get_ns();
	for (r = 0; r < n; r++) {
		for (i = 0; i < BATCH; i++) {
			objs[i] = kmalloc(size, gfp);
			if (!objs[i])
				goto fail;
			/* a store, as a user would: the object is not just recycled */
			*(volatile char *)objs[i] = (char)i;
		}
		for (i = 0; i < BATCH; i++)
			free_fn(objs[i]);
		ops += BATCH;
		cond_resched();
	}
	t = ktime_get_ns() - t0;
	report(name, t, ops);
	return;
fail:
	while (--i >= 0)
		free_fn(objs[i]);
	report(name, 0, 0);
}

static void bench_cache(const char *name, slab_flags_t flags)
{
	unsigned long r, n = rounds(), ops = 0;
	struct kmem_cache *c;
	u64 t0, t;
	int i;

	c = kmem_cache_create(name, 256, 0, flags, NULL);
	if (!c) {
		report(name, 0, 0);
		return;
	}
	t0 = ktime_get_ns();
	for (r = 0; r < n; r++) {
		for (i = 0; i < BATCH; i++) {
			objs[i] = kmem_cache_alloc(c, GFP_KERNEL);
			if (!objs[i])
				goto fail;
			*(volatile char *)objs[i] = (char)i;
		}
		for (i = 0; i < BATCH; i++)
			kmem_cache_free(c, objs[i]);
		ops += BATCH;
		cond_resched();
	}
	t = ktime_get_ns() - t0;
	kmem_cache_destroy(c);
	report(name, t, ops);
	return;
fail:
	while (--i >= 0)
		kmem_cache_free(c, objs[i]);
	kmem_cache_destroy(c);
	report(name, 0, 0);
}

static void bench_pages(const char *name, unsigned int order, gfp_t gfp)
{
	unsigned long r, n = rounds(), ops = 0;
	u64 t0, t;
	int i;

	t0 = ktime_get_ns();
	for (r = 0; r < n; r++) {
		for (i = 0; i < BATCH; i++) {
			pages[i] = alloc_pages(gfp, order);
			if (!pages[i])
				goto fail;
		}
		for (i = 0; i < BATCH; i++)
			__free_pages(pages[i], order);
		ops += BATCH;
		cond_resched();
	}
	t = ktime_get_ns() - t0;
	report(name, t, ops);
	return;
fail:
	while (--i >= 0)
		__free_pages(pages[i], order);
	report(name, 0, 0);
}

static void bench_vmalloc(const char *name, unsigned long size)
{
	unsigned long r, n = max(1UL, rounds() / 4), ops = 0;
	u64 t0, t;
	int i;

	t0 = ktime_get_ns();
	for (r = 0; r < n; r++) {
		for (i = 0; i < BATCH; i++) {
			objs[i] = vmalloc(size);
			if (!objs[i])
				goto fail;
			*(volatile char *)objs[i] = (char)i;
		}
		for (i = 0; i < BATCH; i++)
			vfree(objs[i]);
		ops += BATCH;
		cond_resched();
	}
	t = ktime_get_ns() - t0;
	report(name, t, ops);
	return;
fail:
	while (--i >= 0)
		vfree(objs[i]);
	report(name, 0, 0);
}

static void kfree_plain(const void *p)
{
	kfree(p);
}

static void kfree_sens(const void *p)
{
	kfree_sensitive(p);
}

static const size_t kmalloc_sizes[] = { 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192 };
static const size_t sensitive_sizes[] = { 64, 256, 4096 };

static int sanitize_bench_run(void)
{
	char name[32];
	unsigned int k, ntests;

	ntests = ARRAY_SIZE(kmalloc_sizes) + 2 + ARRAY_SIZE(sensitive_sizes) + 8 + 2;
	test_no = 0;
	failed = false;
	pr_info("start: %u benchmarks, %u ops each (vmalloc: a quarter), batches of %d\n",
		ntests, (unsigned int)(rounds() * BATCH), BATCH);

	for (k = 0; k < ARRAY_SIZE(kmalloc_sizes); k++) {
		snprintf(name, sizeof(name), "kmalloc-%zu", kmalloc_sizes[k]);
		bench_kmalloc(name, kmalloc_sizes[k], GFP_KERNEL, kfree_plain);
	}

	bench_cache("cache-plain", 0);
#ifdef SLAB_SANITIZE
	bench_cache("cache-sanitize", SLAB_SANITIZE);
#else
	test_no++;
	pr_info("SKIP cache-sanitize: no SLAB_SANITIZE in this kernel\n");
#endif

	for (k = 0; k < ARRAY_SIZE(sensitive_sizes); k++) {
		snprintf(name, sizeof(name), "kmalloc-sens-%zu", sensitive_sizes[k]);
#ifdef __GFP_SENSITIVE
		bench_kmalloc(name, sensitive_sizes[k], GFP_KERNEL | __GFP_SENSITIVE,
			      kfree_plain);
#else
		/* the baseline the flag replaces: clear at every free site */
		bench_kmalloc(name, sensitive_sizes[k], GFP_KERNEL, kfree_sens);
#endif
	}

	for (k = 0; k <= 3; k++) {
		snprintf(name, sizeof(name), "page-o%u", k);
		bench_pages(name, k, GFP_KERNEL);
		snprintf(name, sizeof(name), "page-o%u-zero", k);
		bench_pages(name, k, GFP_KERNEL | __GFP_ZERO);
	}

	bench_vmalloc("vmalloc-4k", PAGE_SIZE);
	bench_vmalloc("vmalloc-64k", 64 * 1024);
	pr_info("done: %u benchmarks%s\n", test_no, failed ? ", some FAILED" : "");
	return failed ? -EIO : 0;
}

static int __init sanitize_bench_init(void)
{
	if (!run && IS_BUILTIN(CONFIG_SANITIZE_MEM_BENCH))
		return 0;
	return sanitize_bench_run();
}
late_initcall(sanitize_bench_init);

static void __exit sanitize_bench_exit(void)
{
}
module_exit(sanitize_bench_exit);

MODULE_DESCRIPTION("sanitize_mem microbenchmarks (kmalloc, caches, pages, vmalloc)");
MODULE_LICENSE("GPL");
