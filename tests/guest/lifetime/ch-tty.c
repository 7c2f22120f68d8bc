// SPDX-License-Identifier: GPL-2.0
/*
 * lifetime - tty: the serial console (the host types the secret) and pty pairs.
 */
#include "lifetime.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/audit.h>
#include <linux/netlink.h>

#define LINES		4	/* pty lines */

/* tty: the host types the secret at the console, echo off. */
int ch_tty(const struct channel *ch, struct result *r)
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

static void drain(int fd);

/*
 * Open a pty pair, the slave canonical with echo off, or echoing (a shell
 * prompt), or raw with echo off (a password read byte by byte).  0, or -1
 * (fail()'d); *m and *s are the pair, -1 if not open.
 */
static int pty_open(int *m, int *s, int raw, int echo, struct result *r)
{
	struct termios t;
	const char *name;

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
	if (echo)	/* a shell prompt: canonical, echoed */
		t.c_lflag |= ECHO | ECHOE | ECHOK;
	if (raw) {	/* as a password prompt in raw mode: byte by byte, no echo */
		t.c_lflag &= ~(tcflag_t)(ICANON | ISIG | IEXTEN);
		t.c_iflag &= ~(tcflag_t)(ICRNL | IXON);
		t.c_cc[VMIN] = 1;
		t.c_cc[VTIME] = 0;
	}
	if (tcsetattr(*s, TCSANOW, &t))
		return fail_errno(r, "tcsetattr on the slave");
	return 0;
}

/* Close the pairs pty_open() opened (-1: not open). */
static void pty_close(int *m, int *s, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (s[i] >= 0)
			close(s[i]);
		if (m[i] >= 0)
			close(m[i]);
	}
}

/*
 * One pty pair: the secret written LINES times as a line to the master,
 * read back on the slave (echo off, or on: then the echo is read on the
 * master).  Returns how many lines came back right, -1 (fail()'d) on
 * error; *m and *s are the pair, -1 if not open.
 */
static int pty_pair(const struct channel *ch, int *m, int *s, int raw, int echo,
		    struct result *r)
{
	char line[SECRET_LEN + 1], back[128];
	int i, good = 0;

	if (pty_open(m, s, raw, echo, r))
		return -1;
	secret_derive(seed, ch->name, line);
	line[SECRET_LEN] = raw ? '\r' : '\n';
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
	if (echo)	/* the terminal reads what was echoed, as a screen does */
		drain(*m);
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
static int pty_pairs(const struct channel *ch, int raw, int echo, int open_at_scan,
		     struct result *r)
{
	int m[COPIES], s[COPIES], i, good = 0, ret = 0;

	for (i = 0; i < COPIES; i++)
		m[i] = s[i] = -1;
	for (i = 0; i < COPIES && !ret; i++) {
		int n = pty_pair(ch, &m[i], &s[i], raw, echo, r);

		if (n < 0)
			ret = -1;
		else
			good += n;
	}
	if (!ret && good != COPIES * LINES)
		ret = fail(r, "read %d of %d lines back on the slaves", good,
			   COPIES * LINES);
	if (!ret) {
		note(r, "%d lines through each of %d pty pairs, echo %s%s%s", LINES,
		     COPIES, echo ? "on" : "off", raw ? ", raw mode, read byte by byte" : "",
		     open_at_scan ? ", the pairs open through the scan" : "");
		if (open_at_scan)
			resident(r);
		hold(r);
	}
	pty_close(m, s, COPIES);
	return ret;
}

int ch_pty(const struct channel *ch, struct result *r)
{
	return pty_pairs(ch, 0, 0, 0, r);
}

/*
 * pty-ssh (channels-real): the same through pty pairs whose slave is in
 * raw mode with echo off, read a byte at a time, as ssh, sudo with
 * pwfeedback and pinentry read a passphrase typed into a terminal.
 */
int ch_pty_ssh(const struct channel *ch, struct result *r)
{
	return pty_pairs(ch, 1, 0, 0, r);
}

/*
 * pty-ssh-open: the same, the pairs left open through the scan.  Closing
 * them frees n_tty's read buffer and the masters' write_buf, which the tty
 * patch marks, so pty-ssh's 0 proves the marks; with the pairs open only
 * the clears of what was read and written can make it 0: n_tty's
 * zero_buffer() in raw mode with echo off and the master's write_buf
 * cleared while its slave does not echo.
 */
int ch_pty_ssh_open(const struct channel *ch, struct result *r)
{
	return pty_pairs(ch, 1, 0, 1, r);
}

/*
 * tty-echo: the secret typed at a shell prompt that echoes it (canonical,
 * ECHO on), read on the slave, the echo read on the master; the pairs
 * closed.  Nothing marks echoed input as secret (it was shown on the
 * screen): what is left is in n_tty's read and echo buffers of both sides
 * and the master's write_buf, all freed when the pairs close.
 */
int ch_tty_echo(const struct channel *ch, struct result *r)
{
	return pty_pairs(ch, 0, 1, 0, r);
}

/*
 * pty-kill: at a password prompt (canonical mode, echo off) the secret is
 * typed, killed with ^U (VKILL) and a short word typed instead; the slave
 * reads the word.  n_tty's eraser() only moves its read head back, so the
 * killed characters stay in read_buf, where the word overwrites only the
 * first of them; they never reach a reader, so zero_buffer() never sees
 * them.  The pairs stay open through the scan (their read_buf is not
 * freed), as a login prompt's tty does.  The master's write_buf holds the
 * whole write too; the tty patch clears it while the slave does not echo.
 */
int ch_pty_kill(const struct channel *ch, struct result *r)
{
	static const char word[] = "\025short\n";	/* ^U, then a shorter line */
	char line[SECRET_LEN + sizeof(word) - 1], back[64];
	int m[COPIES], s[COPIES], i, ret = 0;

	for (i = 0; i < COPIES; i++)
		m[i] = s[i] = -1;
	for (i = 0; i < COPIES && !ret; i++) {
		if (pty_open(&m[i], &s[i], 0, 0, r)) {
			ret = -1;
			break;
		}
		secret_derive(seed, ch->name, line);
		memcpy(line + SECRET_LEN, word, sizeof(word) - 1);
		if (write_full(m[i], line, sizeof(line)))
			ret = fail_errno(r, "write to the master");
		scrub(line, sizeof(line));
		if (!ret && (read_line(s[i], back, sizeof(back), 10) != 5 ||
			     memcmp(back, "short", 5)))
			ret = fail(r, "the slave did not read the line typed after ^U");
	}
	if (!ret) {
		note(r, "%d pty pairs, echo off: the secret typed, killed with ^U, \"short\" typed and read; "
		     "open through the scan", COPIES);
		resident(r);
	}
	pty_close(m, s, COPIES);
	return ret;
}

/*
 * TTY auditing for this process and the children it forks from now on
 * (AUDIT_TTY_SET, as pam_tty_audit sets it at login), passwords included
 * (log_passwd): the kernel then keeps what they read from a tty in a
 * per-process buffer until they exit.  0, or -1 (fail()'d).
 */
static int audit_tty_enable(struct result *r)
{
	struct {
		struct nlmsghdr h;
		struct audit_tty_status s;
	} req;
	struct {
		struct nlmsghdr h;
		struct nlmsgerr e;
	} ack;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	ssize_t n;
	int fd;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	if (fd < 0)
		return fail_errno(r, "socket(NETLINK_AUDIT) (needs CONFIG_AUDIT)");
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = AUDIT_TTY_SET;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.h.nlmsg_seq = 1;
	req.s.enabled = 1;
	req.s.log_passwd = 1;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		fail_errno(r, "AUDIT_TTY_SET");
		close(fd);
		return -1;
	}
	n = recv(fd, &ack, sizeof(ack), 0);
	close(fd);
	if (n < (ssize_t)sizeof(ack) || ack.h.nlmsg_type != NLMSG_ERROR)
		return fail(r, "AUDIT_TTY_SET: no acknowledgement (%zd bytes)", n);
	if (ack.e.error)
		return fail(r, "AUDIT_TTY_SET: %s", strerror(-ack.e.error));
	return 0;
}

/*
 * tty-audit: with TTY auditing on (pam_tty_audit, passwords logged), a
 * reader reads the secret at a password prompt (canonical, echo off) of
 * a pty slave, one of COPIES readers, each a process of its own; they exit
 * at the release.  6.12 copies what a process reads into its
 * tty_audit_buf and, at the end of each line and at exit, logs it or,
 * with audit off (no auditd, as here), drops it: valid = 0, the bytes
 * left as they were, kfree()d at exit.  The password is the last line a
 * reader reads.  A public line written after it (never read) overwrites
 * the master's write_buf, and n_tty clears what it copies at an echo-off
 * prompt: on vanilla the audit buffers are what is left.
 */
int ch_tty_audit(const struct channel *ch, struct result *r)
{
	static const char public_line[] = PUBLIC_TEXT "\n";
	int m[COPIES], s[COPIES], sync, i, ret = 0, started = 0;
	char line[SECRET_LEN + 1];
	pid_t pid[COPIES];

	for (i = 0; i < COPIES; i++)
		m[i] = s[i] = -1;
	if (audit_tty_enable(r))
		return -1;
	for (i = 0; i < COPIES && !ret; i++) {
		if (pty_open(&m[i], &s[i], 0, 0, r)) {
			ret = -1;
			break;
		}
		pid[i] = fork_helper(&sync, r);
		if (pid[i] < 0) {
			ret = -1;
			break;
		}
		if (pid[i] == 0) {	/* the reader */
			char back[128];
			int good;

			good = read_line(s[i], back, sizeof(back), 10) == SECRET_LEN &&
			       secret_equal_n(seed, ch->name, back, SECRET_LEN);
			scrub(back, sizeof(back));
			if (!good) {
				fail(r, "reader %d did not read the secret", i);
				child_exit(1);
			}
			helper_hold();
			child_exit(0);	/* frees its tty_audit_buf */
		}
		started++;
		secret_derive(seed, ch->name, line);
		line[SECRET_LEN] = '\n';
		ret = write_full(m[i], line, sizeof(line));
		scrub(line, sizeof(line));
		if (ret) {
			ret = fail_errno(r, "write to the master");
			close(sync);
			break;
		}
		ret = wait_helper(sync, pid[i], r, "reader");
		if (!ret && write_full(m[i], public_line, sizeof(public_line) - 1))
			ret = fail_errno(r, "write to the master");
	}
	if (!ret) {
		note(r, "TTY auditing on (log_passwd), %d readers of a password line at pty slaves "
		     "(canonical, echo off), exit at the release", COPIES);
		hold(r);
	}
	for (i = 0; i < started; i++) {
		if (ret)
			kill(pid[i], SIGKILL);
		if (wait_child(pid[i], r, "reader") && !ret)
			ret = -1;
	}
	pty_close(m, s, COPIES);
	return ret;
}

/*
 * Everything the master has to read now, thrown away (pinentry's screen,
 * the echo of tty-echo): scrubbed, since the echo is the secret and what
 * is counted must be the kernel's copies, not this stack's.
 */
static void drain(int fd)
{
	char buf[512];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	while (poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN) && read(fd, buf, sizeof(buf)) > 0)
		;
	scrub(buf, sizeof(buf));
}

/* Read Assuan lines until one starting with want; 0 or -1 (fail()'d). */
static int assuan_expect(int fd, const char *want, char *line, size_t size, struct result *r)
{
	for (;;) {
		int n = read_line(fd, line, size, PROG_TIMEOUT);

		if (n < 0)
			return fail(r, "pinentry-curses: no '%s' within %d s: %s", want, PROG_TIMEOUT,
				    strerror(errno));
		if (!strncmp(line, want, strlen(want)))
			return 0;
		if (!strncmp(line, "ERR", 3))
			return fail(r, "pinentry-curses answered '%.100s'", line);
		/* "S ..." status lines and "#" comments: skipped */
	}
}

/* One pinentry-curses run of the tty-raw channel, held at its exit. */
struct pin_run {
	int m, s;		/* the pty pair, open until the release */
	struct prog p;
};

static int pinentry_once(const struct channel *ch, struct result *r, struct pin_run *pr)
{
	char *argv[] = { "pinentry-curses", "--ttyname", NULL, "--ttytype", "vt100", NULL };
	static const char getpin[] = "SETPROMPT Passphrase:\nGETPIN\n";
	struct winsize ws = { .ws_row = 24, .ws_col = 80 };
	int to[2] = { -1, -1 }, from[2] = { -1, -1 }, i, ret = -1, good, null = -1;
	char line[256], typed[SECRET_LEN + 1];
	struct termios t;
	const char *name;
	size_t len;

	pr->s = -1;
	pr->m = posix_openpt(O_RDWR | O_NOCTTY);
	if (pr->m < 0)
		return fail_errno(r, "posix_openpt");
	if (grantpt(pr->m) || unlockpt(pr->m) || !(name = ptsname(pr->m)))
		return fail_errno(r, "grantpt/unlockpt/ptsname");
	ioctl(pr->m, TIOCSWINSZ, &ws);
	/* Held open, so that the pair outlives pinentry's close. */
	pr->s = open(name, O_RDWR | O_NOCTTY);
	if (pr->s < 0)
		return fail_errno(r, name);
	argv[2] = (char *)name;
	null = open("/dev/null", O_RDWR);
	if (pipe(to) || pipe(from)) {
		fail_errno(r, "pipe");
		goto out;
	}
	setenv("TERM", "vt100", 1);
	if (prog_start(&pr->p, "/usr/bin/pinentry-curses", "pinentry-curses", argv, to[0],
		       from[1], null, r))
		goto out;
	close(to[0]);
	close(from[1]);
	to[0] = from[1] = -1;
	if (assuan_expect(from[0], "OK", line, sizeof(line), r))
		goto out;
	if (write_full(to[1], getpin, sizeof(getpin) - 1)) {
		fail_errno(r, "writing GETPIN");
		goto out;
	}
	/* pinentry answers SETPROMPT, then reads the terminal: wait for raw mode. */
	if (assuan_expect(from[0], "OK", line, sizeof(line), r))
		goto out;
	for (i = 0; i < PROG_TIMEOUT * 20; i++) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };

		drain(pr->m);
		if (!tcgetattr(pr->s, &t) && !(t.c_lflag & (ICANON | ECHO)))
			break;
		nanosleep(&ts, NULL);
	}
	if (i == PROG_TIMEOUT * 20) {
		fail(r, "pinentry-curses did not put %s in raw mode within %d s", name,
		     PROG_TIMEOUT);
		goto out;
	}
	for (i = 0; i < 10; i++) {	/* let it draw the dialog first */
		struct timespec ts = { 0, 50 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		drain(pr->m);
	}
	secret_derive(seed, ch->name, typed);
	typed[SECRET_LEN] = '\r';
	for (i = 0; i <= SECRET_LEN; i++)	/* a key at a time */
		if (write_full(pr->m, typed + i, 1)) {
			scrub(typed, sizeof(typed));
			fail_errno(r, "typing into the master");
			goto out;
		}
	scrub(typed, sizeof(typed));
	if (assuan_expect(from[0], "D ", line, sizeof(line), r))
		goto out;
	len = strlen(line);
	good = len == 2 + SECRET_LEN && secret_equal_n(seed, ch->name, line + 2, SECRET_LEN);
	scrub(line, sizeof(line));
	if (!good) {
		fail(r, "pinentry-curses returned %zu characters, not the passphrase typed",
		     len - 2);
		goto out;
	}
	if (assuan_expect(from[0], "OK", line, sizeof(line), r))
		goto out;
	if (write_full(to[1], "BYE\n", 4)) {
		fail_errno(r, "writing BYE");
		goto out;
	}
	if (prog_wait_exit(&pr->p, PROG_TIMEOUT, r))
		goto out;
	drain(pr->m);
	ret = 0;
out:
	if (ret)
		prog_kill(&pr->p);
	for (i = 0; i < 2; i++) {
		if (to[i] >= 0)
			close(to[i]);
		if (from[i] >= 0)
			close(from[i]);
	}
	if (null >= 0)
		close(null);
	return ret;
}

/*
 * tty-raw (channels-real): pinentry-curses (package pinentry-curses) asks
 * for a passphrase on a terminal, as gpg-agent has it do: Assuan GETPIN
 * over its stdin/stdout (pipes), the dialog on the slave of a pty pair
 * (--ttyname), read in raw mode with echo off.  Once the slave is in raw
 * mode the channel types the secret and Enter into the master, a key at
 * a time, as a user at a terminal would; pinentry answers
 * "D <passphrase>" on its stdout (read and checked here, as gpg-agent
 * would) and exits at BYE, held at its exit until the release.  COPIES
 * runs, each on a pty pair of its own (one copy per run is a fragile
 * control, as for pty).
 */
int ch_tty_raw(const struct channel *ch, struct result *r)
{
	struct pin_run runs[COPIES];
	int i, n, ret = 0;

	memset(runs, 0, sizeof(runs));
	for (i = 0; i < COPIES; i++)
		runs[i].m = runs[i].s = -1;
	for (n = 0; n < COPIES && !ret; n++)
		ret = pinentry_once(ch, r, &runs[n]);
	if (!ret) {
		note(r, "%d pinentry-curses GETPIN on pty slaves (raw mode, echo off), the passphrase typed into the masters, BYE",
		     COPIES);
		hold(r);
	}
	for (i = 0; i < COPIES; i++) {
		if (!ret)
			prog_release(&runs[i].p);
		prog_kill(&runs[i].p);
		if (runs[i].s >= 0)
			close(runs[i].s);
		if (runs[i].m >= 0)
			close(runs[i].m);
	}
	return ret;
}
