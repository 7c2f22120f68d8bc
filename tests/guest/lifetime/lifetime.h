/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lifetime.h - what the files of the guest program lifetime share: a
 * channel and its result, the program's state, the child side of the
 * hold/release protocol (child.c), the I/O helpers (io.c), and one
 * declaration per channel function (ch-*.c), made from the generated
 * channel list (channels.h, from tests/scan/channels).
 *
 *   main.c        the parent: the channel table, starting each channel,
 *                 the release, the scan request, the KTAP report
 *   child.c       what runs in a channel's child: results (fail, skip,
 *                 note), scrubbing, decoy pages, hold/release, helpers
 *   io.c          whole reads and writes, lines with a timeout, the
 *                 console markers, small files
 *   ch-process.c  controls and a process's own memory: alive, heap,
 *                 stack, kstack
 *   ch-ipc.c      pipe, unix, msgq
 *   ch-fs.c       tmpfs, xattr
 *   ch-mm.c       memcg, thp, hugetlb
 *   ch-tty.c      tty, pty; pty-ssh, tty-raw (pinentry-curses)
 *   ch-crypto.c   AF_ALG; afalg-kcapi (kcapi-enc)
 *   ch-block.c    dm-crypt (cryptsetup)
 *   ch-net.c      tcp, tcp-alive (the send path's page_frag)
 *   ch-wifi.c     mac80211 keys on a mac80211_hwsim access point
 *   exec.c        running a Debian program: timeout, held at its exit
 *
 * The channels driven by Debian programs are those of channels-real.h
 * (tests/scan/channels-real), run instead of the others with
 * lifetime.list=real on the kernel command line.
 */
#ifndef LIFETIME_H
#define LIFETIME_H

#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "channels.h"	/* generated from tests/scan/channels */
#include "channels-real.h"	/* from tests/scan/channels-real */
#include "secrets.h"

#define PAGE		4096
#define COPIES		8	/* copies placed by the page-sized channels */
#define OFFSET		100	/* where a secret sits in its page */
#define TEXT_LEN	240

/* Public input of the crypto and wifi channels: 64 bytes, nothing secret. */
#define PUBLIC_TEXT	"public plaintext, four AES blocks, nothing secret in it at all.."

/* What a child tells the parent, in memory shared across fork. */
struct result {
	int ready;		/* set up: holding, or resident and asleep */
	int ok;
	char reason[TEXT_LEN];	/* why not ok */
	char note[TEXT_LEN];	/* what was done, for a KTAP diagnostic */
	char skipped[TEXT_LEN];	/* if set, why the kernel cannot run it */
	/* a key the host cannot derive, counted as that channel (wifi-wpa2) */
	char scan_key_channel[64];
	char scan_key_hex[65];
};

#define RESIDENT	1	/* its child must be alive during the scan */
#define FIRST		2	/* runs before the others, holds nothing */

struct channel {
	const char *name;
	/*
	 * Runs in a child of its own.  Moves the channel's data, calls
	 * hold() (which returns at the release), releases, and returns 0
	 * if the channel did what it should (and then the child exits), or
	 * fail()'s -1, before or after holding, or skip()s before deriving
	 * its secret (the kernel lacks what it needs).  A resident channel calls
	 * resident() instead of holding and returning; a FIRST channel
	 * returns without holding.  NULL: nothing runs in the guest (the
	 * "unused" control).
	 */
	int (*run)(const struct channel *ch, struct result *r);
};

/* The channel functions, ch_<id> for each channel of channels.h. */
#define CHANNEL_DECL(id, name) int ch_##id(const struct channel *ch, struct result *r);
CHANNEL_LIST(CHANNEL_DECL)
CHANNEL_LIST_REAL(CHANNEL_DECL)
#undef CHANNEL_DECL

/* main.c: the channel's RESIDENT and FIRST flags. */
int flags_of(const struct channel *ch);

/* The program's state (main.c). */
extern uint64_t seed;
extern char seed_hex[SECRET_SEED_HEX + 1];
extern int cons_in, cons_out;	/* the console device */
extern int timeout_s;
extern int go_fd;		/* read end of the go pipe: EOF = release */
extern int helper_fd;		/* in a helper: "set up" to its channel */

/*
 * child.c
 *
 * Some channels need what only a distribution kernel has (SysV IPC, tmpfs
 * xattrs, the memory controller, THP; the lab kernel is allnoconfig-based):
 * such a channel asks the kernel first, with no secret derived yet, and
 * skip()s if it says no.  Where the secret goes into a slab object it sits
 * in the object's first half: SLUB keeps a free object's free pointer in
 * its middle (s->offset = object_size / 2), which would overwrite a copy
 * there and let a kernel that clears nothing look clean.
 */
int fail(struct result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define fail_errno(r, what) fail(r, "%s: %s", what, strerror(errno))
int skip(struct result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void note(struct result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void touch(const void *p);
void scrub(void *p, size_t n);
void clear_vector_regs(void);
void decoy_make(void);
void child_exit(int status) __attribute__((noreturn));
void resident(struct result *r) __attribute__((noreturn));
void hold(struct result *r);
pid_t fork_helper(int *sync, struct result *r);
void helper_hold(void);
void pipe_reader(int fd, const struct channel *ch, struct result *r) __attribute__((noreturn));
void read_copies_exit(const struct channel *ch, int fd, int hold, struct result *r)
	__attribute__((noreturn));
int wait_helper(int sync, pid_t pid, struct result *r, const char *who);
int stop_helper(pid_t pid);
int wait_child(pid_t pid, struct result *r, const char *who);

/* io.c */
int write_full(int fd, const void *buf, size_t n);
ssize_t read_full(int fd, void *buf, size_t n);
char *page_align(char *p);
int read_line(int fd, char *buf, size_t size, int timeout);
int marker(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int write_file(const char *path, const char *text);
ssize_t read_file(const char *path, char *buf, size_t size);
int has_word(const char *text, const char *word);
const char *tmp_dir(void);

/* exec.c: a real Debian program, held at its exit (channels-real). */
#define PROG_TIMEOUT	20	/* seconds a program may take, under TCG */
struct prog {
	pid_t pid;		/* traced, 0 once reaped */
	const char *name;
	int status;		/* its exit status, at the exit stop */
	int last_signal;	/* the last signal it stopped for */
	int err;		/* its stderr, when not given (for messages) */
};
int prog_start(struct prog *p, const char *path, const char *package, char *const argv[],
	       int in, int out, int err, struct result *r);
int prog_wait_exit(struct prog *p, int timeout, struct result *r);
int prog_release(struct prog *p);
void prog_kill(struct prog *p);
int prog_signal(struct prog *p, int sig);

#endif
