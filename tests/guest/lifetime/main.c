// SPDX-License-Identifier: GPL-2.0
/*
 * lifetime - the guest half of the attacker's-view test (issue 5).
 *
 * Pushes a secret through each channel of tests/scan/channels (one
 * function per channel in ch-*.c, table below), each in a child process,
 * then asks the host to scan guest RAM for them and prints KTAP about the
 * channels' mechanics (did each one run).  The copy counts themselves are
 * the host's (tests/scan/ramscan).
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
 *   "HARNESS: SCAN-AT-POWEROFF <seed>"  lifetime.scan=poweroff on the
 *                                     kernel command line: no answer, the
 *                                     host scans the RAM file once QEMU
 *                                     has exited (the shutdown wipe's
 *                                     cells); the resident channels are
 *                                     killed before the power-off then
 * With lifetime.wipe=1 on the command line the program writes "1" to
 * /sys/kernel/mm/sanitize/scrub_free between the release and the scan.
 * The markers go to the console device directly, not to stdout: the guest
 * /init pipes stdout through busybox sed, which buffers until the program
 * exits, and the program cannot wait for an answer to a question the host
 * has not seen yet.  KTAP goes to stdout.
 *
 * usage: lifetime [--real] [--list] [--only CH,CH...]
 * --real (or lifetime.list=real on the kernel command line): the channels
 * of tests/scan/channels-real, driven by real Debian programs, instead.
 * environment: LIFETIME_CONSOLE (console device), LIFETIME_TMP (tmpfs
 * directory, default /tmp), LIFETIME_CGROUP (where cgroup2 is or is to be
 * mounted, default /sys/fs/cgroup), LIFETIME_TIMEOUT (seconds to wait for
 * the host's answers, default 120).
 * Exit status 0 if every channel ran (or was skipped for want of a kernel
 * feature) and the host scanned, 1 otherwise, 2 on usage errors.
 *
 * The program's files: lifetime.h says which does what.
 *
 * Build: gcc -static -O2 -Wall -Wextra -Werror -Itests/guest/lifetime -Itests/guest
 *        -I<dir of channels.h> tests/guest/lifetime/[a-z]*.c
 */
#include "lifetime.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/wait.h>

uint64_t seed;
char seed_hex[SECRET_SEED_HEX + 1];
int cons_in = 0, cons_out = 1;
int timeout_s = 120;
int go_fd = -1;
int helper_fd = -1;

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

/* ---- the tables: tests/scan/channels and tests/scan/channels-real ------------ */

/*
 * Channel <name> runs ch_<id> (channels.h and channels-real.h: <name> with
 * "-" as "_"); a channel listed there without its function does not link.
 * Two lists: the one of make check (tests/scan/channels, channels.h) and
 * the channels driven by real Debian programs (tests/scan/channels-real,
 * channels-real.h, make lifetime-real), chosen by "lifetime.list=real" on
 * the kernel command line or --real.
 */
#define ch_unused NULL		/* the controls: nothing runs in the guest */
#define ch_real_unused NULL

enum channel_id {
#define CHANNEL_ID(id, name) CH_##id,
	CHANNEL_LIST(CHANNEL_ID)
#undef CHANNEL_ID
};

enum channel_real_id {
#define CHANNEL_ID(id, name) CHR_##id,
	CHANNEL_LIST_REAL(CHANNEL_ID)
#undef CHANNEL_ID
};

static const struct channel main_channels[NCHANNELS] = {
#define CHANNEL_ENTRY(id, name) [CH_##id] = { name, ch_##id },
	CHANNEL_LIST(CHANNEL_ENTRY)
#undef CHANNEL_ENTRY
};

static const struct channel real_channels[NCHANNELS_REAL] = {
#define CHANNEL_ENTRY(id, name) [CHR_##id] = { name, ch_##id },
	CHANNEL_LIST_REAL(CHANNEL_ENTRY)
#undef CHANNEL_ENTRY
};

/* The channels that do not just hold their data until the release. */
static const int main_flags[NCHANNELS] = {
	[CH_alive] = RESIDENT,
	[CH_kstack] = RESIDENT,
	[CH_tty] = FIRST,
	[CH_wifi_alive] = RESIDENT,
};

static const int real_flags[NCHANNELS_REAL] = {
	[CHR_wifi_wpa2_tk] = FIRST,
	[CHR_tcp_alive] = RESIDENT,
	[CHR_pty_ssh_open] = RESIDENT,
	[CHR_pty_kill] = RESIDENT,
	[CHR_dm_crypt_schedule] = FIRST,
	[CHR_dm_crypt_alive_schedule] = FIRST,
};

#define MAXCHANNELS	(NCHANNELS + NCHANNELS_REAL)

/* The list this run uses. */
static const struct channel *channels = main_channels;
static size_t nchannels = NCHANNELS;

int flags_of(const struct channel *ch)
{
	if (ch >= main_channels && ch < main_channels + NCHANNELS)
		return main_flags[ch - main_channels];
	return real_flags[ch - real_channels];
}

/*
 * Is @word among the words of /proc/cmdline?  The cell's words for this
 * program: "lifetime.list=real" (the channels of tests/scan/channels-real),
 * "lifetime.scan=poweroff" (the host scans after QEMU has exited, for the
 * shutdown wipe) and "lifetime.wipe=1" (sanitize_mem's wipe of free memory
 * between the release and the scan, written to
 * /sys/kernel/mm/sanitize/scrub_free as root would; issue 35; the cell
 * without the word is its twin).
 */
static int cmdline_has(const char *word)
{
	char text[4096];

	if (read_file("/proc/cmdline", text, sizeof(text)) < 0)
		return 0;
	text[strcspn(text, "\n")] = '\0';
	return has_word(text, word);
}

#define SCRUB_FREE	"/sys/kernel/mm/sanitize/scrub_free"

/* Write "1" to scrub_free; 0, or -1 with *why set. */
static int wipe_free_memory(char *why, size_t size)
{
	int fd = open(SCRUB_FREE, O_WRONLY);
	ssize_t n;

	if (fd < 0) {
		snprintf(why, size, "open %s: %s", SCRUB_FREE, strerror(errno));
		return -1;
	}
	n = write(fd, "1\n", 2);
	if (n != 2)
		snprintf(why, size, "write %s: %s", SCRUB_FREE,
			 n < 0 ? strerror(errno) : "short write");
	close(fd);
	if (n != 2)
		return -1;
	/* What it did, for the log: pages, objects, pages it had to leave. */
	{
		static const char *const f[] = { "pages", "objects", "skipped", "ns" };
		char path[96], v[32];
		size_t i, len;

		for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
			snprintf(path, sizeof(path), "%s_%s", SCRUB_FREE, f[i]);
			if (read_file(path, v, sizeof(v)) < 0)
				continue;
			v[strcspn(v, "\n")] = '\0';
			len = strlen(why);
			snprintf(why + len, size - len, "%s%s %s", len ? ", " : "", f[i], v);
		}
	}
	return 0;
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
	fprintf(stderr, "usage: lifetime [--real] [--list] [--only CHANNEL,...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *only = NULL, *console, *env;
	struct run runs[MAXCHANNELS];
	struct result *res;
	char reply[64], cons_note[300], keys[160], wipe_note[240] = "";
	struct timespec settle = { SETTLE_MS / 1000, (SETTLE_MS % 1000) * 1000000L };
	size_t i;
	int n, failed = 0, scan_ok, ntests = 0, t, pass, go[2], wipe, wipe_ok = 1;

	int list = 0;

	if (cmdline_has("lifetime.list=real")) {
		channels = real_channels;
		nchannels = NCHANNELS_REAL;
	}
	for (n = 1; n < argc; n++) {
		if (!strcmp(argv[n], "--list")) {
			list = 1;
		} else if (!strcmp(argv[n], "--real")) {
			channels = real_channels;
			nchannels = NCHANNELS_REAL;
		} else if (!strcmp(argv[n], "--only") && n + 1 < argc) {
			only = argv[++n];
		} else {
			usage();
		}
	}
	if (list) {
		for (i = 0; i < nchannels; i++)
			printf("%s\n", channels[i].name);
		return 0;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
#if defined(__x86_64__)
	__builtin_cpu_init();	/* for clear_vector_regs() */
#endif
	env = getenv("LIFETIME_TIMEOUT");
	if (env && atoi(env) > 0)
		timeout_s = atoi(env);

	memset(runs, 0, sizeof(runs));
	for (i = 0; i < nchannels; i++) {
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
			for (i = 0; i < nchannels && strcmp(channels[i].name, tok); i++)
				;
			if (i == nchannels) {
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

	res = mmap(NULL, nchannels * sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED) {
		printf("KTAP version 1\n1..1\nnot ok 1 setup # mmap: %s\n", strerror(errno));
		return 1;
	}
	memset(res, 0, nchannels * sizeof(*res));

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
		for (i = 0; i < nchannels; i++) {
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
	for (i = 0; i < nchannels; i++) {
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
	for (i = 0; i < nchannels; i++) {
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
	/* The wipe the cell asked for: in the kernel, no fork, no allocation here. */
	wipe = cmdline_has("lifetime.wipe=1");
	if (wipe)
		wipe_ok = !wipe_free_memory(wipe_note, sizeof(wipe_note));

	/*
	 * Keys the host cannot derive from the seed (wifi-wpa2's temporal
	 * key, from the handshake's nonces) go with the request, as hex:
	 * "HARNESS: SCAN <seed> <channel>=<hex>...".  Hex on the console is
	 * not the key's bytes the host looks for.
	 */
	keys[0] = '\0';
	for (i = 0; i < nchannels; i++)
		if (res[i].scan_key_channel[0] && res[i].scan_key_hex[0] &&
		    strlen(keys) + strlen(res[i].scan_key_channel) + 66 < sizeof(keys))
			snprintf(keys + strlen(keys), sizeof(keys) - strlen(keys), " %s=%s",
				 res[i].scan_key_channel, res[i].scan_key_hex);
	if (cmdline_has("lifetime.scan=poweroff")) {
		/* The host scans after QEMU exits, and says so in lifetime.json. */
		if (marker("HARNESS: SCAN-AT-POWEROFF %s%s", seed_hex, keys))
			snprintf(reply, sizeof(reply), "(cannot write the marker: %s)",
				 strerror(errno));
		else
			snprintf(reply, sizeof(reply), "scanned");
	} else if (marker("HARNESS: SCAN %s%s", seed_hex, keys)) {
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

	for (i = 0; i < nchannels; i++) {
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
	if (wipe)
		printf("# lifetime: free memory wiped before the scan (%s): %s%s\n",
		       SCRUB_FREE, wipe_ok ? "" : "failed: ", wipe_note);
	if (cmdline_has("lifetime.scan=poweroff"))
		printf("# lifetime: the host scans guest RAM after the power-off\n");
	for (i = 0, t = 0; i < nchannels; i++) {
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
	if (scan_ok && !wipe_ok) {
		printf("not ok %d scan # the wipe before it failed: %s\n", t + 1, wipe_note);
		failed = 1;
	} else if (scan_ok) {
		printf("ok %d scan\n", t + 1);
	} else {
		printf("not ok %d scan # the host answered '%s'\n", t + 1, reply);
		failed = 1;
	}
	return failed;
}

