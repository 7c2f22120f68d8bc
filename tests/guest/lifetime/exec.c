// SPDX-License-Identifier: GPL-2.0
/*
 * lifetime - running a real Debian program (channels-real): each with a
 * timeout, a missing one named with its package, and held at its exit.
 *
 * A program's memory must not be freed before the release (main.c: a
 * page freed early is taken again by the next channel's fork and exec,
 * and the scan would measure reuse).  So the program runs traced
 * (PTRACE_O_TRACEEXIT): when it exits it stops in do_exit() before its
 * memory is released, and stays stopped until prog_release() lets it go,
 * at the release.  PTRACE_O_EXITKILL: if the channel dies, so does it.
 */
#include "lifetime.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int prog_start(struct prog *p, const char *path, const char *package, char *const argv[],
	       int in, int out, int err, struct result *r)
{
	int status, errp[2] = { -1, -1 };

	p->pid = 0;
	p->name = path;
	p->status = -1;
	p->err = -1;
	if (access(path, X_OK))
		return fail(r, "%s is not in the initramfs: install the Debian package %s "
			    "(make deps) and rebuild it (make initramfs)", path, package);
	/* Its stderr, for the message if it fails (err < 0). */
	if (err < 0 && !pipe2(errp, O_NONBLOCK))
		err = errp[1];
	p->pid = fork();
	if (p->pid < 0)
		return fail_errno(r, "fork");
	if (p->pid == 0) {
		if ((in >= 0 && dup2(in, 0) < 0) || (out >= 0 && dup2(out, 1) < 0) ||
		    (err >= 0 && dup2(err, 2) < 0))
			_exit(126);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGTTOU, SIG_DFL);
		signal(SIGTTIN, SIG_DFL);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(126);
		execv(path, argv);
		_exit(127);
	}
	if (errp[1] >= 0)
		close(errp[1]);
	p->err = errp[0];
	/* Stopped at the exec (SIGTRAP), or already gone. */
	if (waitpid(p->pid, &status, 0) != p->pid)
		return fail_errno(r, "waitpid");
	if (!WIFSTOPPED(status)) {
		p->pid = 0;
		return fail(r, "%s did not start (status 0x%x)", path, status);
	}
	if (ptrace(PTRACE_SETOPTIONS, p->pid, NULL,
		   (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL)) ||
	    ptrace(PTRACE_CONT, p->pid, NULL, NULL)) {
		fail_errno(r, "ptrace");
		prog_kill(p);
		return -1;
	}
	return 0;
}

/*
 * ": <a line of its stderr>" (the first that says "rror", else the first),
 * or "".
 */
static const char *prog_stderr(struct prog *p)
{
	static char text[TEXT_LEN / 2];
	char all[4096], *line;
	ssize_t n;

	text[0] = '\0';
	if (p->err < 0)
		return text;
	n = read(p->err, all, sizeof(all) - 1);
	if (n <= 0)
		return text;
	all[n] = '\0';
	line = strstr(all, "rror");
	if (line) {
		while (line > all && line[-1] != '\n')
			line--;
	} else {
		line = all;
	}
	line[strcspn(line, "\n")] = '\0';
	snprintf(text, sizeof(text), ": %.100s", line);
	return text;
}

/*
 * Wait up to timeout seconds for the program to exit: it stops at its
 * exit, held.  Signals it gets on the way are passed on.  0 if it exited
 * with status 0 (held), -1 (fail()'d, the program killed) otherwise.
 */
int prog_wait_exit(struct prog *p, int timeout, struct result *r)
{
	time_t end = time(NULL) + timeout;
	int status;

	if (p->pid <= 0)
		return fail(r, "%s is not running", p->name);
	for (;;) {
		pid_t w = waitpid(p->pid, &status, WNOHANG | __WALL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return fail_errno(r, "waitpid");
		if (w == 0 || time(NULL) >= end) {
			if (time(NULL) >= end) {
				char path[64], sys[64] = "", wchan[64] = "";

				/* Where it waits, for the message. */
				snprintf(path, sizeof(path), "/proc/%d/syscall", (int)p->pid);
				read_file(path, sys, sizeof(sys));
				sys[strcspn(sys, " \n")] = '\0';
				snprintf(path, sizeof(path), "/proc/%d/wchan", (int)p->pid);
				read_file(path, wchan, sizeof(wchan));
				prog_kill(p);
				return fail(r, "%s did not exit within %d s (in system call %s, %s, last signal %d): killed",
					    p->name, timeout, sys[0] ? sys : "?", wchan[0] ? wchan : "?",
					    p->last_signal);
			}
			sleep_ms(20);
			continue;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			p->pid = 0;
			return fail(r, "%s ended without its exit stop (status 0x%x)", p->name,
				    status);
		}
		if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
			unsigned long msg = 0;

			ptrace(PTRACE_GETEVENTMSG, p->pid, NULL, &msg);
			p->status = (int)msg;
			if (WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0)
				return 0;
			if (WIFSIGNALED(p->status))
				return fail(r, "%s was killed by signal %d", p->name,
					    WTERMSIG(p->status));
			return fail(r, "%s exited with status %d%s", p->name,
				    WEXITSTATUS(p->status), prog_stderr(p));
		}
		/* A signal on its way to the program: deliver it. */
		p->last_signal = WSTOPSIG(status);
		ptrace(PTRACE_CONT, p->pid, NULL,
		       (void *)(long)(WSTOPSIG(status) == SIGTRAP ? 0 : WSTOPSIG(status)));
	}
}

/* Let a program held at its exit finish exiting (its memory is freed). */
int prog_release(struct prog *p)
{
	int status;

	if (p->pid <= 0)
		return 0;
	ptrace(PTRACE_CONT, p->pid, NULL, NULL);
	while (waitpid(p->pid, &status, __WALL) < 0 && errno == EINTR)
		;
	p->pid = 0;
	if (p->err >= 0)
		close(p->err);
	p->err = -1;
	return 0;
}

void prog_kill(struct prog *p)
{
	if (p->pid <= 0)
		return;
	kill(p->pid, SIGKILL);
	/* A tracee stopped at its exit is not woken by SIGKILL: let it go on. */
	ptrace(PTRACE_CONT, p->pid, NULL, NULL);
	while (waitpid(p->pid, NULL, __WALL) < 0 && errno == EINTR)
		;
	p->pid = 0;
	if (p->err >= 0)
		close(p->err);
	p->err = -1;
}

/* Send a signal to a running (traced) program. */
int prog_signal(struct prog *p, int sig)
{
	return p->pid > 0 ? kill(p->pid, sig) : -1;
}
