// SPDX-License-Identifier: GPL-2.0
/*
 * lifetime - I/O: whole reads and writes, a line with a timeout, the
 * markers to the host on the console device, small files.
 */
#include "lifetime.h"

#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int write_full(int fd, const void *buf, size_t n)
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

ssize_t read_full(int fd, void *buf, size_t n)
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
char *page_align(char *p)
{
	return (char *)(((uintptr_t)p + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
}

/*
 * Read one line (up to '\n' or '\r', not included) from fd within
 * timeout_s seconds.  Returns its length, -1 on error or timeout (errno
 * ETIMEDOUT), and always NUL-terminates buf.
 */
int read_line(int fd, char *buf, size_t size, int timeout)
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

int marker(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int marker(const char *fmt, ...)
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

/* Write a short string to a cgroup file; 0 or -1 (errno). */
int write_file(const char *path, const char *text)
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
ssize_t read_file(const char *path, char *buf, size_t size)
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
int has_word(const char *text, const char *word)
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

/* The tmpfs directory of the channels that make files (LIFETIME_TMP). */
const char *tmp_dir(void)
{
	return getenv("LIFETIME_TMP") ? getenv("LIFETIME_TMP") : "/tmp";
}
