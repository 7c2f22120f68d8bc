/* SPDX-License-Identifier: GPL-2.0 */
/*
 * secrets.h - the secrets of the attacker's-view test (issue 5), derived
 * from a run's seed and a channel's name.  Shared, byte for byte, by the
 * guest program (tests/guest/lifetime/) and the host scanner
 * (tests/scan/ramscan.c), so a secret never has to be stored anywhere: the
 * guest derives it where a channel needs it, the host derives it to count
 * it.
 *
 *   state  = seed ^ FNV-1a-64(channel name)
 *   char i = alphabet[(splitmix64(&state) >> 32) % 62]   for i = 0..31
 *   alphabet = A-Z a-z 0-9   (printable, so the tty channel can type it)
 *
 * A secret is SECRET_LEN (32) characters, not NUL-terminated.  Its "head"
 * is the first SECRET_HALF (16) characters (the AES-128 key of the crypto
 * key channels), its "tail" the last 16.
 *
 * Only <stdint.h> and <string.h>; everything is static inline.
 */
#ifndef SANITIZE_SECRETS_H
#define SANITIZE_SECRETS_H

#include <stdint.h>
#include <string.h>

#define SECRET_LEN	32
#define SECRET_HALF	16
#define SECRET_SEED_HEX	16	/* a seed is printed as 16 lowercase hex digits */

static inline uint64_t secret_fnv1a64(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static inline uint64_t secret_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * A stream of a secret's characters, so a consumer can produce or check
 * the secret one character at a time without holding a second copy.
 */
struct secret_stream {
	uint64_t state;
	unsigned int pos;
};

static inline void secret_stream_init(struct secret_stream *st, uint64_t seed,
				      const char *channel)
{
	st->state = seed ^ secret_fnv1a64(channel);
	st->pos = 0;
}

/* The next character of the secret (call at most SECRET_LEN times). */
static inline char secret_stream_next(struct secret_stream *st)
{
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

	st->pos++;
	return alphabet[(secret_splitmix64(&st->state) >> 32) % 62];
}

/* Write the first n (<= SECRET_LEN) characters of the secret to out. */
static inline void secret_derive_n(uint64_t seed, const char *channel,
				   char *out, unsigned int n)
{
	struct secret_stream st;
	unsigned int i;

	secret_stream_init(&st, seed, channel);
	for (i = 0; i < n && i < SECRET_LEN; i++)
		out[i] = secret_stream_next(&st);
	st.state = 0;
}

/* The whole secret, SECRET_LEN characters, no terminating NUL. */
static inline void secret_derive(uint64_t seed, const char *channel,
				 char out[SECRET_LEN])
{
	secret_derive_n(seed, channel, out, SECRET_LEN);
}

/*
 * Compare buf[0..n) with the first n characters of the secret without
 * materialising the secret.  Returns 1 if equal, 0 if not.
 */
static inline int secret_equal_n(uint64_t seed, const char *channel,
				 const char *buf, unsigned int n)
{
	struct secret_stream st;
	unsigned int i, diff = 0;

	secret_stream_init(&st, seed, channel);
	for (i = 0; i < n && i < SECRET_LEN; i++)
		diff |= (unsigned char)(buf[i] ^ secret_stream_next(&st));
	st.state = 0;
	return diff == 0 && n <= SECRET_LEN;
}

/*
 * Parse a seed: 1..16 hex digits, optional "0x".  Returns 0 and sets *seed,
 * or -1 if s is not a seed.
 */
static inline int secret_parse_seed(const char *s, uint64_t *seed)
{
	uint64_t v = 0;
	unsigned int n = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; *s; s++, n++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return -1;
		if (n >= SECRET_SEED_HEX)
			return -1;
		v = (v << 4) | (uint64_t)d;
	}
	if (n == 0)
		return -1;
	*seed = v;
	return 0;
}

/* Format a seed as SECRET_SEED_HEX lowercase hex digits plus a NUL. */
static inline void secret_format_seed(uint64_t seed, char out[SECRET_SEED_HEX + 1])
{
	static const char hex[] = "0123456789abcdef";
	int i;

	for (i = SECRET_SEED_HEX - 1; i >= 0; i--) {
		out[i] = hex[seed & 0xf];
		seed >>= 4;
	}
	out[SECRET_SEED_HEX] = '\0';
}

#endif /* SANITIZE_SECRETS_H */
