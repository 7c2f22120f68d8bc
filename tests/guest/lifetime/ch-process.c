// SPDX-License-Identifier: GPL-2.0
/*
 * lifetime - the controls (alive) and a process's own memory: its heap,
 * its stack, and the kernel stack of a system call (kstack).
 */
#include "lifetime.h"

#include <stdlib.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

/* Controls. */
int ch_alive(const struct channel *ch, struct result *r)
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
int ch_heap(const struct channel *ch, struct result *r)
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

int ch_stack(const struct channel *ch, struct result *r)
{
	int n;

	note(r, "%d copies in %d nested %d-byte stack frames", COPIES, COPIES, PAGE);
	n = stack_frame(ch->name, COPIES, r);
	return n == COPIES ? 0 : fail(r, "only %d frames", n);
}


int ch_kstack(const struct channel *ch, struct result *r)
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
