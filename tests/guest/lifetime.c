// SPDX-License-Identifier: GPL-2.0
/*
 * lifetime - the guest half of the attacker's-view test (issue 5).
 *
 * Pushes a secret through each channel of tests/scan/channels (one
 * function per channel, table below), each in a child process, then asks
 * the host to scan guest RAM for them and prints KTAP about the channels'
 * mechanics (did each one run).  The copy counts themselves are the host's
 * (tests/scan/ramscan).
 *
 * Hold, then release all at once.  The kernel hands a freed page out
 * again first (per-cpu free lists are LIFO), so a channel released while
 * others still had to run would have its pages taken, and overwritten, by
 * the next channel's fork, exec and page faults: the scan would measure
 * page reuse, not scrubbing, and a kernel that clears nothing would look
 * clean.  So the channels are set up one after another and each one, its
 * data moved, holds what it holds (the process and its buffers, the file,
 * the sockets) and blocks on the "go" pipe.  Once every channel holds, the
 * parent closes the go pipe: every channel releases at the same moment
 * (what "release" means is the channel's: free and exit, unlink, close),
 * the parent reaps them all, waits SETTLE_MS for the deferred frees, and
 * only then asks for the scan, having done nothing else in between.  A
 * channel whose kernel buffer is freed by its consumer (a pipe's pages, a
 * unix socket's skbs, an AF_ALG request's TX pages) has its consumer
 * (reader, encryption) run at the release, so that its result is known
 * only when the channel is reaped; the others check theirs before holding.
 * The resident channels (alive, kstack, wifi-alive) sleep through the
 * scan instead and are killed after it; the tty channel, which holds
 * nothing of note, runs first and exits at once.
 *
 * Some channels need what only a distribution kernel has (SysV IPC, tmpfs
 * xattrs, the memory controller, THP; the lab kernel is allnoconfig-based).
 * Such a channel first asks the kernel, before it derives its secret, and
 * if the kernel says no it holds nothing and reports
 * "ok N <name> # SKIP <why>" (KTAP's SKIP directive): not a failure of the
 * program, and the host then requires 0 copies of a secret that was never
 * made (policy/lifetime "n/a").
 *
 * Secrets are derived from a fresh getrandom() seed and the channel's name
 * (secrets.h), in the child that uses them and only there: the parent
 * never holds one, and the program never prints one.
 *
 * Talking to the host, on the console device (LIFETIME_CONSOLE, default
 * /dev/console; stdin/stdout if it cannot be opened):
 *   "HARNESS: TYPE <channel> <seed>"  the host types that channel's
 *                                     secret followed by "\r" (tty channel)
 *   "HARNESS: SCAN <seed>"            the host scans RAM, types "scanned\r"
 *                                     (or "failed\r")
 * The markers go to the console device directly, not to stdout: the guest
 * /init pipes stdout through busybox sed, which buffers until the program
 * exits, and the program cannot wait for an answer to a question the host
 * has not seen yet.  KTAP goes to stdout.
 *
 * usage: lifetime [--list] [--only CH,CH...]
 * environment: LIFETIME_CONSOLE (console device), LIFETIME_TMP (tmpfs
 * directory, default /tmp), LIFETIME_CGROUP (where cgroup2 is or is to be
 * mounted, default /sys/fs/cgroup), LIFETIME_TIMEOUT (seconds to wait for
 * the host's answers, default 120).
 * Exit status 0 if every channel ran (or was skipped for want of a kernel
 * feature) and the host scanned, 1 otherwise, 2 on usage errors.
 *
 * Build: gcc -static -O2 -Wall -Wextra -Werror -Itests/guest lifetime.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_alg.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include "channels.h"	/* generated from tests/scan/channels */
#include "secrets.h"
#include "wifi.h"

#ifndef SOL_ALG
#define SOL_ALG 279
#endif

#define PAGE		4096
#define COPIES		8	/* copies placed by the page-sized channels */
#define LINES		4	/* pty lines */
#define OFFSET		100	/* where a secret sits in its page */
#define TEXT_LEN	240
/*
 * Between the release and the scan, for the frees the kernel defers: a
 * reaped task's task_struct (with the FPU state saved in it) and its
 * kernel stack go back through call_rcu(), a vfree() from that context
 * through a workqueue.  On an idle guest a grace period is a few
 * jiffies, even under TCG, and vanilla-iof counts 0 everywhere with no
 * wait at all; one second is a margin for a slower host, cheap, and
 * still short of the 5 s kvfree_rcu() batching (KFREE_DRAIN_JIFFIES),
 * which frees nothing of these channels'.
 */
#define SETTLE_MS	1000

/* What a child tells the parent, in memory shared across fork. */
struct result {
	int ready;		/* set up: holding, or resident and asleep */
	int ok;
	char reason[TEXT_LEN];	/* why not ok */
	char note[TEXT_LEN];	/* what was done, for a KTAP diagnostic */
	char skipped[TEXT_LEN];	/* if set, why the kernel cannot run it */
};

#define RESIDENT	1	/* its child must be alive during the scan */
#define FIRST		2	/* runs before the others, holds nothing */

struct channel {
	const char *name;
	/*
	 * Runs in a child of its own.  Moves the channel's data, calls
	 * hold() (which returns at the release), releases, and returns 0
	 * if the channel did what it should (and then the child exits), or
	 * fail()'s -1, before or after holding, or skip()s before deriving
	 * its secret (the kernel lacks what it needs).  A resident channel calls
	 * resident() instead of holding and returning; a FIRST channel
	 * returns without holding.  NULL: nothing runs in the guest (the
	 * "unused" control).
	 */
	int (*run)(const struct channel *ch, struct result *r);
};

static int flags_of(const struct channel *ch);

static uint64_t seed;
static char seed_hex[SECRET_SEED_HEX + 1];
static int cons_in = 0, cons_out = 1;	/* the console device */
static int timeout_s = 120;
static int go_fd = -1;		/* read end of the go pipe: EOF = release */
static int helper_fd = -1;	/* in a helper: "set up" to its channel */

/* ---- helpers ---------------------------------------------------------- */

static int __attribute__((format(printf, 2, 3))) fail(struct result *r, const char *fmt, ...)
{
	int e = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
	errno = e;
	return -1;
}

#define fail_errno(r, what) fail(r, "%s: %s", what, strerror(errno))

/*
 * The kernel lacks what the channel needs: return 0 without holding, and
 * the channel is reported as a KTAP SKIP with this reason.  Only before
 * the secret is derived, so that a skipped channel leaves nothing to find.
 */
static int __attribute__((format(printf, 2, 3))) skip(struct result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->skipped, sizeof(r->skipped), fmt, ap);
	va_end(ap);
	return 0;
}

static void __attribute__((format(printf, 2, 3))) note(struct result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->note, sizeof(r->note), fmt, ap);
	va_end(ap);
}

/* Keep the compiler from eliding writes to a buffer it thinks is dead. */
static void touch(const void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

static void scrub(void *p, size_t n)
{
	explicit_bzero(p, n);
}

/*
 * Zero the vector registers: a secret that went through memcpy() or a
 * vectorised loop may sit in one, and the kernel saves them into the
 * task's FPU state (slab memory) at the next context switch, a copy that
 * would be blamed on the channel.
 */
static void clear_vector_regs(void)
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
static void decoy_make(void)
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
static void __attribute__((noreturn)) child_exit(int status)
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
static void __attribute__((noreturn)) resident(struct result *r)
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
static void hold(struct result *r)
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
static pid_t fork_helper(int *sync, struct result *r)
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
static void helper_hold(void)
{
	clear_vector_regs();
	if (write(helper_fd, "r", 1) != 1)
		child_exit(1);
	close(helper_fd);
	wait_go();
}

static int wait_child(pid_t pid, struct result *r, const char *who);

/* In a channel: wait until its helper is set up (so that it holds too). */
static int wait_helper(int sync, pid_t pid, struct result *r, const char *who)
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
static int stop_helper(pid_t pid)
{
	int e = errno;

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	errno = e;
	return -1;
}

static int write_full(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static ssize_t read_full(int fd, void *buf, size_t n)
{
	char *p = buf;
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, p + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* A page-aligned pointer inside a malloc'd buffer of npages + 1 pages. */
static char *page_align(char *p)
{
	return (char *)(((uintptr_t)p + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
}

/*
 * Read one line (up to '\n' or '\r', not included) from fd within
 * timeout_s seconds.  Returns its length, -1 on error or timeout (errno
 * ETIMEDOUT), and always NUL-terminates buf.
 */
static int read_line(int fd, char *buf, size_t size, int timeout)
{
	size_t n = 0;
	time_t end = time(NULL) + timeout;

	buf[0] = '\0';
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int left = (int)(end - time(NULL));
		char c;
		ssize_t r;

		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		r = poll(&pfd, 1, left * 1000);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			continue;
		r = read(fd, &c, 1);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			return -1;
		if (r == 0) {
			errno = EPIPE;
			return -1;
		}
		if (c == '\n' || c == '\r') {
			if (n == 0)	/* the rest of a "\r\n" */
				continue;
			buf[n] = '\0';
			return (int)n;
		}
		if (n + 1 < size)
			buf[n++] = c;
		else
			n++;	/* too long: counted, not kept */
		if (n < size)
			buf[n] = '\0';
	}
}

static int marker(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int marker(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(line) - 1)
		return -1;
	line[n++] = '\n';
	if (cons_out == 1)
		fflush(stdout);
	return write_full(cons_out, line, (size_t)n);
}

/* ---- channels ------------------------------------------------------------ */

/* Controls. */
static int ch_alive(const struct channel *ch, struct result *r)
{
	char *p = malloc(2 * PAGE);

	if (!p)
		return fail_errno(r, "malloc");
	secret_derive(seed, ch->name, page_align(p) + OFFSET);
	touch(p);
	note(r, "1 copy in the heap of pid %d, asleep", (int)getpid());
	resident(r);
}

/* Process memory. */
static int ch_heap(const struct channel *ch, struct result *r)
{
	char *p = malloc((COPIES + 1) * PAGE), *a;
	int i;

	if (!p)
		return fail_errno(r, "malloc");
	a = page_align(p);
	for (i = 0; i < COPIES; i++)
		secret_derive(seed, ch->name, a + i * PAGE + OFFSET);
	touch(p);
	note(r, "%d copies in %d pages of a %d-byte malloc, freed", COPIES, COPIES,
	     (COPIES + 1) * PAGE);
	hold(r);
	free(p);
	return 0;
}

/* The deepest frame holds, so all of them are on the stack until the release. */
static int __attribute__((noinline)) stack_frame(const char *name, int depth,
						 struct result *r)
{
	char buf[PAGE];
	uintptr_t in_page = (uintptr_t)buf & (PAGE - 1);
	/* The copy must not straddle two (physically unrelated) pages. */
	size_t pos = in_page <= PAGE - SECRET_LEN ? 0 : PAGE - in_page;
	int n = 1;

	secret_derive(seed, name, buf + pos);
	touch(buf);
	if (depth > 1)
		n += stack_frame(name, depth - 1, r);
	else
		hold(r);
	touch(buf);
	return n;
}

static int ch_stack(const struct channel *ch, struct result *r)
{
	int n;

	note(r, "%d copies in %d nested %d-byte stack frames", COPIES, COPIES, PAGE);
	n = stack_frame(ch->name, COPIES, r);
	return n == COPIES ? 0 : fail(r, "only %d frames", n);
}

/* Kernel buffers. */
static int wait_child(pid_t pid, struct result *r, const char *who)
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
 * The reader frees a pipe's pages as it reads them: it reads at the
 * release.  Until then the 8 pages sit in the pipe (16 pages deep).
 */
static int ch_pipe(const struct channel *ch, struct result *r)
{
	int fds[2], i, good = 0, sync;
	char *p, *buf;
	pid_t pid;

	if (pipe(fds))
		return fail_errno(r, "pipe");
	pid = fork_helper(&sync, r);	/* before any secret exists in this process */
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fds[1]);
		p = malloc(2 * PAGE);
		if (!p) {
			fail_errno(r, "the reader's malloc");
			child_exit(1);
		}
		buf = page_align(p);
		memset(buf, 0, PAGE);	/* faulted in now, not at the release */
		helper_hold();
		for (i = 0; i < COPIES; i++) {
			if (read_full(fds[0], buf, PAGE) != PAGE)
				break;
			good += secret_equal_n(seed, ch->name, buf + OFFSET, SECRET_LEN);
		}
		scrub(buf, PAGE);
		if (good != COPIES)
			fail(r, "the reader got %d of %d copies", good, COPIES);
		child_exit(good == COPIES ? 0 : 1);
	}
	close(fds[0]);
	p = malloc(2 * PAGE);
	if (!p) {
		fail_errno(r, "malloc");
		return stop_helper(pid);
	}
	buf = page_align(p);
	memset(buf, 0, PAGE);
	for (i = 0; i < COPIES; i++) {
		secret_derive(seed, ch->name, buf + OFFSET);
		if (write_full(fds[1], buf, PAGE)) {
			scrub(buf, PAGE);
			fail_errno(r, "write to the pipe");
			return stop_helper(pid);
		}
		scrub(buf, PAGE);
	}
	if (wait_helper(sync, pid, r, "reader"))
		return -1;
	note(r, "%d page-sized writes, read by pid %d at the release", COPIES, (int)pid);
	hold(r);
	close(fds[1]);
	return wait_child(pid, r, "reader");
}

/* The tmpfs directory of the tmpfs and xattr channels. */
static const char *tmp_dir(void)
{
	return getenv("LIFETIME_TMP") ? getenv("LIFETIME_TMP") : "/tmp";
}

static int ch_tmpfs(const struct channel *ch, struct result *r)
{
	const char *dir = tmp_dir();
	char path[256], *p, *buf;
	struct statfs sfs;
	int fd, i, good = 0;

	if (statfs(dir, &sfs))
		return fail_errno(r, dir);
	if (sfs.f_type != TMPFS_MAGIC)
		return fail(r, "%s is not a tmpfs (set LIFETIME_TMP)", dir);
	snprintf(path, sizeof(path), "%s/lifetime-tmpfs.%d", dir, (int)getpid());
	p = malloc(2 * PAGE);
	if (!p)
		return fail_errno(r, "malloc");
	buf = page_align(p);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return fail_errno(r, path);
	memset(buf, 0, PAGE);
	for (i = 0; i < COPIES; i++) {
		secret_derive(seed, ch->name, buf + OFFSET);
		if (pwrite(fd, buf, PAGE, (off_t)i * PAGE) != PAGE) {
			scrub(buf, PAGE);
			unlink(path);
			return fail_errno(r, "write");
		}
		scrub(buf, PAGE);
	}
	close(fd);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		unlink(path);
		return fail_errno(r, "reopen");
	}
	for (i = 0; i < COPIES; i++) {
		if (pread(fd, buf, PAGE, (off_t)i * PAGE) != PAGE)
			break;
		good += secret_equal_n(seed, ch->name, buf + OFFSET, SECRET_LEN);
	}
	scrub(buf, PAGE);
	close(fd);
	if (good != COPIES) {
		unlink(path);
		return fail(r, "read back %d of %d copies", good, COPIES);
	}
	note(r, "%d pages written, read back, unlinked, in %s", COPIES, dir);
	hold(r);
	if (unlink(path))
		return fail_errno(r, "unlink");
	return 0;
}

/* The reader frees the skbs as it reads them: it reads at the release. */
static int ch_unix(const struct channel *ch, struct result *r)
{
	char msg[SECRET_LEN], back[COPIES * SECRET_LEN];
	int sv[2], i, good = 0, sync;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return fail_errno(r, "socketpair");
	pid = fork_helper(&sync, r);
	if (pid < 0)
		return -1;
	if (pid == 0) {
		ssize_t n;

		close(sv[0]);
		memset(back, 0, sizeof(back));
		helper_hold();
		n = read_full(sv[1], back, sizeof(back));
		for (i = 0; n == (ssize_t)sizeof(back) && i < COPIES; i++)
			good += secret_equal_n(seed, ch->name, back + i * SECRET_LEN,
					       SECRET_LEN);
		scrub(back, sizeof(back));
		if (good != COPIES)
			fail(r, "the reader got %zd bytes, %d of %d copies", n, good, COPIES);
		child_exit(good == COPIES ? 0 : 1);
	}
	close(sv[1]);
	secret_derive(seed, ch->name, msg);
	for (i = 0; i < COPIES; i++)
		if (send(sv[0], msg, sizeof(msg), 0) != (ssize_t)sizeof(msg)) {
			scrub(msg, sizeof(msg));
			fail_errno(r, "send");
			return stop_helper(pid);
		}
	scrub(msg, sizeof(msg));
	if (wait_helper(sync, pid, r, "reader"))
		return -1;
	note(r, "%d messages of %d bytes, read by pid %d at the release", COPIES,
	     SECRET_LEN, (int)pid);
	hold(r);
	close(sv[0]);
	return wait_child(pid, r, "reader");
}

static int ch_kstack(const struct channel *ch, struct result *r)
{
	struct sockaddr_un sa;
	socklen_t len = offsetof(struct sockaddr_un, sun_path) + 1 + SECRET_LEN;
	int s, rc, e, pid = (int)getpid();

	s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s < 0)
		return fail_errno(r, "socket");
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	/* Abstract name: no path lookup, so the only kernel copy is the
	 * sockaddr_storage on the stack of __sys_connect(). */
	secret_derive(seed, ch->name, sa.sun_path + 1);
	rc = connect(s, (struct sockaddr *)&sa, len);
	e = errno;
	scrub(&sa, sizeof(sa));
	/* No system call from here to the sleep. */
	if (rc == 0)
		return fail(r, "connect() to an abstract name nobody bound succeeded");
	if (e != ECONNREFUSED)
		return fail(r, "connect(): %s, expected ECONNREFUSED", strerror(e));
	note(r, "connect() refused, pid %d asleep during the scan", pid);
	resident(r);
}

/* tty: the host types the secret at the console, echo off. */
static int ch_tty(const struct channel *ch, struct result *r)
{
	struct termios old, t;
	char line[128];
	int n, good;

	if (tcgetattr(cons_in, &old))
		return fail_errno(r, "tcgetattr on the console");
	t = old;
	t.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK | ECHONL);
	t.c_lflag |= ICANON;
	t.c_iflag |= ICRNL;
	if (tcsetattr(cons_in, TCSAFLUSH, &t))
		return fail_errno(r, "tcsetattr on the console");
	if (marker("HARNESS: TYPE %s %s", ch->name, seed_hex)) {
		tcsetattr(cons_in, TCSANOW, &old);
		return fail_errno(r, "writing the TYPE marker");
	}
	n = read_line(cons_in, line, sizeof(line), timeout_s);
	tcsetattr(cons_in, TCSANOW, &old);
	good = n == SECRET_LEN && secret_equal_n(seed, ch->name, line, SECRET_LEN);
	scrub(line, sizeof(line));
	if (n < 0)
		return fail(r, "nothing typed within %d s: %s", timeout_s, strerror(errno));
	if (!good)
		return fail(r, "the host typed %d characters, not this channel's secret", n);
	note(r, "typed by the host, read with echo off");
	return 0;
}

/*
 * One pty pair: the secret written LINES times as a line to the master,
 * read back on the slave with echo off.  Returns how many lines came back
 * right, -1 (fail()'d) on error; *m and *s are the pair, -1 if not open.
 */
static int pty_pair(const struct channel *ch, int *m, int *s, struct result *r)
{
	char line[SECRET_LEN + 1], back[128];
	struct termios t;
	const char *name;
	int i, good = 0;

	*m = posix_openpt(O_RDWR | O_NOCTTY);
	if (*m < 0)
		return fail_errno(r, "posix_openpt");
	if (grantpt(*m) || unlockpt(*m) || !(name = ptsname(*m)))
		return fail_errno(r, "grantpt/unlockpt/ptsname");
	*s = open(name, O_RDWR | O_NOCTTY);
	if (*s < 0)
		return fail_errno(r, name);
	if (tcgetattr(*s, &t))
		return fail_errno(r, "tcgetattr on the slave");
	t.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK | ECHONL);
	t.c_lflag |= ICANON;
	if (tcsetattr(*s, TCSANOW, &t))
		return fail_errno(r, "tcsetattr on the slave");
	secret_derive(seed, ch->name, line);
	line[SECRET_LEN] = '\n';
	for (i = 0; i < LINES; i++)
		if (write_full(*m, line, sizeof(line))) {
			scrub(line, sizeof(line));
			return fail_errno(r, "write to the master");
		}
	scrub(line, sizeof(line));
	for (i = 0; i < LINES; i++) {
		int n = read_line(*s, back, sizeof(back), 10);

		good += n == SECRET_LEN && secret_equal_n(seed, ch->name, back, SECRET_LEN);
	}
	scrub(back, sizeof(back));
	return good;
}

/*
 * COPIES pairs, not one: what 6.12 leaves of a pty is one copy per pair,
 * in the master's write_buf (a kmalloc-2k object kfree()d at release).
 * A single freed object is a fragile control: any kmalloc-2k allocation
 * between the release and the scan may take it (a CI run once counted 0
 * on vanilla).  Eight of them, in one or two slabs, make the vanilla
 * leftover a certainty and every patched cell's 0 a stronger claim.
 */
static int ch_pty(const struct channel *ch, struct result *r)
{
	int m[COPIES], s[COPIES], i, good = 0, ret = 0;

	for (i = 0; i < COPIES; i++)
		m[i] = s[i] = -1;
	for (i = 0; i < COPIES && !ret; i++) {
		int n = pty_pair(ch, &m[i], &s[i], r);

		if (n < 0)
			ret = -1;
		else
			good += n;
	}
	if (!ret && good != COPIES * LINES)
		ret = fail(r, "read %d of %d lines back on the slaves", good,
			   COPIES * LINES);
	if (!ret) {
		note(r, "%d lines through each of %d pty pairs, echo off", LINES,
		     COPIES);
		hold(r);
	}
	for (i = 0; i < COPIES; i++) {
		if (s[i] >= 0)
			close(s[i]);
		if (m[i] >= 0)
			close(m[i]);
	}
	return ret;
}

/* ---- crypto: AF_ALG ------------------------------------------------------- */

static const unsigned char public_key[16] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
};
/* 16 bytes of AEAD associated data, then 64 bytes of public plaintext. */
static const char public_aad[] = "associated-data.";
static const char public_text[] =
	"public plaintext, four AES blocks, nothing secret in it at all..";

#define AUTHSIZE	16
#define GCM_IV		12

static int alg_open(const char *type, const char *alg, const void *key,
		    size_t keylen, struct result *r)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG };
	int t = socket(AF_ALG, SOCK_SEQPACKET, 0);

	if (t < 0)
		return fail_errno(r, "socket(AF_ALG)");
	strncpy((char *)sa.salg_type, type, sizeof(sa.salg_type) - 1);
	strncpy((char *)sa.salg_name, alg, sizeof(sa.salg_name) - 1);
	if (bind(t, (struct sockaddr *)&sa, sizeof(sa))) {
		fail(r, "bind AF_ALG %s %s: %s", type, alg, strerror(errno));
		close(t);
		return -1;
	}
	if (setsockopt(t, SOL_ALG, ALG_SET_KEY, key, (socklen_t)keylen)) {
		fail_errno(r, "ALG_SET_KEY");
		close(t);
		return -1;
	}
	if (!strcmp(type, "aead") &&
	    setsockopt(t, SOL_ALG, ALG_SET_AEAD_AUTHSIZE, NULL, AUTHSIZE)) {
		fail_errno(r, "ALG_SET_AEAD_AUTHSIZE");
		close(t);
		return -1;
	}
	return t;
}

/*
 * A fresh request socket, sent in[0..inlen) with the IV (zeroes) and, for
 * AEAD, the associated data length: the kernel copies the input into TX
 * pages of its own, freed when the operation runs (alg_recv()) or the
 * socket is closed.  Returns the request socket, or -1.
 */
static int alg_send(int tfm, int decrypt, size_t ivlen, size_t assoclen,
		    const void *in, size_t inlen, struct result *r)
{
	char cbuf[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct af_alg_iv) + 16) +
		  CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = (void *)in, .iov_len = inlen };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	struct af_alg_iv *iv;
	ssize_t n;
	int op;

	memset(cbuf, 0, sizeof(cbuf));
	msg.msg_controllen = CMSG_SPACE(sizeof(int)) +
			     CMSG_SPACE(sizeof(struct af_alg_iv) + ivlen) +
			     (assoclen ? CMSG_SPACE(sizeof(int)) : 0);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_OP;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	*(int *)CMSG_DATA(c) = decrypt ? ALG_OP_DECRYPT : ALG_OP_ENCRYPT;
	c = CMSG_NXTHDR(&msg, c);
	if (!c)
		return fail(r, "internal error: no room for the IV cmsg");
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_IV;
	c->cmsg_len = CMSG_LEN(sizeof(struct af_alg_iv) + ivlen);
	iv = (struct af_alg_iv *)CMSG_DATA(c);
	iv->ivlen = (unsigned int)ivlen;
	memset(iv->iv, 0, ivlen);
	if (assoclen) {
		c = CMSG_NXTHDR(&msg, c);
		if (!c)
			return fail(r, "internal error: no room for the assoclen cmsg");
		c->cmsg_level = SOL_ALG;
		c->cmsg_type = ALG_SET_AEAD_ASSOCLEN;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		*(int *)CMSG_DATA(c) = (int)assoclen;
	}

	op = accept(tfm, NULL, 0);
	if (op < 0)
		return fail_errno(r, "accept on the AF_ALG socket");
	n = sendmsg(op, &msg, 0);
	if (n != (ssize_t)inlen) {
		fail(r, "sendmsg to AF_ALG: %zd of %zu bytes: %s", n, inlen, strerror(errno));
		close(op);
		return -1;
	}
	return op;
}

/* Run the operation sent to request socket op, read up to outlen bytes, close op. */
static ssize_t alg_recv(int op, void *out, size_t outlen, struct result *r)
{
	ssize_t n = read(op, out, outlen);

	if (n < 0)
		fail(r, "AF_ALG operation: %s", strerror(errno));
	close(op);
	return n;
}

/* One operation on a fresh request socket.  Returns the bytes read, or -1. */
static ssize_t alg_op(int tfm, int decrypt, size_t ivlen, size_t assoclen,
		      const void *in, size_t inlen, void *out, size_t outlen,
		      struct result *r)
{
	int op = alg_send(tfm, decrypt, ivlen, assoclen, in, inlen, r);

	return op < 0 ? -1 : alg_recv(op, out, outlen, r);
}

/* The derived secret's first 16 characters are the AES-128 key. */
static int afalg_key(const struct channel *ch, struct result *r, const char *type,
		     const char *alg)
{
	int aead = !strcmp(type, "aead");
	size_t ivlen = aead ? GCM_IV : 16, assoclen = aead ? 16 : 0;
	size_t textlen = sizeof(public_text) - 1;
	size_t inlen = assoclen + textlen, ctlen = inlen + (aead ? AUTHSIZE : 0);
	char key[SECRET_HALF], in[256], ct[256], back[256];
	ssize_t n;
	int tfm;

	secret_derive_n(seed, ch->name, key, SECRET_HALF);
	tfm = alg_open(type, alg, key, sizeof(key), r);
	scrub(key, sizeof(key));
	if (tfm < 0)
		return -1;
	memcpy(in, public_aad, assoclen);
	memcpy(in + assoclen, public_text, textlen);
	n = alg_op(tfm, 0, ivlen, assoclen, in, inlen, ct, ctlen, r);
	if (n < 0)
		goto out;
	if ((size_t)n != ctlen) {
		fail(r, "encryption gave %zd bytes, expected %zu", n, ctlen);
		goto out;
	}
	if (!memcmp(ct + assoclen, public_text, textlen)) {
		fail(r, "the ciphertext is the plaintext");
		goto out;
	}
	n = alg_op(tfm, 1, ivlen, assoclen, ct, ctlen, back, inlen, r);
	if (n < 0)
		goto out;
	if ((size_t)n != inlen || memcmp(back + assoclen, public_text, textlen)) {
		fail(r, "decryption did not give the plaintext back (%zd bytes)", n);
		goto out;
	}
	note(r, "%s %s, key set, %zu bytes encrypted to %zu and decrypted back",
	     type, alg, textlen, ctlen);
	hold(r);
	close(tfm);
	return 0;
out:
	close(tfm);
	return -1;
}

/*
 * The derived secret (32 bytes) is the plaintext, encrypted COPIES times,
 * each on a request socket of its own.  An encryption frees its TX page
 * when it runs, so the plaintexts are sent (one TX page each) before the
 * hold and encrypted at the release.
 */
static int afalg_plain(const struct channel *ch, struct result *r, const char *type,
		       const char *alg)
{
	int aead = !strcmp(type, "aead");
	size_t ivlen = aead ? GCM_IV : 16, assoclen = aead ? 16 : 0;
	size_t inlen = assoclen + SECRET_LEN, ctlen = inlen + (aead ? AUTHSIZE : 0);
	char in[64], ct[128];
	ssize_t n = 0;
	int tfm, i, sent, same = 0, ops[COPIES];

	tfm = alg_open(type, alg, public_key, sizeof(public_key), r);
	if (tfm < 0)
		return -1;
	memcpy(in, public_aad, assoclen);
	secret_derive(seed, ch->name, in + assoclen);
	for (sent = 0; sent < COPIES; sent++) {
		ops[sent] = alg_send(tfm, 0, ivlen, assoclen, in, inlen, r);
		if (ops[sent] < 0)
			break;
	}
	scrub(in, sizeof(in));
	if (sent < COPIES) {
		while (sent--)
			close(ops[sent]);
		close(tfm);
		return -1;
	}
	memset(ct, 0, sizeof(ct));
	note(r, "%s %s, %d encryptions of %d bytes to %zu, at the release", type, alg,
	     COPIES, SECRET_LEN, ctlen);
	hold(r);
	for (i = 0; i < COPIES; i++) {
		n = alg_recv(ops[i], ct, ctlen, r);
		if (n != (ssize_t)ctlen)
			break;
		same += secret_equal_n(seed, ch->name, ct + assoclen, SECRET_LEN);
	}
	scrub(ct, sizeof(ct));
	while (++i < COPIES)
		close(ops[i]);
	close(tfm);
	if (n != (ssize_t)ctlen)
		return n < 0 ? -1 : fail(r, "encryption gave %zd bytes, expected %zu", n, ctlen);
	if (same)
		return fail(r, "the ciphertext is the plaintext");
	return 0;
}

static int ch_afalg_skcipher_key(const struct channel *ch, struct result *r)
{
	return afalg_key(ch, r, "skcipher", "cbc(aes)");
}

static int ch_afalg_skcipher_plain(const struct channel *ch, struct result *r)
{
	return afalg_plain(ch, r, "skcipher", "cbc(aes)");
}

static int ch_afalg_aead_key(const struct channel *ch, struct result *r)
{
	return afalg_key(ch, r, "aead", "gcm(aes)");
}

static int ch_afalg_aead_plain(const struct channel *ch, struct result *r)
{
	return afalg_plain(ch, r, "aead", "gcm(aes)");
}

/* ---- mac80211: keys on a mac80211_hwsim access point ----------------------- */

#define FRAMES		8	/* encrypted frames sent with a key */

static const unsigned char wifi_sta[6] = { 0x02, 0x00, 0x5a, 0x00, 0x00, 0x01 };

/* One nl80211 request without key bytes; fail()s naming it. */
static int wifi_call(int fd, struct nl_msg *m, const char *what, struct result *r)
{
	if (!nl_call(fd, m, NULL, 0))
		return 0;
	return fail(r, "nl80211 %s: %s%s%s", what, strerror(errno),
		    nl_error[0] ? ": " : "", nl_error);
}

/*
 * A new interface on the radio of wlan0, an access point with the address
 * mac, beaconing, with one associated, authorized client, wifi_sta, as
 * hostapd would set it up.  Returns its ifindex, or 0 (fail()'d).  Each
 * channel has an interface of its own, so that deleting one (the release)
 * frees its keys and nothing else.
 */
static unsigned int wifi_ap(int fd, int family, const char *ifname,
			    const unsigned char mac[6], struct result *r)
{
	static const unsigned char rates[] = { 0x82, 0x84, 0x8b, 0x96,
					       0x0c, 0x12, 0x18, 0x24 };
	struct nl80211_sta_flag_update flags;
	unsigned int radio, ifindex;
	unsigned char head[128];
	struct nl_msg m;
	size_t n;

	radio = if_nametoindex("wlan0");
	if (!radio)
		return fail(r, "no wlan0: is mac80211_hwsim built in?"), 0;
	nl_init(&m, family, NL80211_CMD_NEW_INTERFACE);
	nl_u32(&m, NL80211_ATTR_IFINDEX, radio);	/* names the radio */
	nl_put(&m, NL80211_ATTR_IFNAME, ifname, strlen(ifname) + 1);
	nl_u32(&m, NL80211_ATTR_IFTYPE, NL80211_IFTYPE_AP);
	nl_put(&m, NL80211_ATTR_MAC, mac, 6);
	if (wifi_call(fd, &m, "NEW_INTERFACE (AP)", r))
		return 0;
	ifindex = if_nametoindex(ifname);
	if (!ifindex)
		return fail(r, "%s was created but has no ifindex", ifname), 0;
	if (if_set_up(ifname, 1))
		return fail_errno(r, "bringing the interface up"), 0;

	n = wifi_beacon_head(head, mac, ifname);
	nl_init(&m, family, NL80211_CMD_START_AP);
	nl_u32(&m, NL80211_ATTR_IFINDEX, ifindex);
	nl_put(&m, NL80211_ATTR_BEACON_HEAD, head, n);
	nl_put(&m, NL80211_ATTR_BEACON_TAIL, NULL, 0);
	nl_u32(&m, NL80211_ATTR_BEACON_INTERVAL, 100);
	nl_u32(&m, NL80211_ATTR_DTIM_PERIOD, 2);
	nl_put(&m, NL80211_ATTR_SSID, ifname, strlen(ifname));
	nl_u32(&m, NL80211_ATTR_HIDDEN_SSID, NL80211_HIDDEN_SSID_NOT_IN_USE);
	nl_put(&m, NL80211_ATTR_PRIVACY, NULL, 0);
	nl_u32(&m, NL80211_ATTR_AUTH_TYPE, NL80211_AUTHTYPE_OPEN_SYSTEM);
	nl_u32(&m, NL80211_ATTR_WIPHY_FREQ, WIFI_FREQ);
	if (wifi_call(fd, &m, "START_AP", r))
		return 0;

	nl_init(&m, family, NL80211_CMD_NEW_STATION);
	nl_u32(&m, NL80211_ATTR_IFINDEX, ifindex);
	nl_put(&m, NL80211_ATTR_MAC, wifi_sta, 6);
	nl_put(&m, NL80211_ATTR_STA_SUPPORTED_RATES, rates, sizeof(rates));
	nl_u16(&m, NL80211_ATTR_STA_LISTEN_INTERVAL, 10);
	nl_u16(&m, NL80211_ATTR_STA_AID, 1);
	flags.mask = flags.set = 1u << NL80211_STA_FLAG_AUTHENTICATED |
				 1u << NL80211_STA_FLAG_ASSOCIATED;
	nl_put(&m, NL80211_ATTR_STA_FLAGS2, &flags, sizeof(flags));
	if (wifi_call(fd, &m, "NEW_STATION", r))
		return 0;

	nl_init(&m, family, NL80211_CMD_SET_STATION);
	nl_u32(&m, NL80211_ATTR_IFINDEX, ifindex);
	nl_put(&m, NL80211_ATTR_MAC, wifi_sta, 6);
	flags.mask = flags.set = 1u << NL80211_STA_FLAG_AUTHORIZED;
	nl_put(&m, NL80211_ATTR_STA_FLAGS2, &flags, sizeof(flags));
	if (wifi_call(fd, &m, "SET_STATION (authorized)", r))
		return 0;
	return ifindex;
}

/*
 * The channel's secret, its first keylen characters, as the key of an
 * access point: a WEP-104 default key (used for every frame, as WEP does)
 * or a CCMP pairwise key for the client.  FRAMES frames go to the client
 * with it and are seen encrypted on hwsim0.  At the release the interface
 * is deleted, which frees its keys; a resident channel keeps it through
 * the scan instead (the control that shows the scan finds a key mac80211
 * holds).
 */
static int wifi_key(const struct channel *ch, struct result *r, const char *ifname,
		    unsigned char id, uint32_t cipher, size_t keylen)
{
	int pairwise = cipher != WIFI_CIPHER_WEP104;
	unsigned char mac[6] = { 0x02, 0x00, 0x5a, 0x00, 0x00, id };
	char key[SECRET_HALF], frame[ETH_HLEN + sizeof(public_text)];
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_halen = 6 };
	struct nl_msg m;
	unsigned int ifindex;
	int fd, family, tx, sniff, i, seen, clear, ret;

	fd = nl_open();
	if (fd < 0)
		return fail_errno(r, "generic netlink socket");
	family = nl80211_family(fd);
	if (family < 0)
		return fail_errno(r, "nl80211 family (is cfg80211 built in?)");
	ifindex = wifi_ap(fd, family, ifname, mac, r);
	if (!ifindex)
		return -1;

	/* The key, in one request buffer and one key buffer, both scrubbed. */
	secret_derive_n(seed, ch->name, key, keylen);
	nl_init(&m, family, NL80211_CMD_NEW_KEY);
	nl_u32(&m, NL80211_ATTR_IFINDEX, ifindex);
	if (pairwise)
		nl_put(&m, NL80211_ATTR_MAC, wifi_sta, 6);
	nl_nest_start(&m, NL80211_ATTR_KEY);
	nl_put(&m, NL80211_KEY_DATA, key, keylen);
	nl_u8(&m, NL80211_KEY_IDX, 0);
	nl_u32(&m, NL80211_KEY_CIPHER, cipher);
	nl_u32(&m, NL80211_KEY_TYPE, pairwise ? NL80211_KEYTYPE_PAIRWISE : NL80211_KEYTYPE_GROUP);
	nl_nest_end(&m);
	scrub(key, sizeof(key));
	ret = wifi_call(fd, &m, "NEW_KEY", r);
	scrub(&m, sizeof(m));
	if (ret)
		return -1;
	if (!pairwise) {
		nl_init(&m, family, NL80211_CMD_SET_KEY);
		nl_u32(&m, NL80211_ATTR_IFINDEX, ifindex);
		nl_nest_start(&m, NL80211_ATTR_KEY);
		nl_u8(&m, NL80211_KEY_IDX, 0);
		nl_put(&m, NL80211_KEY_DEFAULT, NULL, 0);
		nl_nest_end(&m);
		if (wifi_call(fd, &m, "SET_KEY (default)", r))
			return -1;
	}

	/* Traffic: FRAMES frames to the client, which the key encrypts. */
	sniff = wifi_sniffer();
	if (sniff < 0)
		return fail_errno(r, "a packet socket on hwsim0");
	tx = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (tx < 0)
		return fail_errno(r, "packet socket");
	to.sll_ifindex = (int)ifindex;
	memcpy(to.sll_addr, wifi_sta, 6);
	memcpy(frame, wifi_sta, 6);
	memcpy(frame + 6, mac, 6);
	frame[12] = (char)(WIFI_ETHERTYPE >> 8);
	frame[13] = (char)(WIFI_ETHERTYPE & 0xff);
	memcpy(frame + ETH_HLEN, public_text, sizeof(public_text));
	for (i = 0; i < FRAMES; i++)
		if (sendto(tx, frame, sizeof(frame), 0, (struct sockaddr *)&to, sizeof(to)) < 0)
			return fail_errno(r, "sending a frame");
	seen = wifi_count_protected(sniff, mac, wifi_sta, public_text, FRAMES, 3000, &clear);
	close(sniff);
	close(tx);
	if (clear)
		return fail(r, "%d frames went out in the clear", clear);
	if (seen < FRAMES)
		return fail(r, "%d of %d frames seen encrypted on hwsim0", seen, FRAMES);
	note(r, "%s key on AP %s, %d frames to its client seen encrypted on hwsim0",
	     pairwise ? "CCMP pairwise" : "WEP-104 default", ifname, seen);

	if (flags_of(ch) & RESIDENT)
		resident(r);
	hold(r);
	nl_init(&m, family, NL80211_CMD_DEL_INTERFACE);
	nl_u32(&m, NL80211_ATTR_IFINDEX, ifindex);
	ret = wifi_call(fd, &m, "DEL_INTERFACE", r);
	close(fd);
	return ret;
}

static int ch_wifi_wep_key(const struct channel *ch, struct result *r)
{
	return wifi_key(ch, r, "ap-wep", 0x10, WIFI_CIPHER_WEP104, 13);
}

static int ch_wifi_ccmp_key(const struct channel *ch, struct result *r)
{
	return wifi_key(ch, r, "ap-ccmp", 0x20, WIFI_CIPHER_CCMP, SECRET_HALF);
}

static int ch_wifi_alive(const struct channel *ch, struct result *r)
{
	return wifi_key(ch, r, "ap-alive", 0x30, WIFI_CIPHER_CCMP, SECRET_HALF);
}

/* ---- what only a distro kernel has (issue 15) ------------------------------ */

/*
 * SysV IPC, tmpfs xattrs, the memory controller and THP: a distribution
 * kernel has them, the lab kernel does not.  Each channel asks the kernel
 * first, with no secret derived yet, and skip()s if it says no.
 *
 * Where the secret goes into a slab object it sits in the object's first
 * half: SLUB keeps a free object's free pointer in its middle
 * (s->offset = object_size / 2), which would overwrite a copy there and
 * let a kernel that clears nothing look clean.
 */

/* A 200-byte message: a 248-byte msg_msg, from the msg_msg-256 bucket. */
#define MSG_TEXT	200

struct lifetime_msg {
	long mtype;
	char mtext[MSG_TEXT];	/* the secret at 0: object bytes 48..80 */
};

/*
 * msgrcv() frees the message (free_msg()) as it hands it over: the
 * reader receives at the release.  Until then the COPIES messages sit in
 * the queue, which the channel removes once the reader is done.
 */
static int ch_msgq(const struct channel *ch, struct result *r)
{
	struct lifetime_msg m;
	int q, i, good = 0, sync, ret;
	pid_t pid;

	q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	if (q < 0 && errno == ENOSYS)
		return skip(r, "kernel has no SYSVIPC");
	if (q < 0)
		return fail_errno(r, "msgget");
	pid = fork_helper(&sync, r);
	if (pid < 0) {
		msgctl(q, IPC_RMID, NULL);
		return -1;
	}
	if (pid == 0) {
		memset(&m, 0, sizeof(m));
		helper_hold();
		for (i = 0; i < COPIES; i++) {
			ssize_t n = msgrcv(q, &m, sizeof(m.mtext), 0, IPC_NOWAIT);

			if (n != MSG_TEXT) {
				fail(r, "msgrcv of message %d: %s", i + 1,
				     n < 0 ? strerror(errno) : "short message");
				break;
			}
			good += secret_equal_n(seed, ch->name, m.mtext, SECRET_LEN);
		}
		scrub(&m, sizeof(m));
		if (good != COPIES && !r->reason[0])
			fail(r, "the reader got %d of %d copies", good, COPIES);
		child_exit(good == COPIES ? 0 : 1);
	}
	memset(&m, 0, sizeof(m));
	m.mtype = 1;
	for (i = 0; i < COPIES; i++) {
		secret_derive(seed, ch->name, m.mtext);
		ret = msgsnd(q, &m, sizeof(m.mtext), IPC_NOWAIT);
		scrub(m.mtext, sizeof(m.mtext));
		if (ret) {
			fail_errno(r, "msgsnd");
			msgctl(q, IPC_RMID, NULL);
			return stop_helper(pid);
		}
	}
	if (wait_helper(sync, pid, r, "reader")) {
		msgctl(q, IPC_RMID, NULL);
		return -1;
	}
	note(r, "%d messages of %d bytes, received by pid %d at the release, queue removed",
	     COPIES, MSG_TEXT, (int)pid);
	hold(r);
	ret = wait_child(pid, r, "reader");
	if (msgctl(q, IPC_RMID, NULL) && !ret)
		ret = fail_errno(r, "msgctl(IPC_RMID)");
	return ret;
}

/*
 * A value of 256 bytes: a simple_xattr of 32 + 256 bytes, kvmalloc()ed
 * with __GFP_ACCOUNT (kmalloc-cg-512); the secret at 0, object bytes
 * 32..64.  removexattr() frees it at once (simple_xattr_free()).
 */
#define XATTR_VALUE	256

static int ch_xattr(const struct channel *ch, struct result *r)
{
	const char *dir = tmp_dir();
	char path[256], name[32], value[XATTR_VALUE];
	struct statfs sfs;
	int fd, i, good = 0, ret = 0;

	if (statfs(dir, &sfs))
		return fail_errno(r, dir);
	if (sfs.f_type != TMPFS_MAGIC)
		return fail(r, "%s is not a tmpfs (set LIFETIME_TMP)", dir);
	snprintf(path, sizeof(path), "%s/lifetime-xattr.%d", dir, (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return fail_errno(r, path);
	/* Asked with a public value, so that a skip has derived nothing. */
	if (fsetxattr(fd, "user.lifetime.probe", "public", 6, XATTR_CREATE)) {
		int e = errno;

		close(fd);
		unlink(path);
		errno = e;
		if (e == EOPNOTSUPP)
			return skip(r, "kernel has no TMPFS_XATTR (tmpfs user.* xattrs)");
		return fail_errno(r, "fsetxattr (probe)");
	}
	if (fremovexattr(fd, "user.lifetime.probe")) {
		ret = fail_errno(r, "fremovexattr (probe)");
		goto out;
	}
	memset(value, 0, sizeof(value));
	for (i = 0; i < COPIES; i++) {
		snprintf(name, sizeof(name), "user.lifetime.%d", i);
		secret_derive(seed, ch->name, value);
		ret = fsetxattr(fd, name, value, sizeof(value), XATTR_CREATE);
		scrub(value, sizeof(value));
		if (ret) {
			ret = fail_errno(r, "fsetxattr");
			goto out;
		}
	}
	for (i = 0; i < COPIES; i++) {
		snprintf(name, sizeof(name), "user.lifetime.%d", i);
		if (fgetxattr(fd, name, value, sizeof(value)) == (ssize_t)sizeof(value))
			good += secret_equal_n(seed, ch->name, value, SECRET_LEN);
	}
	scrub(value, sizeof(value));
	if (good != COPIES) {
		ret = fail(r, "read back %d of %d values", good, COPIES);
		goto out;
	}
	note(r, "%d user.* xattrs of %d bytes on %s, removed and the file unlinked",
	     COPIES, XATTR_VALUE, path);
	hold(r);
	for (i = 0; i < COPIES && !ret; i++) {
		snprintf(name, sizeof(name), "user.lifetime.%d", i);
		if (fremovexattr(fd, name))
			ret = fail_errno(r, "fremovexattr");
	}
out:
	/* Evicting the inode frees whatever xattr a failure left. */
	close(fd);
	if (unlink(path) && !ret)
		ret = fail_errno(r, "unlink");
	return ret;
}

/* Write a short string to a cgroup file; 0 or -1 (errno). */
static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -1;
	ret = write_full(fd, text, strlen(text));
	if (close(fd) && !ret)
		ret = -1;
	return ret;
}

/* Read a small file into buf (NUL-terminated); its length or -1 (errno). */
static ssize_t read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read_full(fd, buf, size - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return n;
}

/* Is word one of the blank-separated words of text? */
static int has_word(const char *text, const char *word)
{
	size_t len = strlen(word);
	const char *p = text;

	while ((p = strstr(p, word))) {
		if ((p == text || p[-1] == ' ' || p[-1] == '\n' || p[-1] == '\t') &&
		    (p[len] == ' ' || p[len] == '\n' || p[len] == '\t' || !p[len]))
			return 1;
		p += len;
	}
	return 0;
}

/*
 * The process in the memory cgroup (a helper of the channel, forked
 * before any secret): it moves itself in, forks the reader there, and
 * puts the secret in COPIES anonymous pages and, from them, in COPIES
 * pipe pages (pipe_write() allocates them with __GFP_ACCOUNT), all
 * charged to the group.  At the release it unmaps its pages and closes
 * the pipe, the reader reads (which frees the pipe pages), both exit.
 */
static int memcg_worker(const struct channel *ch, struct result *r, const char *group)
{
	char path[300], text[512], member[300], *anon, *p, *buf;
	int fds[2], i, good = 0, sync, up = helper_fd;
	long long charged;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/cgroup.procs", group);
	if (write_file(path, "0"))
		return fail_errno(r, "joining the cgroup (cgroup.procs)");
	/* "0::/lifetime-memcg.N": in the group, on the unified hierarchy. */
	if (read_file("/proc/self/cgroup", text, sizeof(text)) < 0)
		return fail_errno(r, "/proc/self/cgroup");
	snprintf(member, sizeof(member), "%s\n", strrchr(group, '/'));
	if (!strstr(text, member))
		return fail(r, "not in %s after joining it", group);
	if (pipe(fds))
		return fail_errno(r, "pipe");
	pid = fork_helper(&sync, r);	/* in the group, before any secret */
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(up);	/* the channel waits for EOF on it if we die */
		close(fds[1]);
		p = malloc(2 * PAGE);
		if (!p) {
			fail_errno(r, "the reader's malloc");
			child_exit(1);
		}
		buf = page_align(p);
		memset(buf, 0, PAGE);	/* faulted in now, not at the release */
		helper_hold();
		for (i = 0; i < COPIES; i++) {
			if (read_full(fds[0], buf, PAGE) != PAGE)
				break;
			good += secret_equal_n(seed, ch->name, buf + OFFSET, SECRET_LEN);
		}
		scrub(buf, PAGE);
		if (good != COPIES)
			fail(r, "the reader got %d of %d copies", good, COPIES);
		child_exit(good == COPIES ? 0 : 1);
	}
	close(fds[0]);
	anon = mmap(NULL, COPIES * PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED) {
		fail_errno(r, "mmap");
		return stop_helper(pid);
	}
	for (i = 0; i < COPIES; i++) {
		secret_derive(seed, ch->name, anon + i * PAGE + OFFSET);
		if (write_full(fds[1], anon + i * PAGE, PAGE)) {
			fail_errno(r, "write to the pipe");
			return stop_helper(pid);
		}
	}
	if (wait_helper(sync, pid, r, "reader"))
		return -1;
	/*
	 * The group is charged.  Charges reach memory.current in per-cpu
	 * batches (MEMCG_CHARGE_BATCH pages), so this cannot say exactly
	 * for what, only that the group is not empty.
	 */
	snprintf(path, sizeof(path), "%s/memory.current", group);
	if (read_file(path, text, sizeof(text)) <= 0) {
		fail_errno(r, path);
		return stop_helper(pid);
	}
	charged = atoll(text);
	if (charged < 2 * COPIES * PAGE) {
		fail(r, "memory.current is %lld bytes, less than the %d pages put in the group",
		     charged, 2 * COPIES);
		return stop_helper(pid);
	}
	note(r, "%d anonymous and %d pipe pages in %s (memory.current %lld kB), read by pid %d, cgroup removed",
	     COPIES, COPIES, group, charged / 1024, (int)pid);
	helper_hold();
	munmap(anon, COPIES * PAGE);
	close(fds[1]);
	return wait_child(pid, r, "reader");
}

/*
 * The channel's own process stays outside the group, creates it, and
 * removes it at the release once it has reaped the worker: a cgroup with
 * a process in it cannot be removed.  cgroup2 is mounted on
 * LIFETIME_CGROUP (default /sys/fs/cgroup) if it is not there yet (the
 * guest's /init does not mount it), and unmounted again after.
 */
static int ch_memcg(const struct channel *ch, struct result *r)
{
	const char *root = getenv("LIFETIME_CGROUP") ? getenv("LIFETIME_CGROUP") :
						       "/sys/fs/cgroup";
	char path[300], group[256], text[1024], *line;
	struct statfs sfs;
	int mounted = 0, sync, ret, rc, i, enabled;
	pid_t pid;

	/*
	 * One line per controller built in, "<name> <hierarchy> <cgroups>
	 * <enabled>": no "memory" line, no MEMCG; enabled 0, booted with
	 * cgroup_disable=memory.
	 */
	if (read_file("/proc/cgroups", text, sizeof(text)) < 0)
		return errno == ENOENT ? skip(r, "kernel has no CGROUPS, so no MEMCG") :
					 fail_errno(r, "/proc/cgroups");
	line = strstr(text, "\nmemory\t");
	if (!line)
		return skip(r, "kernel has no MEMCG (no memory controller in /proc/cgroups)");
	if (sscanf(line + 1, "memory %*d %*d %d", &enabled) != 1)
		return fail(r, "cannot read the memory line of /proc/cgroups");
	if (!enabled)
		return skip(r, "memory controller disabled (cgroup_disable=memory)");
	if (statfs(root, &sfs))
		return fail_errno(r, root);
	if (sfs.f_type == SYSFS_MAGIC) {	/* the empty mount point */
		if (mount("cgroup2", root, "cgroup2", 0, NULL))
			return fail_errno(r, "mount -t cgroup2");
		mounted = 1;
	} else if (sfs.f_type != CGROUP2_SUPER_MAGIC) {
		return fail(r, "%s is neither cgroup2 nor its mount point (set LIFETIME_CGROUP)",
			    root);
	}
	ret = -1;
	snprintf(path, sizeof(path), "%s/cgroup.controllers", root);
	if (read_file(path, text, sizeof(text)) < 0) {
		fail_errno(r, path);
		goto unmount;
	}
	if (!has_word(text, "memory")) {
		/* MEMCG is there (/proc/cgroups), but bound to a v1 hierarchy. */
		fail(r, "no memory controller in %s (a cgroup v1 hierarchy has it?)", path);
		goto unmount;
	}
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
	if (write_file(path, "+memory")) {
		fail_errno(r, "enabling +memory in cgroup.subtree_control");
		goto unmount;
	}
	snprintf(group, sizeof(group), "%s/lifetime-memcg.%d", root, (int)getpid());
	if (mkdir(group, 0755)) {
		fail_errno(r, group);
		goto unmount;
	}
	snprintf(path, sizeof(path), "%s/memory.max", group);
	if (write_file(path, "64M")) {
		fail_errno(r, "memory.max");
		goto rmdir;
	}
	pid = fork_helper(&sync, r);
	if (pid < 0)
		goto rmdir;
	if (pid == 0)
		child_exit(memcg_worker(ch, r, group) ? 1 : 0);
	if (wait_helper(sync, pid, r, "the process in the cgroup"))
		goto rmdir;
	hold(r);
	ret = wait_child(pid, r, "the process in the cgroup");
rmdir:
	/* The group empties as its last process is reaped; allow a little. */
	for (i = 0; (rc = rmdir(group)) && errno == EBUSY && i < 100; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	if (rc && !ret)
		ret = fail(r, "rmdir %s: %s", group, strerror(errno));
unmount:
	if (mounted)
		umount(root);
	return ret;
}

/*
 * The secret in COPIES of the 512 subpages of one 2 MiB transparent huge
 * page, a PMD mapping of its own; at the release it is unmapped, which
 * frees the order-9 folio whole.  A kernel with THP must really give a
 * huge page (/proc/self/smaps AnonHugePages), or the channel fails: it
 * would measure small pages, which heap already does.
 */
#define HPAGE		(2UL << 20)

/* AnonHugePages (kB) of the mapping that contains addr, -1 if not found. */
static long anon_huge_kb(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512];
	long kb = -1;
	int in = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		/* A mapping's first line is "lo-hi perms ...", then its fields. */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

#define THP_ENABLED	"/sys/kernel/mm/transparent_hugepage/enabled"

static int ch_thp(const struct channel *ch, struct result *r)
{
	char mode[128];
	char *p, *a;
	int i, set = 0;
	long kb;

	if (access("/sys/kernel/mm/transparent_hugepage", F_OK))
		return errno == ENOENT ? skip(r, "kernel has no TRANSPARENT_HUGEPAGE") :
					 fail_errno(r, "/sys/kernel/mm/transparent_hugepage");
	if (read_file(THP_ENABLED, mode, sizeof(mode)) < 0)
		return fail_errno(r, THP_ENABLED);
	mode[strcspn(mode, "\n")] = '\0';
	/*
	 * Below 512 MiB of RAM (the harness guests have 512 MiB, a little
	 * less of it usable) hugepage_init() turns THP off whatever Kconfig
	 * chose: "[never]".  Ask for madvise mode, which serves this mapping
	 * and nothing else, and leave it so: "never" again would stop
	 * khugepaged, a task exit between the release and the scan.
	 */
	if (strstr(mode, "[never]")) {
		if (write_file(THP_ENABLED, "madvise"))
			return fail_errno(r, "setting transparent_hugepage/enabled to madvise");
		set = 1;
	}
	/* Twice the size, then only the aligned 2 MiB in the middle is kept. */
	p = mmap(NULL, 2 * HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return fail_errno(r, "mmap");
	a = (char *)(((uintptr_t)p + HPAGE - 1) & ~(uintptr_t)(HPAGE - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	munmap(a + HPAGE, (size_t)(p + 2 * HPAGE - (a + HPAGE)));
	if (madvise(a, HPAGE, MADV_HUGEPAGE))
		return fail_errno(r, "madvise(MADV_HUGEPAGE)");
	/* The first of these writes faults the huge page in. */
	for (i = 0; i < COPIES; i++)
		secret_derive(seed, ch->name, a + i * (HPAGE / COPIES) + OFFSET);
	touch(a);
	kb = anon_huge_kb(a);
	if (kb < (long)(HPAGE >> 10))
		return fail(r, "no huge page: AnonHugePages %ld kB (transparent_hugepage/enabled: %s%s)",
			    kb, mode, set ? ", set to madvise" : "");
	note(r, "%d copies in %d subpages of a 2 MiB huge page (AnonHugePages %ld kB%s), unmapped",
	     COPIES, COPIES, kb, set ? ", THP from never to madvise" : "");
	hold(r);
	if (munmap(a, HPAGE))
		return fail_errno(r, "munmap");
	return 0;
}

/* ---- the table: the channels of tests/scan/channels (channels.h) ----------- */

/*
 * Channel <name> runs ch_<id> (channels.h: <name> with "-" as "_"); a
 * channel listed there without its function here does not compile.
 */
#define ch_unused NULL		/* the control: nothing runs in the guest */

enum channel_id {
#define CHANNEL_ID(id, name) CH_##id,
	CHANNEL_LIST(CHANNEL_ID)
#undef CHANNEL_ID
};

static const struct channel channels[NCHANNELS] = {
#define CHANNEL_ENTRY(id, name) [CH_##id] = { name, ch_##id },
	CHANNEL_LIST(CHANNEL_ENTRY)
#undef CHANNEL_ENTRY
};

/* The channels that do not just hold their data until the release. */
static const int channel_flags[NCHANNELS] = {
	[CH_alive] = RESIDENT,
	[CH_kstack] = RESIDENT,
	[CH_tty] = FIRST,
	[CH_wifi_alive] = RESIDENT,
};

static int flags_of(const struct channel *ch)
{
	return channel_flags[ch - channels];
}

/* ---- the parent ------------------------------------------------------------- */

struct run {
	int selected;
	pid_t pid;		/* a child alive after its setup, 0 once reaped */
	int holding;		/* released at "go" (not resident) */
};

/* What a channel's child's end says, into its result. */
static void record_exit(struct result *r, int status)
{
	if (WIFSIGNALED(status)) {
		r->ok = 0;
		fail(r, "child killed by signal %d%s", WTERMSIG(status),
		     WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
		return;
	}
	r->ok = WEXITSTATUS(status) == 0;
	if (!r->ok && !r->reason[0])
		fail(r, "child exit status %d", WEXITSTATUS(status));
}

/*
 * Start a channel in a child of its own and wait until it holds (or, if
 * resident, sleeps), or has exited: a FIRST channel when done, any other
 * when it failed before holding.
 */
static void start_channel(const struct channel *ch, struct result *r, struct run *run,
			  int go_w)
{
	/* Beyond the child's own alarm, so that its timeout is the one reported. */
	int i, status, ticks = (timeout_s + 60) * 100;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		fail_errno(r, "fork");
		return;
	}
	if (pid == 0) {
		close(go_w);
		signal(SIGPIPE, SIG_IGN);
		/* If the console is someone's controlling tty, do not stop. */
		signal(SIGTTOU, SIG_IGN);
		signal(SIGTTIN, SIG_IGN);
		if (!(flags_of(ch) & RESIDENT)) {
			alarm((unsigned int)timeout_s + 30);
			decoy_make();
		}
		child_exit(ch->run(ch, r) == 0 ? 0 : 1);
	}
	for (i = 0; i < ticks; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		if (__atomic_load_n(&r->ready, __ATOMIC_SEQ_CST)) {
			run->pid = pid;
			run->holding = !(flags_of(ch) & RESIDENT);
			return;
		}
		if (waitpid(pid, &status, WNOHANG) == pid) {
			record_exit(r, status);
			if (r->ok && !r->skipped[0] && !(flags_of(ch) & FIRST)) {
				r->ok = 0;
				fail(r, "exited before it was set up");
			}
			return;
		}
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	fail(r, "not set up within %d s", timeout_s + 60);
}

static void usage(void)
{
	fprintf(stderr, "usage: lifetime [--list] [--only CHANNEL,...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *only = NULL, *console, *env;
	struct run runs[NCHANNELS];
	struct result *res;
	char reply[64], cons_note[300];
	struct timespec settle = { SETTLE_MS / 1000, (SETTLE_MS % 1000) * 1000000L };
	size_t i;
	int n, failed = 0, scan_ok, ntests = 0, t, pass, go[2];

	for (n = 1; n < argc; n++) {
		if (!strcmp(argv[n], "--list")) {
			for (i = 0; i < NCHANNELS; i++)
				printf("%s\n", channels[i].name);
			return 0;
		} else if (!strcmp(argv[n], "--only") && n + 1 < argc) {
			only = argv[++n];
		} else {
			usage();
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	__builtin_cpu_init();
	env = getenv("LIFETIME_TIMEOUT");
	if (env && atoi(env) > 0)
		timeout_s = atoi(env);

	memset(runs, 0, sizeof(runs));
	for (i = 0; i < NCHANNELS; i++) {
		if (only) {
			size_t len = strlen(channels[i].name);
			const char *p = only;

			while ((p = strstr(p, channels[i].name))) {
				if ((p == only || p[-1] == ',') && (p[len] == ',' || !p[len]))
					break;
				p += len;
			}
			runs[i].selected = p != NULL;
		} else {
			runs[i].selected = 1;
		}
		ntests += runs[i].selected;
	}
	if (only) {	/* every name given must be a channel */
		char *copy = strdup(only), *tok, *save = NULL;

		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			for (i = 0; i < NCHANNELS && strcmp(channels[i].name, tok); i++)
				;
			if (i == NCHANNELS) {
				fprintf(stderr, "lifetime: no channel named '%s'\n", tok);
				return 2;
			}
		}
		free(copy);
	}

	console = getenv("LIFETIME_CONSOLE") ? getenv("LIFETIME_CONSOLE") : "/dev/console";
	n = open(console, O_RDWR | O_NOCTTY);
	if (n >= 0) {
		cons_in = cons_out = n;
		snprintf(cons_note, sizeof(cons_note), "markers and answers on %s", console);
	} else {
		snprintf(cons_note, sizeof(cons_note),
			 "cannot open %s (%s): markers on stdout, answers on stdin",
			 console, strerror(errno));
	}

	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed)) {
		printf("KTAP version 1\n1..1\nnot ok 1 seed # getrandom: %s\n", strerror(errno));
		return 1;
	}
	secret_format_seed(seed, seed_hex);

	res = mmap(NULL, NCHANNELS * sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED) {
		printf("KTAP version 1\n1..1\nnot ok 1 setup # mmap: %s\n", strerror(errno));
		return 1;
	}
	memset(res, 0, NCHANNELS * sizeof(*res));

	if (pipe(go)) {
		printf("KTAP version 1\n1..1\nnot ok 1 setup # pipe: %s\n", strerror(errno));
		return 1;
	}
	go_fd = go[0];

	/*
	 * Every process of the test on one CPU, so one per-cpu free list
	 * sees all the frees and allocations, in order: an exiting process
	 * then takes its own decoys (see decoy_make()), not the pages that
	 * another one, or itself before a migration, freed on another CPU.
	 */
	n = sched_getcpu();
	if (n >= 0) {
		cpu_set_t cpus;

		CPU_ZERO(&cpus);
		CPU_SET(n, &cpus);
		if (sched_setaffinity(0, sizeof(cpus), &cpus) == 0) {
			size_t len = strlen(cons_note);

			snprintf(cons_note + len, sizeof(cons_note) - len, ", on cpu %d", n);
		}
	}

	/* The FIRST channels, then the others, each set up before the next. */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < NCHANNELS; i++) {
			int first = (flags_of(&channels[i]) & FIRST) != 0;

			if (!runs[i].selected || first != (pass == 0))
				continue;
			if (!channels[i].run) {
				res[i].ok = 1;
				note(&res[i], "never derived in the guest");
				continue;
			}
			start_channel(&channels[i], &res[i], &runs[i], go[1]);
		}
	}

	/* The residents must still be there when the host looks. */
	for (i = 0; i < NCHANNELS; i++) {
		int status;

		if (!runs[i].pid || runs[i].holding)
			continue;
		if (waitpid(runs[i].pid, &status, WNOHANG) == runs[i].pid) {
			res[i].ok = 0;
			fail(&res[i], "died before the scan (status 0x%x)", status);
			runs[i].pid = 0;
		}
	}

	/*
	 * The release: every holding channel at once.  From here to the
	 * scan the parent only reaps, syncs and sleeps: no fork, no
	 * allocation, nothing to take the pages just freed.
	 */
	close(go[1]);
	for (i = 0; i < NCHANNELS; i++) {
		pid_t w;
		int status;

		if (!runs[i].pid || !runs[i].holding)
			continue;
		while ((w = waitpid(runs[i].pid, &status, 0)) < 0 && errno == EINTR)
			;
		if (w == runs[i].pid)
			record_exit(&res[i], status);
		else
			fail(&res[i], "waitpid: %s", strerror(errno));
		runs[i].pid = 0;
	}
	sync();
	nanosleep(&settle, NULL);

	if (marker("HARNESS: SCAN %s", seed_hex)) {
		snprintf(reply, sizeof(reply), "(cannot write the marker: %s)", strerror(errno));
	} else if (read_line(cons_in, reply, sizeof(reply), timeout_s) < 0) {
		snprintf(reply, sizeof(reply), "(no answer within %d s: %s)", timeout_s,
			 strerror(errno));
	}
	scan_ok = !strcmp(reply, "scanned");
	if (!scan_ok && strcmp(reply, "failed") && reply[0] != '(') {
		/* Never echo an unexpected line: it could be a late secret. */
		size_t len = strlen(reply);

		scrub(reply, sizeof(reply));
		snprintf(reply, sizeof(reply), "(an unexpected line of %zu characters)", len);
	}

	for (i = 0; i < NCHANNELS; i++) {
		int status;

		if (!runs[i].pid)
			continue;
		if (waitpid(runs[i].pid, &status, WNOHANG) == runs[i].pid) {
			res[i].ok = 0;
			fail(&res[i], "died during the scan (status 0x%x)", status);
			continue;
		}
		kill(runs[i].pid, SIGKILL);
		waitpid(runs[i].pid, &status, 0);
	}

	printf("KTAP version 1\n");
	printf("1..%d\n", ntests + 1);
	printf("# lifetime: seed %s, %s\n", seed_hex, cons_note);
	for (i = 0, t = 0; i < NCHANNELS; i++) {
		if (!runs[i].selected)
			continue;
		t++;
		if (res[i].note[0])
			printf("# %s: %s\n", channels[i].name, res[i].note);
		if (res[i].ok && res[i].skipped[0]) {
			printf("ok %d %s # SKIP %s\n", t, channels[i].name, res[i].skipped);
		} else if (res[i].ok) {
			printf("ok %d %s\n", t, channels[i].name);
		} else {
			printf("not ok %d %s # %s\n", t, channels[i].name,
			       res[i].reason[0] ? res[i].reason : "failed");
			failed = 1;
		}
	}
	if (scan_ok) {
		printf("ok %d scan\n", t + 1);
	} else {
		printf("not ok %d scan # the host answered '%s'\n", t + 1, reply);
		failed = 1;
	}
	return failed;
}
