// SPDX-License-Identifier: GPL-2.0
/*
 * lifetime - tty: the serial console (the host types the secret) and pty pairs.
 */
#include "lifetime.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>

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
int ch_pty(const struct channel *ch, struct result *r)
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
