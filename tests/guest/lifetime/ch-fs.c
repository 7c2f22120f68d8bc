// SPDX-License-Identifier: GPL-2.0
/*
 * lifetime - tmpfs: a file's pages (tmpfs) and user.* xattrs (xattr; the
 * distro kernels only).
 */
#include "lifetime.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/xattr.h>

int ch_tmpfs(const struct channel *ch, struct result *r)
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


/*
 * A value of 256 bytes: a simple_xattr of 32 + 256 bytes, kvmalloc()ed
 * with __GFP_ACCOUNT (kmalloc-cg-512); the secret at 0, object bytes
 * 32..64.  removexattr() frees it at once (simple_xattr_free()).
 */
#define XATTR_VALUE	256

int ch_xattr(const struct channel *ch, struct result *r)
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
