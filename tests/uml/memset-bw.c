// SPDX-License-Identifier: GPL-2.0
/*
 * The host's memset bandwidth per size: the physical limit the UML
 * microbenchmark is set beside.  Clearing N bytes on free cannot cost
 * less than one memset of N bytes on this CPU, so bytes cleared divided
 * by this bandwidth is the floor of what a policy adds per alloc/free.
 *
 *   memset-bw SIZE...      one line per size:
 *   SIZE <bytes> libc <ns per memset> stosb <ns per memset>
 *
 * Each figure is the median of ROUNDS rounds; a round times enough
 * memsets of one buffer (hot in cache, like an object just written and
 * freed) to last about 2 ms, so clock_gettime()'s own cost vanishes.
 * "libc" is glibc's memset (what the host uses); "stosb" is rep stosb,
 * what the kernel's memset and clear_page reduce to on x86 with ERMS.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 15
#define ROUND_NS 2000000.0

/* Called through a volatile pointer so the compiler cannot inline,
 * merge or drop the stores: the buffer is never read. */
static void *(*volatile do_memset)(void *, int, size_t) = memset;

static void *stosb(void *p, int c, size_t n)
{
	void *d = p;

	asm volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
	return p;
}

static void *(*volatile do_stosb)(void *, int, size_t) = stosb;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median ns of one fn(buf, 0, size) over ROUNDS rounds. */
static double time_one(void *(*volatile *fn)(void *, int, size_t), char *buf, size_t size)
{
	double t[ROUNDS], t0, per;
	long reps = 16, i;
	int r;

	/* Calibrate: double the repetitions until a round lasts ROUND_NS. */
	for (;;) {
		t0 = now_ns();
		for (i = 0; i < reps; i++)
			(*fn)(buf, 0, size);
		per = now_ns() - t0;
		if (per >= ROUND_NS / 4 || reps > (1L << 30))
			break;
		reps *= 2;
	}
	reps = (long)(reps * ROUND_NS / (per > 0 ? per : 1)) + 1;
	for (r = 0; r < ROUNDS; r++) {
		t0 = now_ns();
		for (i = 0; i < reps; i++)
			(*fn)(buf, i & 0xff, size);
		t[r] = (now_ns() - t0) / reps;
	}
	qsort(t, ROUNDS, sizeof(t[0]), cmp);
	return t[ROUNDS / 2];
}

int main(int argc, char **argv)
{
	size_t max = 0, size;
	char *buf, *end;
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: %s SIZE...\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++) {
		size = strtoul(argv[i], &end, 0);
		if (!size || *end) {
			fprintf(stderr, "memset-bw: bad size %s\n", argv[i]);
			return 2;
		}
		if (size > max)
			max = size;
	}
	/* Page aligned, as slab objects of these sizes and pages are. */
	buf = aligned_alloc(4096, (max + 4095) & ~(size_t)4095);
	if (!buf) {
		perror("memset-bw");
		return 1;
	}
	memset(buf, 1, max);
	for (i = 1; i < argc; i++) {
		size = strtoul(argv[i], NULL, 0);
		printf("SIZE %zu libc %.2f stosb %.2f\n", size,
		       time_one(&do_memset, buf, size), time_one(&do_stosb, buf, size));
		fflush(stdout);
	}
	free(buf);
	return 0;
}
