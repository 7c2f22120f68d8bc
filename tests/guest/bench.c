// SPDX-License-Identifier: GPL-2.0
/*
 * bench.c - process workloads for the sanitize_mem benchmarks (issue 6).
 *
 * Each workload (their list, and the order they run in, is
 * policy/bench-workloads) does a fixed amount of work and reports how
 * long it took in CLOCK_MONOTONIC nanoseconds.  Under QEMU's "-icount shift=0,sleep=off"
 * the guest clock counts executed instructions (1 ns per instruction, idle
 * time skipped to the next timer), so the figure is the same from run to
 * run whatever the host is doing; without icount it is ordinary wall time.
 *
 *   pipe       hackbench-like: groups of senders and receivers over pipes,
 *              every sender writes a fixed number of 100-byte messages to
 *              every receiver of its group (processes, as hackbench -p)
 *   socket     the same over AF_UNIX stream socket pairs (hackbench)
 *   sockpair   one process writes a 100-byte message to an AF_UNIX socket
 *              pair and reads it back: socket's kernel path, with no
 *              scheduler in it, so its icount figure is exact
 *   forkexec   fork, execve("/bin/true"), exit, wait; repeated
 *   tmpfs      create a file in /tmp, write 64 KiB, close, unlink; repeated
 *   getppid    a syscall that does nothing: the cost of entering and
 *              leaving the kernel (STACKLEAK erases on the way out)
 *   readzero   read(2) of 256 bytes from /dev/zero: a little more stack
 *
 * Output is KTAP (the guest /init indents it into its own document):
 *
 *   KTAP version 1
 *   1..6
 *   # bench: scale 60
 *   # BENCH pipe 123456789
 *   ok 1 pipe
 *   ...
 *
 * The work is "units x scale": scale comes from --scale N, or from
 * bench.scale=N on the kernel command line (the guest /init passes no
 * arguments), default 60: about 10 s of TCG wall time for the whole set
 * (scale 5 for a smoke run).
 *
 * Without icount the guest clock cannot be trusted to 0.1% (no HPET or
 * ACPI PM timer; the TSC's frequency comes from a calibration against the
 * PIT that a busy host skews differently at every boot), so the host
 * times each workload by its own clock, as the lines of the bench channel
 * reach it.
 *
 * The bench channel: with bench.clock=/dev/ttyS1 on the kernel command
 * line (tests/bench/run-bench.sh gives the guest a second serial port
 * whose other end is a host FIFO), every event is also written there, one
 * line each, with nothing else on that port to interleave with it:
 *
 *   bench-clock: seq=1 event=plan workloads=pipe,socket scale=60 reps=1 crc=1a2b3c4d
 *   bench-clock: seq=2 event=start name=pipe rep=1 crc=...
 *   bench-clock: seq=3 event=end name=pipe rep=1 ns=123456789 crc=...
 *   bench-clock: seq=4 event=start name=socket rep=1 crc=...
 *   bench-clock: seq=5 event=failed name=socket rep=1 why=socketpair: ... crc=...
 *   bench-clock: seq=6 event=done failed=1 crc=...
 *
 * seq counts from 1 without gaps, "why=" (a failure's reason, free text)
 * is always the last field, and crc is the CRC-32 (zlib's) of the text
 * between "bench-clock: " and " crc=", so the host can tell a line that
 * is lost or damaged from one that is merely late, and "done" says
 * nothing is missing at the end.  The host takes every figure from this
 * channel (tests/bench/report.py); the console's KTAP is for people, and
 * for a matrix cell that runs the program without a channel.
 *
 * The wipe of free memory (issue 35): with bench.wipe=MIB on the kernel
 * command line (or --wipe MIB) the program runs, instead of the process
 * workloads, two steps, bench.reps times over:
 *
 *   dirty   map at most MIB MiB of anonymous memory (less if less is
 *           available: it keeps an eighth of what /proc/meminfo calls
 *           available, 32 MiB at least), fault it in, fill it with a
 *           pattern (the timed part: the guest's own memset), unmap it.
 *           The pages go back to the page allocator holding the pattern
 *           (under "off"), so the wipe has real work, not zero pages;
 *   wipe    write 1 to /sys/kernel/mm/sanitize/scrub_free (root) and read
 *           the run's figures back from the files beside it.
 *
 * Their end lines carry figures after ns= (the wipe's ns= is the kernel's
 * own scrub_free_ns, not the program's):
 *
 *   bench-clock: seq=3 event=end name=dirty rep=1 ns=812345678 bytes=805306368 crc=...
 *   bench-clock: seq=5 event=end name=wipe rep=1 ns=912345678 bytes=...
 *                pages=... objects=... skipped=... crc=...
 *
 * A kernel without the wipe (vanilla) fails the wipe step with the reason.
 *
 * Workloads are chosen by name on the command
 * line or with bench.only=a,b on the kernel command line; default all.
 * --reps N or bench.reps=N runs each workload N times in a row, one
 * "# BENCH" line each (default 1).  Under icount one run is exactly
 * repeatable, but the messaging workloads are chaotic: a different
 * environment or kernel changes the interleaving of 20 processes, and
 * with it the count, by a few percent; the host averages the repetitions.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_SCALE	60
#define MSG_SIZE	100		/* hackbench's default datasize */
#define HB_GROUPS	2
#define HB_FDS		5		/* senders (and receivers) per group */
#define FILE_SIZE	(64 * 1024)
#define READ_SIZE	256
#define TRUE_PATH	"/bin/true"

static ssize_t write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, p + done, len - done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static char errbuf[256];
/* What a step measured besides its time: " key=value" pairs, for its end line. */
static char figures[256];
static char clock_path[64];
static int clock_fd = -1;
static unsigned long clock_seq;
static int clock_broken;

/* CRC-32 as zlib computes it (reflected, polynomial 0xedb88320). */
static uint32_t crc32(const char *p, size_t len)
{
	uint32_t crc = 0xffffffffu;
	int k;

	while (len--) {
		crc ^= (unsigned char)*p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}

/*
 * One event on the bench channel (see the top of this file), written
 * straight to the serial port and drained before returning, so the host
 * stamps a "start" before the workload runs and an "end" as soon as it
 * is over.  A channel that fails is reported once and then left alone:
 * the host notices the missing lines.
 */
static void __attribute__((format(printf, 1, 2))) mark(const char *fmt, ...)
{
	char body[400], line[448];
	va_list ap;
	int n;

	if (clock_fd < 0)
		return;
	va_start(ap, fmt);
	n = snprintf(body, sizeof(body), "seq=%lu ", ++clock_seq);
	vsnprintf(body + n, sizeof(body) - (size_t)n, fmt, ap);
	va_end(ap);
	n = snprintf(line, sizeof(line), "bench-clock: %s crc=%08x\n", body,
		     (unsigned int)crc32(body, strlen(body)));
	if (write_all(clock_fd, line, (size_t)n) != n || tcdrain(clock_fd)) {
		if (!clock_broken)
			fprintf(stderr, "bench: %s: %s\n", clock_path, strerror(errno));
		clock_broken = 1;
		close(clock_fd);
		clock_fd = -1;
	}
}

/* The bench channel: raw (no \r added, no echo), as the host reads it. */
static int open_clock(const char *path)
{
	struct termios t;

	clock_fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (clock_fd < 0 || tcgetattr(clock_fd, &t)) {
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
		return 0;
	}
	cfmakeraw(&t);
	if (tcsetattr(clock_fd, TCSANOW, &t)) {
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
		return 0;
	}
	return 1;
}

static int __attribute__((format(printf, 1, 2))) failf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	return -1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* --- hackbench ------------------------------------------------------------ */

/*
 * As hackbench: every child tells the parent it is ready on one pipe and
 * waits for the parent to close another before it starts, so the clock
 * runs over the messaging only, not over the forks.
 */
struct barrier {
	int ready[2];
	int go[2];
};

static void child_ready(struct barrier *b)
{
	char c = 'r', d;

	close(b->go[1]);
	if (write(b->ready[1], &c, 1) != 1)
		_exit(2);
	/* returns 0 when the parent closes the write end */
	while (read(b->go[0], &d, 1) < 0 && errno == EINTR)
		;
}

static void receiver(struct barrier *b, int in, unsigned long bytes)
{
	char buf[MSG_SIZE * 8];

	child_ready(b);
	while (bytes > 0) {
		ssize_t n = read(in, buf, bytes < sizeof(buf) ? bytes : sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(3);
		bytes -= (unsigned long)n;
	}
	_exit(0);
}

static void sender(struct barrier *b, const int *out, int nout, unsigned long loops)
{
	char msg[MSG_SIZE];
	unsigned long i;
	int j;

	memset(msg, 'm', sizeof(msg));
	child_ready(b);
	for (i = 0; i < loops; i++)
		for (j = 0; j < nout; j++)
			if (write_all(out[j], msg, sizeof(msg)) < 0)
				_exit(4);
	_exit(0);
}

/* Fork one group; its pids are appended to pids[*npids]. */
static int hb_group(struct barrier *b, int use_socket, unsigned long loops,
		    pid_t *pids, int *npids)
{
	int rd[HB_FDS], wr[HB_FDS];
	int i, j;

	for (i = 0; i < HB_FDS; i++) {
		int fds[2];

		if (use_socket ? socketpair(AF_UNIX, SOCK_STREAM, 0, fds) : pipe(fds))
			return failf("%s: %s", use_socket ? "socketpair" : "pipe",
				     strerror(errno));
		rd[i] = fds[0];
		wr[i] = fds[1];
	}
	for (i = 0; i < HB_FDS; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return failf("fork: %s", strerror(errno));
		if (pid == 0) {
			for (j = 0; j < HB_FDS; j++) {
				close(wr[j]);
				if (j != i)
					close(rd[j]);
			}
			receiver(b, rd[i], (unsigned long)HB_FDS * loops * MSG_SIZE);
		}
		pids[(*npids)++] = pid;
	}
	for (i = 0; i < HB_FDS; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return failf("fork: %s", strerror(errno));
		if (pid == 0) {
			for (j = 0; j < HB_FDS; j++)
				close(rd[j]);
			sender(b, wr, HB_FDS, loops);
		}
		pids[(*npids)++] = pid;
	}
	for (i = 0; i < HB_FDS; i++) {
		close(rd[i]);
		close(wr[i]);
	}
	return 0;
}

static int hackbench(int use_socket, unsigned long scale, uint64_t *ns)
{
	pid_t pids[HB_GROUPS * HB_FDS * 2];
	unsigned long loops = (use_socket ? 20 : 60) * scale;
	struct barrier b;
	int npids = 0, i, ret = 0, status;
	uint64_t t0;
	char c;

	if (pipe(b.ready) || pipe(b.go))
		return failf("pipe: %s", strerror(errno));
	for (i = 0; i < HB_GROUPS && ret == 0; i++)
		ret = hb_group(&b, use_socket, loops, pids, &npids);
	close(b.ready[1]);
	close(b.go[0]);
	if (ret) {
		for (i = 0; i < npids; i++)
			kill(pids[i], SIGKILL);
	} else {
		for (i = 0; i < npids; i++)
			if (read(b.ready[0], &c, 1) != 1) {
				ret = failf("a child died before it was ready");
				break;
			}
	}
	t0 = now_ns();
	close(b.go[1]);			/* go */
	for (i = 0; i < npids; i++) {
		if (waitpid(pids[i], &status, 0) < 0) {
			ret = failf("waitpid: %s", strerror(errno));
			continue;
		}
		if (ret == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
			ret = failf("child %d: status 0x%x", (int)pids[i], status);
	}
	*ns = now_ns() - t0;
	close(b.ready[0]);
	return ret;
}

static int w_pipe(unsigned long scale, uint64_t *ns)
{
	return hackbench(0, scale, ns);
}

static int w_socket(unsigned long scale, uint64_t *ns)
{
	return hackbench(1, scale, ns);
}

/*
 * One process sends a message on an AF_UNIX stream socket pair and reads
 * it back from the other end: every skb is allocated, copied and freed
 * exactly as in "socket", but with no other process to interleave with,
 * so under icount the count is the same at every boot and a difference
 * between two kernels is their per-message path, not the scheduler.
 */
static int w_sockpair(unsigned long scale, uint64_t *ns)
{
	unsigned long i, n = 400 * scale;
	char msg[MSG_SIZE], back[MSG_SIZE];
	int fds[2], ret = 0;
	uint64_t t0;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds))
		return failf("socketpair: %s", strerror(errno));
	memset(msg, 'm', sizeof(msg));
	t0 = now_ns();
	for (i = 0; i < n && ret == 0; i++) {
		if (write_all(fds[0], msg, sizeof(msg)) < 0)
			ret = failf("write: %s", strerror(errno));
		else if (read(fds[1], back, sizeof(back)) != (ssize_t)sizeof(back))
			ret = failf("read: short or failed (%s)", strerror(errno));
	}
	*ns = now_ns() - t0;
	close(fds[0]);
	close(fds[1]);
	return ret;
}

/* --- fork/exec/exit ------------------------------------------------------- */

static int w_forkexec(unsigned long scale, uint64_t *ns)
{
	unsigned long i, n = 3 * scale;
	char *argv[] = { "true", NULL };
	char *envp[] = { NULL };
	uint64_t t0 = now_ns();
	int status;

	if (access(TRUE_PATH, X_OK))
		return failf("%s: %s", TRUE_PATH, strerror(errno));
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return failf("fork: %s", strerror(errno));
		if (pid == 0) {
			execve(TRUE_PATH, argv, envp);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0)
			return failf("waitpid: %s", strerror(errno));
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			return failf("%s: status 0x%x", TRUE_PATH, status);
	}
	*ns = now_ns() - t0;
	return 0;
}

/* --- tmpfs file ------------------------------------------------------------ */

static int w_tmpfs(unsigned long scale, uint64_t *ns)
{
	static char buf[FILE_SIZE];
	unsigned long i, n = 35 * scale;
	char path[64];
	uint64_t t0;

	memset(buf, 'f', sizeof(buf));
	snprintf(path, sizeof(path), "/tmp/bench.%d", (int)getpid());
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);

		if (fd < 0)
			return failf("open %s: %s", path, strerror(errno));
		if (write_all(fd, buf, sizeof(buf)) < 0) {
			failf("write %s: %s", path, strerror(errno));
			close(fd);
			unlink(path);
			return -1;
		}
		close(fd);
		if (unlink(path))
			return failf("unlink %s: %s", path, strerror(errno));
	}
	*ns = now_ns() - t0;
	return 0;
}

/* --- syscalls -------------------------------------------------------------- */

static int w_getppid(unsigned long scale, uint64_t *ns)
{
	unsigned long i, n = 20000 * scale;
	uint64_t t0 = now_ns();
	long parent = syscall(SYS_getppid);

	for (i = 0; i < n; i++)
		if (syscall(SYS_getppid) != parent)
			return failf("getppid changed");
	*ns = now_ns() - t0;
	return 0;
}

static int w_readzero(unsigned long scale, uint64_t *ns)
{
	unsigned long i, n = 13000 * scale;
	char buf[READ_SIZE];
	uint64_t t0;
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return failf("/dev/zero: %s", strerror(errno));
	t0 = now_ns();
	for (i = 0; i < n; i++)
		if (read(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			close(fd);
			return failf("read /dev/zero: %s", strerror(errno));
		}
	*ns = now_ns() - t0;
	close(fd);
	return 0;
}

/* --- the wipe of free memory (issue 35) ------------------------------------ */

#define SANITIZE_SYSFS	"/sys/kernel/mm/sanitize/"
#define DIRTY_PATTERN	0xa5
#define MIB		(1024UL * 1024)

/* bench.wipe=MIB: dirty at most this many MiB, then wipe (0: the process workloads). */
static unsigned long wipe_mib;

/* A field of /proc/meminfo, in bytes; 0 if it is not there. */
static unsigned long meminfo_bytes(const char *field)
{
	char line[128];
	size_t len = strlen(field);
	unsigned long kb = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, len) && line[len] == ':') {
			kb = strtoul(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return kb * 1024;
}

/* One decimal file of /sys/kernel/mm/sanitize/; 0 on success. */
static int read_sanitize(const char *name, unsigned long long *v)
{
	char path[128], buf[32], *end;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), SANITIZE_SYSFS "%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return failf("%s: %s", path, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return failf("%s: %s", path, n < 0 ? strerror(errno) : "empty");
	buf[n] = '\0';
	errno = 0;
	*v = strtoull(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n'))
		return failf("%s: not a number: %.20s", path, buf);
	return 0;
}

/*
 * Leave free memory holding a pattern.  The pages are faulted in first
 * (MAP_POPULATE) so that the timed fill is the guest's memset alone, the
 * figure the wipe's own memset is read beside; the reserve keeps the OOM
 * killer away from a guest with little to spare.
 */
static int w_dirty(unsigned long scale, uint64_t *ns)
{
	unsigned long avail = meminfo_bytes("MemAvailable"), reserve, len;
	uint64_t t0;
	char *p;

	(void)scale;
	reserve = avail / 8 > 32 * MIB ? avail / 8 : 32 * MIB;
	if (avail < reserve + MIB)
		return failf("MemAvailable %lu bytes: nothing to dirty", avail);
	len = avail - reserve;
	if (len > wipe_mib * MIB)
		len = wipe_mib * MIB;
	len &= ~(MIB - 1);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return failf("mmap %lu bytes: %s", len, strerror(errno));
	t0 = now_ns();
	memset(p, DIRTY_PATTERN, len);
	*ns = now_ns() - t0;
	/* the compiler may not drop a fill nobody reads: read one byte back */
	if (((volatile char *)p)[len - 1] != (char)DIRTY_PATTERN) {
		munmap(p, len);
		return failf("the fill did not hold");
	}
	if (munmap(p, len))
		return failf("munmap: %s", strerror(errno));
	snprintf(figures, sizeof(figures), " bytes=%lu", len);
	return 0;
}

/*
 * One wipe, its figures read back from sysfs.  scrub_free_runs must go up
 * by exactly one, or the figures are another wipe's (SysRq W, the
 * shutdown path) and not this one's.
 */
static int w_wipe(unsigned long scale, uint64_t *ns)
{
	static const char *const names[] = { "bytes", "pages", "objects", "skipped" };
	unsigned long long runs0, runs1, v[4], wipe_ns;
	size_t i;
	int fd;

	(void)scale;
	if (read_sanitize("scrub_free_runs", &runs0))
		return -1;
	fd = open(SANITIZE_SYSFS "scrub_free", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return failf(SANITIZE_SYSFS "scrub_free: %s", strerror(errno));
	if (write(fd, "1", 1) != 1) {
		failf("write " SANITIZE_SYSFS "scrub_free: %s", strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if (read_sanitize("scrub_free_runs", &runs1) || read_sanitize("scrub_free_ns", &wipe_ns) ||
	    read_sanitize("scrub_free_bytes", &v[0]) || read_sanitize("scrub_free_pages", &v[1]) ||
	    read_sanitize("scrub_free_objects", &v[2]) || read_sanitize("scrub_free_skipped", &v[3]))
		return -1;
	if (runs1 != runs0 + 1)
		return failf("scrub_free_runs went from %llu to %llu: the figures are "
			     "not this wipe's", runs0, runs1);
	*ns = wipe_ns;
	for (i = 0; i < 4; i++)
		snprintf(figures + strlen(figures), sizeof(figures) - strlen(figures),
			 " %s=%llu", names[i], v[i]);
	return 0;
}

/* --- driver ---------------------------------------------------------------- */

/*
 * The workloads in the order they run: policy/bench-workloads, the list
 * the host's report reads too, made into WORKLOAD_LIST by
 * tests/guest/bench-workloads-h.py at build time.  Each name's function is
 * w_<name>: a name without one does not compile, a function without a
 * name is unused (-Werror).
 */
#include "bench-workloads.h"

static const struct workload {
	const char *name;
	int (*run)(unsigned long scale, uint64_t *ns);
} workloads[] = {
#define WORKLOAD(name) { #name, w_##name },
	WORKLOAD_LIST(WORKLOAD)
#undef WORKLOAD
};
#define NWORKLOADS (int)(sizeof(workloads) / sizeof(workloads[0]))

/* bench.wipe=: these steps instead, in this order (not policy/bench-workloads). */
static const struct workload wipe_steps[] = {
	{ "dirty", w_dirty },
	{ "wipe", w_wipe },
};
#define NWIPE_STEPS (int)(sizeof(wipe_steps) / sizeof(wipe_steps[0]))

static int find(const char *name)
{
	int i;

	for (i = 0; i < NWORKLOADS; i++)
		if (!strcmp(workloads[i].name, name))
			return i;
	return -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench [--list] [--scale N] [--reps N] [--wipe MIB] [WORKLOAD...]\n"
		"kernel command line: bench.scale=N bench.reps=N bench.only=a,b bench.wipe=MIB\n"
		"                     bench.clock=/dev/ttyS1 (the bench channel)\n");
	exit(2);
}

/* Select the workloads named in a comma list; 0 if a name is unknown. */
static int select_list(char *list, int *sel)
{
	char *save = NULL, *tok;

	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int i = find(tok);

		if (i < 0) {
			fprintf(stderr, "bench: no workload named '%s'\n", tok);
			return 0;
		}
		sel[i] = 1;
	}
	return 1;
}

static int parse_scale(const char *s, unsigned long *scale)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v == 0 || v > 100000)
		return 0;
	*scale = v;
	return 1;
}

/* bench.scale=, bench.reps=, bench.only=, bench.wipe= and bench.clock= from /proc/cmdline. */
static int read_cmdline(unsigned long *scale, unsigned long *reps, int *sel, int *any)
{
	char line[4096], *save = NULL, *tok;
	FILE *f = fopen("/proc/cmdline", "r");
	int ok = 1;

	if (!f)
		return 1;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (!strncmp(tok, "bench.clock=", 12)) {
			/* only a serial port: never scribble on a real machine's files */
			if (strncmp(tok + 12, "/dev/ttyS", 9) ||
			    strlen(tok + 12) >= sizeof(clock_path)) {
				fprintf(stderr, "bench: bad %s (a /dev/ttyS* port)\n", tok);
				ok = 0;
			} else {
				strcpy(clock_path, tok + 12);
			}
		} else if (!strncmp(tok, "bench.scale=", 12)) {
			if (!parse_scale(tok + 12, scale)) {
				fprintf(stderr, "bench: bad %s\n", tok);
				ok = 0;
			}
		} else if (!strncmp(tok, "bench.reps=", 11)) {
			if (!parse_scale(tok + 11, reps)) {
				fprintf(stderr, "bench: bad %s\n", tok);
				ok = 0;
			}
		} else if (!strncmp(tok, "bench.wipe=", 11)) {
			if (!parse_scale(tok + 11, &wipe_mib)) {
				fprintf(stderr, "bench: bad %s\n", tok);
				ok = 0;
			}
		} else if (!strncmp(tok, "bench.only=", 11)) {
			*any = 1;
			if (!select_list(tok + 11, sel))
				ok = 0;
		}
	}
	return ok;
}

/*
 * Run one repetition of one workload or step, its events on the bench
 * channel and its "# BENCH" line on the console; 0, or -1 with the reason
 * in errbuf.
 */
static int run_one(const struct workload *w, unsigned long scale, unsigned long rep)
{
	uint64_t ns = 0;

	errbuf[0] = '\0';
	figures[0] = '\0';
	fflush(stdout);		/* nothing buffered may be forked */
	mark("event=start name=%s rep=%lu", w->name, rep);
	if (w->run(scale, &ns)) {
		errbuf[strcspn(errbuf, "\n")] = '\0';
		mark("event=failed name=%s rep=%lu why=%s", w->name, rep,
		     errbuf[0] ? errbuf : "?");
		return -1;
	}
	mark("event=end name=%s rep=%lu ns=%llu%s", w->name, rep, (unsigned long long)ns,
	     figures);
	printf("# BENCH %s %llu%s\n", w->name, (unsigned long long)ns, figures);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long scale = DEFAULT_SCALE, reps = 1;
	int sel[NWORKLOADS] = { 0 };
	int any = 0, i, n, t, failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!read_cmdline(&scale, &reps, sel, &any))
		return 2;
	if (clock_path[0] && !open_clock(clock_path))
		return 2;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--list")) {
			for (t = 0; t < NWORKLOADS; t++)
				printf("%s\n", workloads[t].name);
			return 0;
		} else if (!strcmp(argv[i], "--scale")) {
			if (++i >= argc || !parse_scale(argv[i], &scale))
				usage();
		} else if (!strcmp(argv[i], "--reps")) {
			if (++i >= argc || !parse_scale(argv[i], &reps))
				usage();
		} else if (!strcmp(argv[i], "--wipe")) {
			if (++i >= argc || !parse_scale(argv[i], &wipe_mib))
				usage();
		} else if (argv[i][0] == '-') {
			usage();
		} else {
			if (!any)
				memset(sel, 0, sizeof(sel));
			any = 1;
			if (!select_list(argv[i], sel))
				return 2;
		}
	}

	if (wipe_mib) {
		/*
		 * The wipe's steps take turns, dirty then wipe, so that every
		 * wipe has memory to clear.  A failed step ends the run.
		 */
		unsigned long r;
		int bad[NWIPE_STEPS] = { 0 };

		if (any) {
			fprintf(stderr, "bench: bench.wipe= runs the wipe alone, no workload\n");
			return 2;
		}
		printf("KTAP version 1\n1..%d\n", NWIPE_STEPS);
		printf("# bench: wipe %lu MiB reps %lu\n", wipe_mib, reps);
		mark("event=plan workloads=dirty,wipe scale=%lu reps=%lu wipe_mib=%lu",
		     scale, reps, wipe_mib);
		for (r = 1; r <= reps && !failed; r++)
			for (t = 0; t < NWIPE_STEPS && !failed; t++)
				if (run_one(&wipe_steps[t], scale, r))
					failed = bad[t] = 1;
		for (t = 0; t < NWIPE_STEPS; t++) {
			if (bad[t])
				printf("not ok %d %s # %s\n", t + 1, wipe_steps[t].name, errbuf);
			else
				printf("ok %d %s%s\n", t + 1, wipe_steps[t].name,
				       failed ? " # SKIP an earlier step failed" : "");
		}
		mark("event=done failed=%d", failed);
		return clock_broken ? 1 : failed;
	}

	if (!any)
		for (t = 0; t < NWORKLOADS; t++)
			sel[t] = 1;
	for (n = 0, t = 0; t < NWORKLOADS; t++)
		n += sel[t];

	printf("KTAP version 1\n1..%d\n", n);
	printf("# bench: scale %lu reps %lu\n", scale, reps);
	{
		char names[NWORKLOADS * 16] = "";

		for (t = 0; t < NWORKLOADS; t++)
			if (sel[t])
				snprintf(names + strlen(names), sizeof(names) - strlen(names),
					 "%s%s", names[0] ? "," : "", workloads[t].name);
		mark("event=plan workloads=%s scale=%lu reps=%lu", names, scale, reps);
	}
	for (i = 0, t = 0; t < NWORKLOADS; t++) {
		unsigned long r;
		int bad = 0;

		if (!sel[t])
			continue;
		i++;
		for (r = 1; r <= reps && !bad; r++)
			if (run_one(&workloads[t], scale, r))
				bad = 1;
		if (bad) {
			printf("not ok %d %s # %s\n", i, workloads[t].name, errbuf);
			failed = 1;
		} else {
			printf("ok %d %s\n", i, workloads[t].name);
		}
	}
	mark("event=done failed=%d", failed);
	if (clock_broken)
		return 1;
	return failed;
}
