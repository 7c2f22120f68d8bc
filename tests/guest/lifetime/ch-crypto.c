// SPDX-License-Identifier: GPL-2.0
/*
 * lifetime - crypto: keys and plaintexts through AF_ALG sockets.
 */
#include "lifetime.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/if_alg.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#ifndef SOL_ALG
#define SOL_ALG 279
#endif

static const unsigned char public_key[16] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
};
/* 16 bytes of AEAD associated data, then 64 bytes of public plaintext. */
static const char public_aad[] = "associated-data.";
static const char public_text[] = PUBLIC_TEXT;

#define AUTHSIZE	16
#define GCM_IV		12

static int alg_open(const char *type, const char *alg, const void *key,
		    size_t keylen, struct result *r)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG };
	int t = socket(AF_ALG, SOCK_SEQPACKET, 0);

	if (t < 0)
		return fail_errno(r, "socket(AF_ALG)");
	strncpy((char *)sa.salg_type, type, sizeof(sa.salg_type) - 1);
	strncpy((char *)sa.salg_name, alg, sizeof(sa.salg_name) - 1);
	if (bind(t, (struct sockaddr *)&sa, sizeof(sa))) {
		fail(r, "bind AF_ALG %s %s: %s", type, alg, strerror(errno));
		close(t);
		return -1;
	}
	if (keylen && setsockopt(t, SOL_ALG, ALG_SET_KEY, key, (socklen_t)keylen)) {
		fail_errno(r, "ALG_SET_KEY");
		close(t);
		return -1;
	}
	if (!strcmp(type, "aead") &&
	    setsockopt(t, SOL_ALG, ALG_SET_AEAD_AUTHSIZE, NULL, AUTHSIZE)) {
		fail_errno(r, "ALG_SET_AEAD_AUTHSIZE");
		close(t);
		return -1;
	}
	return t;
}

/*
 * A fresh request socket, sent in[0..inlen) with the IV (zeroes, or ivlen
 * bytes at ivdata) and, for AEAD, the associated data length: the kernel
 * copies the input into TX pages of its own, freed when the operation runs
 * (alg_recv()) or the socket is closed.  Returns the request socket, or -1.
 */
static int alg_send_iv(int tfm, int decrypt, size_t ivlen, const void *ivdata,
		       size_t assoclen, const void *in, size_t inlen, struct result *r)
{
	char cbuf[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct af_alg_iv) + 16) +
		  CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = (void *)in, .iov_len = inlen };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	struct af_alg_iv *iv;
	ssize_t n;
	int op;

	memset(cbuf, 0, sizeof(cbuf));
	msg.msg_controllen = CMSG_SPACE(sizeof(int)) +
			     CMSG_SPACE(sizeof(struct af_alg_iv) + ivlen) +
			     (assoclen ? CMSG_SPACE(sizeof(int)) : 0);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_OP;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	*(int *)CMSG_DATA(c) = decrypt ? ALG_OP_DECRYPT : ALG_OP_ENCRYPT;
	c = CMSG_NXTHDR(&msg, c);
	if (!c)
		return fail(r, "internal error: no room for the IV cmsg");
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_IV;
	c->cmsg_len = CMSG_LEN(sizeof(struct af_alg_iv) + ivlen);
	iv = (struct af_alg_iv *)CMSG_DATA(c);
	iv->ivlen = (unsigned int)ivlen;
	if (ivdata)
		memcpy(iv->iv, ivdata, ivlen);
	else
		memset(iv->iv, 0, ivlen);
	if (assoclen) {
		c = CMSG_NXTHDR(&msg, c);
		if (!c)
			return fail(r, "internal error: no room for the assoclen cmsg");
		c->cmsg_level = SOL_ALG;
		c->cmsg_type = ALG_SET_AEAD_ASSOCLEN;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		*(int *)CMSG_DATA(c) = (int)assoclen;
	}

	op = accept(tfm, NULL, 0);
	if (op < 0)
		return fail_errno(r, "accept on the AF_ALG socket");
	n = sendmsg(op, &msg, 0);
	if (n != (ssize_t)inlen) {
		fail(r, "sendmsg to AF_ALG: %zd of %zu bytes: %s", n, inlen, strerror(errno));
		close(op);
		return -1;
	}
	return op;
}

static int alg_send(int tfm, int decrypt, size_t ivlen, size_t assoclen,
		    const void *in, size_t inlen, struct result *r)
{
	return alg_send_iv(tfm, decrypt, ivlen, NULL, assoclen, in, inlen, r);
}

/* Run the operation sent to request socket op, read up to outlen bytes, close op. */
static ssize_t alg_recv(int op, void *out, size_t outlen, struct result *r)
{
	ssize_t n = read(op, out, outlen);

	if (n < 0)
		fail(r, "AF_ALG operation: %s", strerror(errno));
	close(op);
	return n;
}

/* One operation on a fresh request socket.  Returns the bytes read, or -1. */
static ssize_t alg_op(int tfm, int decrypt, size_t ivlen, size_t assoclen,
		      const void *in, size_t inlen, void *out, size_t outlen,
		      struct result *r)
{
	int op = alg_send(tfm, decrypt, ivlen, assoclen, in, inlen, r);

	return op < 0 ? -1 : alg_recv(op, out, outlen, r);
}

/* The derived secret's first 16 characters are the AES-128 key. */
static int afalg_key(const struct channel *ch, struct result *r, const char *type,
		     const char *alg)
{
	int aead = !strcmp(type, "aead");
	size_t ivlen = aead ? GCM_IV : 16, assoclen = aead ? 16 : 0;
	size_t textlen = sizeof(public_text) - 1;
	size_t inlen = assoclen + textlen, ctlen = inlen + (aead ? AUTHSIZE : 0);
	char key[SECRET_HALF], in[256], ct[256], back[256];
	ssize_t n;
	int tfm;

	secret_derive_n(seed, ch->name, key, SECRET_HALF);
	tfm = alg_open(type, alg, key, sizeof(key), r);
	scrub(key, sizeof(key));
	if (tfm < 0)
		return -1;
	memcpy(in, public_aad, assoclen);
	memcpy(in + assoclen, public_text, textlen);
	n = alg_op(tfm, 0, ivlen, assoclen, in, inlen, ct, ctlen, r);
	if (n < 0)
		goto out;
	if ((size_t)n != ctlen) {
		fail(r, "encryption gave %zd bytes, expected %zu", n, ctlen);
		goto out;
	}
	if (!memcmp(ct + assoclen, public_text, textlen)) {
		fail(r, "the ciphertext is the plaintext");
		goto out;
	}
	n = alg_op(tfm, 1, ivlen, assoclen, ct, ctlen, back, inlen, r);
	if (n < 0)
		goto out;
	if ((size_t)n != inlen || memcmp(back + assoclen, public_text, textlen)) {
		fail(r, "decryption did not give the plaintext back (%zd bytes)", n);
		goto out;
	}
	note(r, "%s %s, key set, %zu bytes encrypted to %zu and decrypted back",
	     type, alg, textlen, ctlen);
	hold(r);
	close(tfm);
	return 0;
out:
	close(tfm);
	return -1;
}

/*
 * The derived secret (32 bytes) is the plaintext, encrypted COPIES times,
 * each on a request socket of its own.  An encryption frees its TX page
 * when it runs, so the plaintexts are sent (one TX page each) before the
 * hold and encrypted at the release.
 */
static int afalg_plain(const struct channel *ch, struct result *r, const char *type,
		       const char *alg)
{
	int aead = !strcmp(type, "aead");
	size_t ivlen = aead ? GCM_IV : 16, assoclen = aead ? 16 : 0;
	size_t inlen = assoclen + SECRET_LEN, ctlen = inlen + (aead ? AUTHSIZE : 0);
	char in[64], ct[128];
	ssize_t n = 0;
	int tfm, i, sent, same = 0, ops[COPIES];

	tfm = alg_open(type, alg, public_key, sizeof(public_key), r);
	if (tfm < 0)
		return -1;
	memcpy(in, public_aad, assoclen);
	secret_derive(seed, ch->name, in + assoclen);
	for (sent = 0; sent < COPIES; sent++) {
		ops[sent] = alg_send(tfm, 0, ivlen, assoclen, in, inlen, r);
		if (ops[sent] < 0)
			break;
	}
	scrub(in, sizeof(in));
	if (sent < COPIES) {
		while (sent--)
			close(ops[sent]);
		close(tfm);
		return -1;
	}
	memset(ct, 0, sizeof(ct));
	note(r, "%s %s, %d encryptions of %d bytes to %zu, at the release", type, alg,
	     COPIES, SECRET_LEN, ctlen);
	hold(r);
	for (i = 0; i < COPIES; i++) {
		n = alg_recv(ops[i], ct, ctlen, r);
		if (n != (ssize_t)ctlen)
			break;
		same += secret_equal_n(seed, ch->name, ct + assoclen, SECRET_LEN);
	}
	scrub(ct, sizeof(ct));
	while (++i < COPIES)
		close(ops[i]);
	close(tfm);
	if (n != (ssize_t)ctlen)
		return n < 0 ? -1 : fail(r, "encryption gave %zd bytes, expected %zu", n, ctlen);
	if (same)
		return fail(r, "the ciphertext is the plaintext");
	return 0;
}

/*
 * afalg-hash-plain: the secret (32 bytes, less than a SHA-256 block) sent
 * with MSG_MORE to each of COPIES sha256 request sockets: a hash that has
 * not been finished keeps its input in the partial block of the hash
 * state, in algif_hash's socket context, until the socket closes.  6.12
 * frees that context with sock_kfree_s(), without a clear; the crypto patch
 * marks it.  The sockets are closed at the release, unfinished (a program
 * that stops hashing a passphrase, or is killed while it does).
 */
int ch_afalg_hash_plain(const struct channel *ch, struct result *r)
{
	char in[SECRET_LEN];
	int tfm, i, sent, ops[COPIES];
	ssize_t n = 0;

	tfm = alg_open("hash", "sha256", NULL, 0, r);
	if (tfm < 0)
		return -1;
	secret_derive(seed, ch->name, in);
	for (sent = 0; sent < COPIES; sent++) {
		ops[sent] = accept(tfm, NULL, 0);
		if (ops[sent] < 0) {
			fail_errno(r, "accept on the AF_ALG socket");
			break;
		}
		n = send(ops[sent], in, sizeof(in), MSG_MORE);
		if (n != (ssize_t)sizeof(in)) {
			fail(r, "send to AF_ALG sha256: %zd of %zu bytes: %s", n, sizeof(in),
			     strerror(errno));
			close(ops[sent]);
			break;
		}
	}
	scrub(in, sizeof(in));
	if (sent == COPIES) {
		note(r, "sha256, %d request sockets each sent %d bytes with MSG_MORE, closed unfinished at the release",
		     COPIES, SECRET_LEN);
		hold(r);
	}
	for (i = 0; i < sent; i++)
		close(ops[i]);
	close(tfm);
	return sent == COPIES ? 0 : -1;
}

int ch_afalg_skcipher_key(const struct channel *ch, struct result *r)
{
	return afalg_key(ch, r, "skcipher", "cbc(aes)");
}

int ch_afalg_skcipher_plain(const struct channel *ch, struct result *r)
{
	return afalg_plain(ch, r, "skcipher", "cbc(aes)");
}

int ch_afalg_aead_key(const struct channel *ch, struct result *r)
{
	return afalg_key(ch, r, "aead", "gcm(aes)");
}

int ch_afalg_aead_plain(const struct channel *ch, struct result *r)
{
	return afalg_plain(ch, r, "aead", "gcm(aes)");
}

/*
 * afalg-walk-bounce: the head of the secret is the plaintext of a
 * one-block cbc(aes) decryption whose output straddles a page boundary (8
 * bytes before it, 8 after).  The skcipher walk cannot map that block in
 * one piece: it decrypts it in a bounce buffer of its own
 * (skcipher_next_slow()), which 6.12 kfree()s with the plaintext in it;
 * the crypto patch marks it.  The secret never enters the kernel as such,
 * so nothing else can leave it: the ciphertext is public (zeroes), X =
 * D(0) is asked of the kernel first, and each decryption's IV is X ^ head,
 * so that the block decrypts to head; this process never holds head in
 * one piece.  The output in user memory is split by the page boundary and
 * scrubbed once checked.  The decryptions run at the release, BOUNCES
 * request sockets: each frees a 32-byte object that the next kmalloc() of
 * that size may take again before the scan (of 8, one was left on the lab
 * kernel's vanilla cell).
 */
#define BOUNCES	32

int ch_afalg_walk_bounce(const struct channel *ch, struct result *r)
{
	unsigned char zero[16] = { 0 }, x[16], iv[16];
	struct secret_stream st;
	long page = sysconf(_SC_PAGESIZE);
	int tfm, i, sent, ops[BOUNCES], ok = 0;
	unsigned char *map;
	ssize_t n;

	tfm = alg_open("skcipher", "cbc(aes)", public_key, sizeof(public_key), r);
	if (tfm < 0)
		return -1;
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		close(tfm);
		return fail_errno(r, "mmap");
	}
	n = alg_op(tfm, 1, 16, 0, zero, sizeof(zero), x, sizeof(x), r);
	if (n != (ssize_t)sizeof(x)) {
		munmap(map, 2 * page);
		close(tfm);
		return n < 0 ? -1 : fail(r, "decryption of a block gave %zd bytes", n);
	}
	/* No copy of head in this process: a character at a time. */
	secret_stream_init(&st, seed, ch->name);
	for (i = 0; i < 16; i++)
		iv[i] = x[i] ^ (unsigned char)secret_stream_next(&st);
	st.state = 0;
	for (sent = 0; sent < BOUNCES; sent++) {
		ops[sent] = alg_send_iv(tfm, 1, 16, iv, 0, zero, sizeof(zero), r);
		if (ops[sent] < 0)
			break;
	}
	scrub(iv, sizeof(iv));
	if (sent < BOUNCES) {
		while (sent--)
			close(ops[sent]);
		munmap(map, 2 * page);
		close(tfm);
		return -1;
	}
	note(r, "%d one-block cbc(aes) decryptions to head, the output straddling a page boundary, at the release",
	     BOUNCES);
	hold(r);
	for (i = 0; i < BOUNCES; i++) {
		n = alg_recv(ops[i], map + page - 8, 16, r);
		if (n != 16)
			break;
		ok += secret_equal_n(seed, ch->name, (const char *)map + page - 8, SECRET_HALF);
		scrub(map + page - 8, 16);
	}
	while (++i < BOUNCES)
		close(ops[i]);
	munmap(map, 2 * page);
	close(tfm);
	if (n != 16)
		return n < 0 ? -1 : fail(r, "decryption gave %zd bytes, expected 16", n);
	if (ok != BOUNCES)
		return fail(r, "%d of %d decryptions gave the head back", ok, BOUNCES);
	return 0;
}

/*
 * afalg-kcapi (channels-real): kcapi-enc (package kcapi-tools) encrypts
 * the public text with cbc(aes) through AF_ALG, the key (head = AES-128)
 * given on --keyfd, COPIES times, each a process of its own held at its
 * exit until the release.  The fd is a pipe in even runs and a key file on
 * tmpfs in odd ones (removed at the release), the two ways a script hands
 * kcapi-enc a key: with pipes alone, what reuses the freed pipe pages
 * before the scan left vanilla as few as 1 copy, a fragile control.
 */
int ch_afalg_kcapi(const struct channel *ch, struct result *r)
{
	static const char text[] = PUBLIC_TEXT;
	struct prog p[COPIES];
	char key[SECRET_HALF], ct[256], fdnum[16], keyfile[128];
	char *argv[] = { "kcapi-enc", "-q", "-e", "-c", "cbc(aes)", "--iv",
			 "00000000000000000000000000000000", "--keyfd", fdnum, NULL };
	int i, ret = -1, null;
	ssize_t n = 0;

	/*
	 * libkcapi asks the kernel for the algorithm's sizes over
	 * NETLINK_CRYPTO before it opens AF_ALG: without CRYPTO_USER
	 * kcapi-enc fails ("cannot open netlink socket").  Asked first, with
	 * no secret derived yet.
	 */
	i = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_CRYPTO);
	if (i < 0 && (errno == EPROTONOSUPPORT || errno == EAFNOSUPPORT))
		return skip(r, "kernel has no CRYPTO_USER: libkcapi needs NETLINK_CRYPTO "
			    "(needs CONFIG_CRYPTO_USER=y)");
	if (i < 0)
		return fail_errno(r, "socket(NETLINK_CRYPTO)");
	close(i);
	null = open("/dev/null", O_RDWR);
	memset(p, 0, sizeof(p));
	for (i = 0; i < COPIES; i++) {
		int kp[2], in[2], out[2];

		if (pipe(kp) || pipe(in) || pipe(out)) {
			fail_errno(r, "pipe");
			goto out;
		}
		secret_derive_n(seed, ch->name, key, SECRET_HALF);
		if (i % 2) {	/* a key file: kp[0] reads it, kp[1] wrote it */
			snprintf(keyfile, sizeof(keyfile), "%s/afalg-kcapi%d.key", tmp_dir(), i);
			close(kp[0]);
			close(kp[1]);
			kp[1] = open(keyfile, O_WRONLY | O_CREAT | O_TRUNC, 0400);
			kp[0] = open(keyfile, O_RDONLY);
		}
		n = kp[0] < 0 || kp[1] < 0 ? -1 : write(kp[1], key, sizeof(key));
		scrub(key, sizeof(key));
		close(kp[1]);
		if (n != (ssize_t)sizeof(key) || write_full(in[1], text, sizeof(text) - 1)) {
			fail_errno(r, "write to kcapi-enc's pipes");
			goto out;
		}
		close(in[1]);
		snprintf(fdnum, sizeof(fdnum), "%d", kp[0]);
		if (prog_start(&p[i], "/usr/bin/kcapi-enc", "kcapi-tools", argv, in[0], out[1], -1, r))
			goto out;
		close(kp[0]);
		close(in[0]);
		close(out[1]);
		/*
		 * Held at its exit, it has not closed its end of the pipe yet:
		 * what it wrote is there, read without waiting for an EOF.
		 */
		if (prog_wait_exit(&p[i], PROG_TIMEOUT, r)) {
			close(out[0]);
			goto out;
		}
		fcntl(out[0], F_SETFL, O_NONBLOCK);
		n = read(out[0], ct, sizeof(ct));
		close(out[0]);
		if (n < (ssize_t)sizeof(text) - 1) {
			fail(r, "kcapi-enc wrote %zd bytes for %zu", n, sizeof(text) - 1);
			goto out;
		}
		if (!memcmp(ct, text, sizeof(text) - 1)) {
			fail(r, "the ciphertext is the plaintext");
			goto out;
		}
	}
	note(r, "%d runs of kcapi-enc cbc(aes), key on --keyfd (a pipe or a key file), %zd bytes out each",
	     COPIES, n);
	hold(r);
	ret = 0;
out:
	for (i = 0; i < COPIES; i++) {
		if (!ret)
			prog_release(&p[i]);
		prog_kill(&p[i]);
		snprintf(keyfile, sizeof(keyfile), "%s/afalg-kcapi%d.key", tmp_dir(), i);
		unlink(keyfile);
	}
	if (null >= 0)
		close(null);
	return ret;
}
