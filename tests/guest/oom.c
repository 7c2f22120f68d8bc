// SPDX-License-Identifier: GPL-2.0
/*
 * oom - drive the guest into the OOM killer and check that it survives.
 *
 * A child maps and touches anonymous memory, 1 MiB at a time, until the
 * kernel kills it.  Its oom_score_adj is 1000, so it is the task the OOM
 * killer picks (never the guest's init, its shell or sed); the parent's is
 * -1000.  The child counts what it touched in a shared page, so the parent
 * knows how far it got.  Then, in KTAP:
 *
 *   victim_sigkill              the child died of SIGKILL, not of anything
 *                               else, and did not run out of address space
 *   oom_killer_fired            the kernel log says "<comm> invoked
 *                               oom-killer" and "Out of memory: Killed
 *                               process <the child's pid>"
 *   system_alive                fork and exec, and 16 MiB mapped, touched
 *                               and unmapped, still work
 *   policy_unchanged            /sys/kernel/mm/sanitize/policy as before
 *   no_sanitize_verify_reports  no "sanitize_mem: write after free" in the log
 *
 * The OOM report itself is printed by the kernel on the console: a warning
 * line, a stack dump ("Call Trace:") and the memory state; an OOM cell's
 * judge must allow exactly that (see the comment at OOM_REPORT below).
 *
 * usage: oom
 * Exit status 0 if every check passed, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK		(1UL << 20)
#define VICTIM		"oom-victim"
#define TIMEOUT_S	600		/* TCG with KASAN is slow; the judge's own timeout is the real one */

/*
 * What mm/oom_kill.c prints (6.12) when the OOM killer runs, at the levels
 * the guest's console shows (init sets the console loglevel to 5: warnings
 * and worse; dump_stack() and show_mem() print at the default level, 4):
 *   "<comm> invoked oom-killer: gfp_mask=..., order=..., oom_score_adj=..."
 *   dump_stack(): "CPU: ... Comm: <comm> ...", "Hardware name: ...",
 *                 "Call Trace:", " <TASK>", frames, " </TASK>"
 *   __show_mem(): "Mem-Info:", per-node and per-zone lines, "... pages RAM"
 *   "Out of memory: Killed process <pid> (<comm>) total-vm:..." (pr_err)
 * dump_tasks(), "oom-kill:constraint=..." and the oom_reaper line are
 * pr_info and stay off the console.
 */
static const char *const OOM_REPORT[] = { "invoked oom-killer", "Out of memory: Killed process" };

static int n, fails;

static __attribute__((format(printf, 3, 4)))
void check(int ok, const char *name, const char *fmt, ...)
{
	char msg[512] = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("%sok %d %s%s%s\n", ok ? "" : "not ", ++n, name, msg[0] ? " # " : "", msg);
	if (!ok)
		fails++;
	fflush(stdout);
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	ssize_t len = (ssize_t)strlen(text);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, len) == len;
	close(fd);
	return ok ? 0 : -1;
}

static void read_policy(char *buf, size_t size)
{
	FILE *f = fopen("/sys/kernel/mm/sanitize/policy", "r");

	snprintf(buf, size, "none");
	if (f) {
		if (fgets(buf, (int)size, f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
}

/* The whole kernel log, NUL-terminated (caller frees), or NULL. */
static char *read_klog(void)
{
	int size = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	char *buf;
	int len;

	if (size <= 0)
		return NULL;
	buf = malloc((size_t)size + 1);
	if (!buf)
		return NULL;
	len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, size);
	if (len < 0) {
		free(buf);
		return NULL;
	}
	buf[len] = 0;
	return buf;
}

/* Print the log line that contains @at as a diagnostic. */
static void print_line(const char *log, const char *at)
{
	const char *start = at, *end = strchr(at, '\n');

	while (start > log && start[-1] != '\n')
		start--;
	if (start[0] == '<' && start[1] && start[2] == '>')	/* syslog level */
		start += 3;
	printf("# kernel: %.*s\n", (int)(end ? end - start : (long)strlen(start)), start);
}

static unsigned long memtotal_kb(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	unsigned long kb = 0;
	char line[128];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Touch memory until killed; never returns unless the address space ends. */
static void victim(volatile unsigned long *touched, unsigned long limit)
{
	long page = sysconf(_SC_PAGESIZE);

	prctl(PR_SET_NAME, VICTIM, 0, 0, 0);
	if (write_file("/proc/self/oom_score_adj", "1000"))
		_exit(4);
	while (*touched < limit) {
		char *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		unsigned long i;

		if (p == MAP_FAILED)
			_exit(3);
		for (i = 0; i < CHUNK; i += (unsigned long)page)
			p[i] = 1;
		*touched += CHUNK;
	}
	_exit(5);
}

static int still_alive(char *why, size_t size)
{
	size_t len = 16 * CHUNK;
	char *p;
	pid_t pid;
	int status;

	pid = fork();
	if (pid < 0) {
		snprintf(why, size, "fork: %s", strerror(errno));
		return 0;
	}
	if (pid == 0) {
		execl("/bin/busybox", "true", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(why, size, "fork and exec of true failed (status 0x%x)", status);
		return 0;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		snprintf(why, size, "mmap of 16 MiB: %s", strerror(errno));
		return 0;
	}
	memset(p, 0x5a, len);
	munmap(p, len);
	snprintf(why, size, "fork, exec and 16 MiB of anonymous memory work");
	return 1;
}

int main(void)
{
	char before[64], after[64], why[256], needle[64], marker[64];
	unsigned long total_kb = memtotal_kb();
	volatile unsigned long *touched;
	struct timespec t0, t1;
	int status = 0, killed, fired, found;
	const char *since;
	char *log;
	pid_t pid;
	double secs;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n1..5\n");
	read_policy(before, sizeof(before));
	/*
	 * What this test judges is logged after this line: earlier tests of
	 * the same boot may have provoked reports on purpose.
	 */
	snprintf(marker, sizeof(marker), "oom: test %d starts", (int)getpid());
	if (write_file("/dev/kmsg", marker))
		printf("# could not write to /dev/kmsg: %s\n", strerror(errno));
	if (write_file("/proc/self/oom_score_adj", "-1000"))
		printf("# could not set our own oom_score_adj to -1000: %s\n", strerror(errno));

	touched = mmap(NULL, sizeof(*touched), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (touched == MAP_FAILED) {
		perror("oom: mmap");
		return 1;
	}
	*touched = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		perror("oom: fork");
		return 1;
	}
	/* Four times RAM is more than it can ever get without swap. */
	if (pid == 0)
		victim(touched, 4 * total_kb * 1024);

	signal(SIGALRM, SIG_DFL);
	alarm(TIMEOUT_S);	/* if the kernel never kills it, this kills us */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	alarm(0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

	printf("# victim pid %d touched %lu MiB of anonymous memory in %.1f s (MemTotal %lu MiB)\n",
	       pid, *touched >> 20, secs, total_kb >> 10);
	killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
	if (WIFSIGNALED(status))
		check(killed, "victim_sigkill", "killed by signal %d", WTERMSIG(status));
	else
		check(0, "victim_sigkill", "exited with status %d (3: mmap failed, 4: oom_score_adj, 5: never killed)",
		      WEXITSTATUS(status));

	log = read_klog();
	snprintf(needle, sizeof(needle), "%s %d (", OOM_REPORT[1], pid);
	fired = 0;
	if (log) {
		const char *b = strstr(log, needle), *a = NULL, *p;

		/* The report of the OOM that chose the victim: the last one before. */
		for (p = log; b && (p = strstr(p, OOM_REPORT[0])) && p < b; p++)
			a = p;
		if (a)
			print_line(log, a);
		if (b)
			print_line(log, b);
		fired = a && b;
	}
	check(fired, "oom_killer_fired", "%s", !log ? "cannot read the kernel log" :
	      fired ? "the kernel's OOM killer chose the victim" :
	      "no \"invoked oom-killer\" and \"Out of memory: Killed process <pid>\" in the log");

	found = still_alive(why, sizeof(why));
	check(found, "system_alive", "%s", why);

	read_policy(after, sizeof(after));
	check(!strcmp(before, after), "policy_unchanged", "%s -> %s", before, after);

	/* Since the marker; all of the log if it wrapped past it. */
	since = log ? strstr(log, marker) : NULL;
	if (log && !since)
		since = log;
	found = since && strstr(since, "sanitize_mem: write after free");
	check(!found, "no_sanitize_verify_reports", "%s", found ? "a write after free was reported" : "");
	free(log);
	return fails ? 1 : 0;
}
