// SPDX-License-Identifier: GPL-2.0
/*
 * lifetime - what runs in a channel's child: its result (fail, skip, note),
 * scrubbing its own copies, the decoy pages, holding until the release,
 * helper processes, and the exit (see main.c for the protocol).
 */
#include "lifetime.h"

#include <signal.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

int __attribute__((format(printf, 2, 3))) fail(struct result *r, const char *fmt, ...)
{
	int e = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
	errno = e;
	return -1;
}

/*
 * The kernel lacks what the channel needs: return 0 without holding, and
 * the channel is reported as a KTAP SKIP with this reason.  Only before
 * the secret is derived, so that a skipped channel leaves nothing to find.
 */
int __attribute__((format(printf, 2, 3))) skip(struct result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->skipped, sizeof(r->skipped), fmt, ap);
	va_end(ap);
	return 0;
}

void __attribute__((format(printf, 2, 3))) note(struct result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->note, sizeof(r->note), fmt, ap);
	va_end(ap);
}

/* Keep the compiler from eliding writes to a buffer it thinks is dead. */
void touch(const void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

void scrub(void *p, size_t n)
{
	explicit_bzero(p, n);
}

/*
 * Zero the vector registers: a secret that went through memcpy() or a
 * vectorised loop may sit in one, and the kernel saves them into the
 * task's FPU state (slab memory) at the next context switch, a copy that
 * would be blamed on the channel.
 */
void clear_vector_regs(void)
{
#if defined(__x86_64__)
	if (__builtin_cpu_supports("avx512f"))
		__asm__ volatile(
			"vpxorq %%xmm16, %%xmm16, %%xmm16\n\t"
			"vpxorq %%xmm17, %%xmm17, %%xmm17\n\t"
			"vpxorq %%xmm18, %%xmm18, %%xmm18\n\t"
			"vpxorq %%xmm19, %%xmm19, %%xmm19\n\t"
			"vpxorq %%xmm20, %%xmm20, %%xmm20\n\t"
			"vpxorq %%xmm21, %%xmm21, %%xmm21\n\t"
			"vpxorq %%xmm22, %%xmm22, %%xmm22\n\t"
			"vpxorq %%xmm23, %%xmm23, %%xmm23\n\t"
			"vpxorq %%xmm24, %%xmm24, %%xmm24\n\t"
			"vpxorq %%xmm25, %%xmm25, %%xmm25\n\t"
			"vpxorq %%xmm26, %%xmm26, %%xmm26\n\t"
			"vpxorq %%xmm27, %%xmm27, %%xmm27\n\t"
			"vpxorq %%xmm28, %%xmm28, %%xmm28\n\t"
			"vpxorq %%xmm29, %%xmm29, %%xmm29\n\t"
			"vpxorq %%xmm30, %%xmm30, %%xmm30\n\t"
			"vpxorq %%xmm31, %%xmm31, %%xmm31\n\t" : : : "memory");
	if (__builtin_cpu_supports("avx"))
		__asm__ volatile("vzeroall" : : : "memory", "xmm0", "xmm1", "xmm2",
				 "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
				 "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
	else
		__asm__ volatile(
			"pxor %%xmm0, %%xmm0\n\tpxor %%xmm1, %%xmm1\n\t"
			"pxor %%xmm2, %%xmm2\n\tpxor %%xmm3, %%xmm3\n\t"
			"pxor %%xmm4, %%xmm4\n\tpxor %%xmm5, %%xmm5\n\t"
			"pxor %%xmm6, %%xmm6\n\tpxor %%xmm7, %%xmm7\n\t"
			"pxor %%xmm8, %%xmm8\n\tpxor %%xmm9, %%xmm9\n\t"
			"pxor %%xmm10, %%xmm10\n\tpxor %%xmm11, %%xmm11\n\t"
			"pxor %%xmm12, %%xmm12\n\tpxor %%xmm13, %%xmm13\n\t"
			"pxor %%xmm14, %%xmm14\n\tpxor %%xmm15, %%xmm15"
			: : : "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4",
			  "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
			  "xmm12", "xmm13", "xmm14", "xmm15");
#elif defined(__aarch64__)
	/* The 32 Advanced SIMD registers (SVE's Z registers extend them). */
	__asm__ volatile(
		"movi v0.16b, #0\n\tmovi v1.16b, #0\n\tmovi v2.16b, #0\n\t"
		"movi v3.16b, #0\n\tmovi v4.16b, #0\n\tmovi v5.16b, #0\n\t"
		"movi v6.16b, #0\n\tmovi v7.16b, #0\n\tmovi v8.16b, #0\n\t"
		"movi v9.16b, #0\n\tmovi v10.16b, #0\n\tmovi v11.16b, #0\n\t"
		"movi v12.16b, #0\n\tmovi v13.16b, #0\n\tmovi v14.16b, #0\n\t"
		"movi v15.16b, #0\n\tmovi v16.16b, #0\n\tmovi v17.16b, #0\n\t"
		"movi v18.16b, #0\n\tmovi v19.16b, #0\n\tmovi v20.16b, #0\n\t"
		"movi v21.16b, #0\n\tmovi v22.16b, #0\n\tmovi v23.16b, #0\n\t"
		"movi v24.16b, #0\n\tmovi v25.16b, #0\n\tmovi v26.16b, #0\n\t"
		"movi v27.16b, #0\n\tmovi v28.16b, #0\n\tmovi v29.16b, #0\n\t"
		"movi v30.16b, #0\n\tmovi v31.16b, #0"
		: : : "memory", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7",
		  "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16",
		  "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25",
		  "v26", "v27", "v28", "v29", "v30", "v31");
#endif
}

/*
 * Decoy pages.  An exiting process takes a page from the allocator before
 * it frees any of its own (the mmu_gather batch page, once more than 6
 * pages are to be unmapped), an unmovable kernel page, and the allocator
 * hands out the unmovable page freed last on that CPU: a page the channel
 * has just released (a pipe page its reader freed, an AF_ALG TX page),
 * whose secret the batch's pointers overwrite.  So every process of a
 * channel holds DECOY_PAGES unmovable pages of its own, the buffers of a
 * pipe filled with zeroes at its start, and closes that pipe right before
 * it exits, which frees them with no allocation: its exit takes decoys,
 * not the channel's pages.  (User pages are movable, on another free
 * list: free anonymous memory would be no decoy.)  On a kernel that
 * clears at free the decoys change nothing: the channel's pages are
 * cleared when freed, whoever takes them after.
 */
#define DECOY_PAGES	16	/* a pipe's default capacity */
static int decoy[2] = { -1, -1 };

static void decoy_close(void)
{
	if (decoy[0] < 0)
		return;
	close(decoy[1]);
	close(decoy[0]);	/* the last reference: the pages are freed */
	decoy[0] = decoy[1] = -1;
}

/* In a helper, the decoy pipe inherited is its channel's: closed, not freed. */
void decoy_make(void)
{
	static const char zeroes[PAGE];
	int i;

	decoy_close();
	if (pipe2(decoy, O_NONBLOCK)) {
		decoy[0] = decoy[1] = -1;
		return;		/* no decoys: only a count may be lower */
	}
	for (i = 0; i < DECOY_PAGES; i++)
		if (write(decoy[1], zeroes, PAGE) != PAGE)
			break;
}

/*
 * Clear the registers and sleep once, so the FPU state saved is zeroes;
 * free the decoys; exit.
 */
void __attribute__((noreturn)) child_exit(int status)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	clear_vector_regs();
	nanosleep(&ts, NULL);
	decoy_close();
	_exit(status);
}

/*
 * A resident channel, set up: tell the parent (shared memory, no system
 * call, so the kernel stack stays as the channel left it) and sleep until
 * killed after the scan.
 */
void __attribute__((noreturn)) resident(struct result *r)
{
	clear_vector_regs();
	r->ok = 1;
	__atomic_store_n(&r->ready, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
}

/*
 * Block until the release (EOF on the go pipe, when the parent closes its
 * end or dies).  The setup's alarm is off while holding, since how long
 * the other channels take is not this one's business; the release gets a
 * fresh one.
 */
static void wait_go(void)
{
	char c;

	alarm(0);
	clear_vector_regs();
	while (read(go_fd, &c, 1) < 0 && errno == EINTR)
		;
	alarm((unsigned int)timeout_s + 30);
}

/*
 * A channel, its data moved (and checked, unless its consumer runs at the
 * release): tell the parent it holds, and wait for the release.
 */
void hold(struct result *r)
{
	clear_vector_regs();
	__atomic_store_n(&r->ready, 1, __ATOMIC_SEQ_CST);
	wait_go();
}

/*
 * A helper process of a channel (the reader of a pipe, of a socket): a
 * child of the channel's child, forked before any secret exists in it.
 * Returns the helper's pid in the channel, 0 in the helper, -1 (fail()'d)
 * on error.  *sync is what wait_helper() reads.
 */
pid_t fork_helper(int *sync, struct result *r)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return fail_errno(r, "pipe");
	pid = fork();
	if (pid < 0) {
		fail_errno(r, "fork");
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		helper_fd = p[1];
		alarm((unsigned int)timeout_s + 30);
		decoy_make();
		return 0;
	}
	close(p[1]);
	*sync = p[0];
	return pid;
}

/* In a helper, set up (its buffers faulted in): tell its channel, hold. */
void helper_hold(void)
{
	clear_vector_regs();
	if (write(helper_fd, "r", 1) != 1)
		child_exit(1);
	close(helper_fd);
	wait_go();
}

/* In a channel: wait until its helper is set up (so that it holds too). */
int wait_helper(int sync, pid_t pid, struct result *r, const char *who)
{
	ssize_t n;
	char c;

	while ((n = read(sync, &c, 1)) < 0 && errno == EINTR)
		;
	close(sync);
	if (n == 1)
		return 0;
	if (wait_child(pid, r, who) == 0)
		fail(r, "%s exited before it was set up", who);
	return -1;
}

/* A channel that fails before the release does not leave its helper. */
int stop_helper(pid_t pid)
{
	int e = errno;

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	errno = e;
	return -1;
}

int wait_child(pid_t pid, struct result *r, const char *who)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return fail_errno(r, "waitpid");
	if (WIFSIGNALED(status))
		return fail(r, "%s killed by signal %d", who, WTERMSIG(status));
	if (WEXITSTATUS(status)) {
		char why[TEXT_LEN];	/* the helper's reason, if it left one */

		snprintf(why, sizeof(why), "%s", r->reason[0] ? r->reason : "failed");
		return fail(r, "%s: %s", who, why);
	}
	return 0;
}

/*
 * The reader of a pipe channel, in its helper child: a page-aligned buffer
 * faulted in before the hold (so that the release allocates nothing), then
 * COPIES pages read from @fd at the release, each checked for the secret.
 * Reading frees the pipe's pages; the child exits with the verdict.
 */
void pipe_reader(int fd, const struct channel *ch, struct result *r)
{
	int i, good = 0;
	char *p, *buf;

	p = malloc(2 * PAGE);
	if (!p) {
		fail_errno(r, "the reader's malloc");
		child_exit(1);
	}
	buf = page_align(p);
	memset(buf, 0, PAGE);	/* faulted in now, not at the release */
	helper_hold();
	for (i = 0; i < COPIES; i++) {
		if (read_full(fd, buf, PAGE) != PAGE)
			break;
		good += secret_equal_n(seed, ch->name, buf + OFFSET, SECRET_LEN);
	}
	scrub(buf, PAGE);
	if (good != COPIES)
		fail(r, "the reader got %d of %d copies", good, COPIES);
	child_exit(good == COPIES ? 0 : 1);
}

/*
 * The reader of a stream channel (unix, tcp): COPIES messages of the
 * secret read from fd, checked and scrubbed, then exit.  hold: a helper
 * that reads at the release (its buffer faulted in now, not then).
 */
void read_copies_exit(const struct channel *ch, int fd, int hold, struct result *r)
{
	char back[COPIES * SECRET_LEN];
	int i, good = 0;
	ssize_t n;

	memset(back, 0, sizeof(back));
	if (hold)
		helper_hold();
	n = read_full(fd, back, sizeof(back));
	for (i = 0; n == (ssize_t)sizeof(back) && i < COPIES; i++)
		good += secret_equal_n(seed, ch->name, back + i * SECRET_LEN, SECRET_LEN);
	scrub(back, sizeof(back));
	if (good != COPIES)
		fail(r, "the reader got %zd bytes, %d of %d copies", n, good, COPIES);
	child_exit(good == COPIES ? 0 : 1);
}
