// SPDX-License-Identifier: GPL-2.0
/*
 * lifetime - block: dm-crypt, opened by cryptsetup (channels-real).
 */
#include "lifetime.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * The kernel options dm-crypt needs: in the kernels of make check
 * (Kconfig-fragments/real-programs.config), not in the arm64 or debug ones.
 */
#define DM_CRYPT_NEEDS	"CONFIG_BLK_DEV=y CONFIG_BLK_DEV_LOOP=y CONFIG_MD=y " \
			"CONFIG_BLK_DEV_DM=y CONFIG_DM_CRYPT=y CONFIG_CRYPTO_XTS=y"

/* Is name a block or character driver of /proc/devices? */
static int has_device(const char *name)
{
	char text[4096], want[64];

	if (read_file("/proc/devices", text, sizeof(text)) < 0)
		return 0;
	snprintf(want, sizeof(want), " %s\n", name);
	return strstr(text, want) != NULL;
}

/*
 * The dm-crypt channels need the loop driver, device mapper and dm-crypt:
 * without them, record the skip and return 1 (as wpa2_skip() does for
 * the wifi channels).  Asked before any secret is derived.
 */
static int dm_crypt_skip(struct result *r)
{
	if (has_device("loop") && has_device("device-mapper") &&
	    !access("/sys/module/dm_crypt", F_OK))
		return 0;
	skip(r, "kernel has no BLK_DEV_LOOP or DM_CRYPT (needs " DM_CRYPT_NEEDS ")");
	return 1;
}

#define DM_IMAGE_SIZE	(1 << 20)	/* the loop device's file on tmpfs */
#define DM_SECTORS	8		/* 4 KiB of the public text through the mapping */

/*
 * Run cryptsetup with argv, the key (if any) on its stdin, held at its
 * exit in p.  0, or -1 fail()'d.
 */
static int cryptsetup_run(struct prog *p, char *const argv[], const char *key, size_t keylen,
			  struct result *r)
{
	int in[2], null, ret;

	if (pipe(in))
		return fail_errno(r, "pipe");
	if (key && write_full(in[1], key, keylen)) {
		close(in[0]);
		close(in[1]);
		return fail_errno(r, "write the key to cryptsetup's stdin");
	}
	close(in[1]);
	null = open("/dev/null", O_WRONLY);
	ret = prog_start(p, "/usr/sbin/cryptsetup", "cryptsetup-bin", argv, in[0], null, -1, r);
	close(in[0]);
	if (null >= 0)
		close(null);
	if (ret)
		return ret;
	return prog_wait_exit(p, PROG_TIMEOUT, r);
}

/*
 * Write the public text through the mapping and read the image under it:
 * what reached the loop device must be ciphertext, or dm-crypt did not run.
 */
static int dm_crypt_io(const char *mapping, const char *image, struct result *r)
{
	static const char text[] = PUBLIC_TEXT;
	char path[64], buf[512 * DM_SECTORS];
	size_t i;
	int fd;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = text[i % (sizeof(text) - 1)];
	snprintf(path, sizeof(path), "/dev/mapper/%s", mapping);
	fd = open(path, O_RDWR | O_SYNC);
	if (fd < 0)
		return fail_errno(r, path);
	if (write_full(fd, buf, sizeof(buf)) || fsync(fd) ||
	    pread(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf)) {
		close(fd);
		return fail_errno(r, "write and read the mapping");
	}
	close(fd);
	if (memcmp(buf, text, sizeof(text) - 1))
		return fail(r, "the mapping did not read back what was written");
	fd = open(image, O_RDONLY);
	if (fd < 0 || pread(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf)) {
		if (fd >= 0)
			close(fd);
		return fail_errno(r, image);
	}
	close(fd);
	if (!memcmp(buf, text, sizeof(text) - 1))
		return fail(r, "the loop device's image holds the plaintext: no encryption");
	return 0;
}

/*
 * cryptsetup open NAME on IMAGE: a plain aes-xts-plain64 mapping whose key
 * is the SECRET_LEN bytes of KEYFILE ("-": key, on its stdin), taken as
 * they are (--hash plain: plain mode hashes a passphrase, with ripemd160 by
 * default, and the kernel would hold the hash, not the secret).  Held at
 * its exit in p.
 */
static int dm_open(struct prog *p, const char *name, const char *image, const char *keyfile,
		   const char *key, struct result *r)
{
	char keybits[8], keybytes[8];
	char *argv[] = { "cryptsetup", "open", "--batch-mode", "--disable-locks",
			 "--type", "plain", "--cipher", "aes-xts-plain64", "--hash", "plain",
			 "--key-size", keybits, "--key-file", (char *)keyfile,
			 "--keyfile-size", keybytes, (char *)image, (char *)name, NULL };

	snprintf(keybits, sizeof(keybits), "%d", SECRET_LEN * 8);
	snprintf(keybytes, sizeof(keybytes), "%d", SECRET_LEN);
	setenv("DM_DISABLE_UDEV", "1", 1);
	return cryptsetup_run(p, argv, key, key ? SECRET_LEN : 0, r);
}

/* A file of DM_IMAGE_SIZE bytes at path, under the loop device. */
static int dm_image(const char *path, struct result *r)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || ftruncate(fd, DM_IMAGE_SIZE)) {
		if (fd >= 0)
			close(fd);
		return fail_errno(r, path);
	}
	close(fd);
	return 0;
}

/*
 * dm-crypt: cryptsetup (package cryptsetup-bin) opens a plain
 * aes-xts-plain64 mapping on a loop device it attaches to a file on tmpfs,
 * keyed with the secret (32 characters: XTS's two AES-128 keys, head and
 * tail, used as they are: dm_open()); the guest writes 4 KiB through the mapping and checks that the
 * file under it holds ciphertext; cryptsetup closes the mapping (the loop
 * device goes with it, autoclear).  COPIES rounds, the key given the two
 * ways a system gives it: on cryptsetup's stdin (a passphrase prompt, a
 * keyscript) in even rounds, in a key file on tmpfs (systemd's
 * /run/cryptsetup-keys.d/NAME.key) in odd ones, removed after the close.
 * Each cryptsetup process is held at its exit until the release.  No udev
 * here: libdevmapper makes its own nodes (DM_DISABLE_UDEV), and cryptsetup
 * takes no lock (--disable-locks).
 */
int ch_dm_crypt(const struct channel *ch, struct result *r)
{
	struct prog open_p[COPIES], close_p[COPIES];
	char key[SECRET_LEN], name[32], image[128], keyfile[128];
	char *close_argv[] = { "cryptsetup", "close", "--disable-locks", name, NULL };
	const char *dir = tmp_dir();
	int i, fd, ret = -1;

	if (dm_crypt_skip(r))
		return 0;
	snprintf(image, sizeof(image), "%s/dm-crypt.img", dir);
	if (dm_image(image, r))
		return -1;
	memset(open_p, 0, sizeof(open_p));
	memset(close_p, 0, sizeof(close_p));
	for (i = 0; i < COPIES; i++) {
		snprintf(name, sizeof(name), "lifetime-dm%d", i);
		secret_derive_n(seed, ch->name, key, SECRET_LEN);
		if (i % 2) {
			snprintf(keyfile, sizeof(keyfile), "%s/%s.key", dir, name);
			fd = open(keyfile, O_WRONLY | O_CREAT | O_TRUNC, 0400);
			ret = fd < 0 || write_full(fd, key, sizeof(key)) ? fail_errno(r, keyfile) : 0;
			if (fd >= 0)
				close(fd);
			scrub(key, sizeof(key));
			if (!ret)
				ret = dm_open(&open_p[i], name, image, keyfile, NULL, r);
		} else {
			ret = dm_open(&open_p[i], name, image, "-", key, r);
			scrub(key, sizeof(key));
		}
		if (ret || (ret = dm_crypt_io(name, image, r)) ||
		    (ret = cryptsetup_run(&close_p[i], close_argv, NULL, 0, r)))
			goto out;
	}
	note(r, "%d rounds of cryptsetup open (plain, aes-xts-plain64; the key on stdin "
	     "or in a key file), 4 KiB through the mapping, close", COPIES);
	hold(r);
	ret = 0;
out:
	for (i = 0; i < COPIES; i++) {
		if (!ret) {
			prog_release(&open_p[i]);
			prog_release(&close_p[i]);
		}
		prog_kill(&open_p[i]);
		prog_kill(&close_p[i]);
		snprintf(keyfile, sizeof(keyfile), "%s/lifetime-dm%d.key", dir, i);
		unlink(keyfile);
	}
	unlink(image);
	return ret;
}

/*
 * dm-crypt-schedule: the AES key schedules of dm-crypt's two XTS keys, as
 * the kernel expanded them when the mappings were set up.  Nothing runs
 * here: the host derives them from dm-crypt's secret (ramscan aes=).
 */
int ch_dm_crypt_schedule(const struct channel *ch, struct result *r)
{
	(void)ch;
	if (dm_crypt_skip(r))
		return 0;
	note(r, "the key schedules of dm-crypt's mappings, counted by the host");
	return 0;
}

/*
 * dm-crypt-alive: the control of the key schedule scan.  One mapping as
 * dm-crypt's even rounds make it (the key on cryptsetup's stdin), 4 KiB
 * through it, left open through the scan: the kernel holds the key and
 * its schedules in the mapping's crypt_config and tfm, whatever the policy.
 * cryptsetup is held at its exit until the release, like dm-crypt's.
 */
int ch_dm_crypt_alive(const struct channel *ch, struct result *r)
{
	static const char name[] = "lifetime-dm-alive";
	struct prog open_p;
	char key[SECRET_LEN], image[128];
	int ret;

	if (dm_crypt_skip(r))
		return 0;
	snprintf(image, sizeof(image), "%s/dm-crypt-alive.img", tmp_dir());
	if (dm_image(image, r))
		return -1;
	memset(&open_p, 0, sizeof(open_p));
	secret_derive_n(seed, ch->name, key, SECRET_LEN);
	ret = dm_open(&open_p, name, image, "-", key, r);
	scrub(key, sizeof(key));
	if (!ret)
		ret = dm_crypt_io(name, image, r);
	if (!ret) {
		note(r, "mapping %s (plain, aes-xts-plain64) left open through the scan", name);
		hold(r);
		prog_release(&open_p);
	}
	prog_kill(&open_p);
	return ret;
}

/* dm-crypt-alive-schedule: the schedules of that open mapping's keys. */
int ch_dm_crypt_alive_schedule(const struct channel *ch, struct result *r)
{
	return ch_dm_crypt_schedule(ch, r);
}

/*
 * page-cache: the secret in the page cache of a block device, dropped at
 * the release the way sanitize_mem's admin guide tells a user to drop it
 * before a wipe (echo 1 > /proc/sys/vm/drop_caches).  The device is a
 * dm-crypt mapping keyed with the public text, on a loop device over a
 * file on tmpfs: the file under it holds ciphertext (checked), so the
 * only plaintext the kernel holds is the mapping's page cache.  COPIES
 * pages, the secret in each, written through it and synced; the child
 * keeps the mapping open until the drop, as a mounted file system keeps
 * its device open, so that the drop frees those pages (a last close would
 * free them too, blkdev_flush_mapping()).  The drop comes at the release
 * and nothing is allocated here after it: the page allocator hands out
 * the pages freed last first, and a cryptsetup run would take them.  The
 * mapping, which holds no secret, stays until the guest powers off.
 */
int ch_page_cache(const struct channel *ch, struct result *r)
{
	static const char name[] = "lifetime-page-cache";
	char image[128], path[64], key[SECRET_LEN], *p, *buf;
	struct prog open_p;
	int fd = -1, img, i, plain = 0, ret;

	if (dm_crypt_skip(r))
		return 0;
	snprintf(image, sizeof(image), "%s/page-cache.img", tmp_dir());
	if (dm_image(image, r))
		return -1;
	p = malloc(2 * PAGE);
	if (!p)
		return fail_errno(r, "malloc");
	buf = page_align(p);
	memset(&open_p, 0, sizeof(open_p));
	/* The mapping's key is public: the secret is the data, not the key. */
	memcpy(key, PUBLIC_TEXT, sizeof(key));
	ret = dm_open(&open_p, name, image, "-", key, r);
	if (ret)
		goto out;
	snprintf(path, sizeof(path), "/dev/mapper/%s", name);
	fd = open(path, O_RDWR);
	if (fd < 0) {
		ret = fail_errno(r, path);
		goto out;
	}
	memset(buf, 0, PAGE);
	for (i = 0; i < COPIES; i++) {
		secret_derive(seed, ch->name, buf + OFFSET);
		ret = pwrite(fd, buf, PAGE, (off_t)i * PAGE) != PAGE;
		scrub(buf, PAGE);
		if (ret) {
			ret = fail_errno(r, "write the mapping");
			goto out;
		}
	}
	if (fsync(fd)) {
		ret = fail_errno(r, "fsync the mapping");
		goto out;
	}
	img = open(image, O_RDONLY);
	if (img < 0) {
		ret = fail_errno(r, image);
		goto out;
	}
	for (i = 0; i < COPIES; i++) {
		if (pread(img, buf, PAGE, (off_t)i * PAGE) != PAGE)
			break;
		plain += secret_equal_n(seed, ch->name, buf + OFFSET, SECRET_LEN);
	}
	scrub(buf, PAGE);
	close(img);
	if (i != COPIES || plain) {
		ret = fail(r, "the loop device's image: %d of %d pages read, %d hold the secret",
			   i, COPIES, plain);
		goto out;
	}
	note(r, "%d pages through a dm-crypt mapping (public key, ciphertext under it), "
	     "synced, held open; dropped with drop_caches=1 at the release", COPIES);
	hold(r);
	if (write_file("/proc/sys/vm/drop_caches", "1"))
		ret = fail_errno(r, "echo 1 > /proc/sys/vm/drop_caches");
out:
	if (fd >= 0)
		close(fd);
	if (!ret)
		prog_release(&open_p);
	prog_kill(&open_p);
	free(p);
	unlink(image);
	return ret;
}
