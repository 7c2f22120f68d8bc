// SPDX-License-Identifier: GPL-2.0
/*
 * lifetime - channels whose kernel buffer is freed by its consumer: a pipe,
 * a unix socket, SysV messages (msgq; the distro kernels only).
 */
#include "lifetime.h"

#include <stdlib.h>
#include <unistd.h>
#include <sys/msg.h>
#include <sys/socket.h>
#include <sys/wait.h>

/*
 * The reader frees a pipe's pages as it reads them: it reads at the
 * release.  Until then the 8 pages sit in the pipe (16 pages deep).
 */
int ch_pipe(const struct channel *ch, struct result *r)
{
	int fds[2], i, sync;
	char *p, *buf;
	pid_t pid;

	if (pipe(fds))
		return fail_errno(r, "pipe");
	pid = fork_helper(&sync, r);	/* before any secret exists in this process */
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fds[1]);
		pipe_reader(fds[0], ch, r);
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

/* The reader frees the skbs as it reads them: it reads at the release. */
int ch_unix(const struct channel *ch, struct result *r)
{
	char msg[SECRET_LEN];
	int sv[2], i, sync;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return fail_errno(r, "socketpair");
	pid = fork_helper(&sync, r);
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(sv[0]);
		read_copies_exit(ch, sv[1], 1, r);
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
int ch_msgq(const struct channel *ch, struct result *r)
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
