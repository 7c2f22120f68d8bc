// SPDX-License-Identifier: GPL-2.0
/*
 * ramscan - the attacker's view (issue 5): count the copies of every
 * channel's secret left in a guest's RAM, read from the host file that
 * backs it (QEMU memory-backend-file,share=on).
 *
 *   ramscan --seed HEX --channels FILE [--key NAME=HEX]... [--json OUT] [--quiet] RAMFILE
 *   ramscan derive CHANNEL SEED-HEX
 *   ramscan aes128 KEY-HEX
 *
 * For every channel named in FILE (tests/scan/channels: one channel per
 * line, "name [key=N] description...", '#' comments) the secret is derived
 * from (seed, name) with tests/guest/secrets.h, exactly as the guest
 * derived it, and three patterns are counted over the whole RAM file:
 *
 *   full  the 32-character secret
 *   head  its first 16 characters (the AES-128 key of the crypto
 *         channels), or its first N with "key=N" (a 13-byte WEP-104 key)
 *   tail  its last 16 characters
 *
 * A channel "name aes=OTHER" counts the AES-128 key schedules of channel
 * OTHER's secret, read as two 16-byte keys (the head and the tail: the
 * two keys of XTS, say), as the kernel's AES code keeps them
 * (crypto_aes_ctx's key_enc: the FIPS-197 expansion, round key 0 being
 * the key itself):
 *
 *   full  the 176 bytes of the head key's schedule
 *   head  its round keys 1 to 10 (160 bytes), which only an expansion of
 *         the key makes
 *   tail  the same of the tail key
 *
 * counted by a memmem() pass each (they are not text).  "ramscan aes128"
 * prints the schedule of a key, so it can be checked against FIPS-197.
 *
 * --key NAME=HEX (5 to 32 bytes): channel NAME's head is those bytes
 * instead, a key the host cannot derive from the seed (the temporal key of
 * a WPA2 handshake, which comes from its random nonces), given by the
 * guest with its scan request; counted by a memmem() pass, as it need
 * not be alphanumeric.
 *
 * Every occurrence at every byte offset counts, so head >= full and
 * tail >= full: a head or tail with no matching full copy is a fragment
 * (a ring buffer that wrapped, a half overwritten by a free-list pointer).
 *
 * The scan is one pass over an mmap of the file's data (holes, the RAM
 * the guest never touched, are skipped with SEEK_DATA), 8 bytes at a time.  Every
 * pattern is at least 16 characters of [A-Za-z0-9], so a match starting
 * in [b, b+8) covers the 8 bytes at b+8, which must then end with an
 * alphanumeric byte and be one of the patterns' 8-byte substrings at
 * offsets 1..8 (a 64 Kibit filter, in L1).  Only then are the 8 offsets
 * looked up, by their first 8 bytes, in a small hash of all patterns, and
 * a hit is confirmed with memcmp.  The few heads shorter than 16 ("key=N")
 * cannot use the filter and are counted by a memmem() pass each.
 *
 * Output: a table on stdout and, with --json, the file
 *   {"seed": "<16 hex>", "ram_bytes": N,
 *    "channels": {"<name>": {"full": n, "head": n, "tail": n}, ...}}
 * Exit status: 0 scanned, 2 usage or I/O error (missing file, bad seed,
 * bad channel list).  The scanner never prints a secret, except that
 * "derive" prints exactly the one asked for (the harness types it).
 *
 * Build: gcc -O2 -Wall -Wextra -Werror -Itests/guest -o ramscan ramscan.c
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "secrets.h"

#define MAX_NAME	64
#define AES128_SCHEDULE	176	/* 11 round keys of 16 bytes */

enum kind { FULL, HEAD, TAIL, NKINDS };
static const char *const kind_name[NKINDS] = { "full", "head", "tail" };

struct channel {
	char name[MAX_NAME + 1];
	char secret[SECRET_LEN];
	size_t head_len;	/* SECRET_HALF, or N of "key=N", or the --key's */
	unsigned char key[32];	/* --key NAME=HEX: head is these bytes */
	int has_key;
	int aes_of;		/* "aes=OTHER": OTHER's index, else -1 */
	unsigned char schedule[2][AES128_SCHEDULE];	/* of the head, the tail */
	uint64_t count[NKINDS];
};

struct pattern {
	const unsigned char *bytes;
	size_t len;
	uint64_t key;		/* first 8 bytes, as loaded from memory */
	uint64_t *count;	/* where a match is counted */
	int next;		/* next pattern in the same hash bucket, -1 */
};

static struct channel *channels;
static size_t nchannels;
static struct pattern *patterns;
static size_t npatterns;
static struct pattern *short_patterns[64];	/* heads under 16, by memmem() */
static size_t nshort;
static int *table;
static unsigned int table_bits;
static unsigned char alnum[256];

/* A bitmap of the hashes of every pattern's 8 bytes at offsets 1..8. */
#define FILTER_BITS	16
static uint64_t filter[(1u << FILTER_BITS) / 64];

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	fputs("ramscan: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: ramscan --seed HEX --channels FILE [--key NAME=HEX]... [--json OUT]\n"
		"               [--quiet] RAMFILE\n"
		"       ramscan derive CHANNEL SEED-HEX\n"
		"       ramscan aes128 KEY-HEX\n"
		"Counts each channel's 32-character secret (full) and its first and\n"
		"last 16 characters (head, tail; head is the first N with key=N in\n"
		"the channel list) in RAMFILE.  Exit 0 done, 2 error.\n");
	exit(2);
}

static int valid_name(const char *s)
{
	size_t n = 0;

	for (; *s; s++, n++)
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.')
			return 0;
	return n > 0 && n <= MAX_NAME;
}

static const unsigned char aes_sbox[256] = {
	0x63, 0x7c, 0x77, 0x7b, 0xf2, 0x6b, 0x6f, 0xc5, 0x30, 0x01, 0x67, 0x2b, 0xfe, 0xd7, 0xab, 0x76,
	0xca, 0x82, 0xc9, 0x7d, 0xfa, 0x59, 0x47, 0xf0, 0xad, 0xd4, 0xa2, 0xaf, 0x9c, 0xa4, 0x72, 0xc0,
	0xb7, 0xfd, 0x93, 0x26, 0x36, 0x3f, 0xf7, 0xcc, 0x34, 0xa5, 0xe5, 0xf1, 0x71, 0xd8, 0x31, 0x15,
	0x04, 0xc7, 0x23, 0xc3, 0x18, 0x96, 0x05, 0x9a, 0x07, 0x12, 0x80, 0xe2, 0xeb, 0x27, 0xb2, 0x75,
	0x09, 0x83, 0x2c, 0x1a, 0x1b, 0x6e, 0x5a, 0xa0, 0x52, 0x3b, 0xd6, 0xb3, 0x29, 0xe3, 0x2f, 0x84,
	0x53, 0xd1, 0x00, 0xed, 0x20, 0xfc, 0xb1, 0x5b, 0x6a, 0xcb, 0xbe, 0x39, 0x4a, 0x4c, 0x58, 0xcf,
	0xd0, 0xef, 0xaa, 0xfb, 0x43, 0x4d, 0x33, 0x85, 0x45, 0xf9, 0x02, 0x7f, 0x50, 0x3c, 0x9f, 0xa8,
	0x51, 0xa3, 0x40, 0x8f, 0x92, 0x9d, 0x38, 0xf5, 0xbc, 0xb6, 0xda, 0x21, 0x10, 0xff, 0xf3, 0xd2,
	0xcd, 0x0c, 0x13, 0xec, 0x5f, 0x97, 0x44, 0x17, 0xc4, 0xa7, 0x7e, 0x3d, 0x64, 0x5d, 0x19, 0x73,
	0x60, 0x81, 0x4f, 0xdc, 0x22, 0x2a, 0x90, 0x88, 0x46, 0xee, 0xb8, 0x14, 0xde, 0x5e, 0x0b, 0xdb,
	0xe0, 0x32, 0x3a, 0x0a, 0x49, 0x06, 0x24, 0x5c, 0xc2, 0xd3, 0xac, 0x62, 0x91, 0x95, 0xe4, 0x79,
	0xe7, 0xc8, 0x37, 0x6d, 0x8d, 0xd5, 0x4e, 0xa9, 0x6c, 0x56, 0xf4, 0xea, 0x65, 0x7a, 0xae, 0x08,
	0xba, 0x78, 0x25, 0x2e, 0x1c, 0xa6, 0xb4, 0xc6, 0xe8, 0xdd, 0x74, 0x1f, 0x4b, 0xbd, 0x8b, 0x8a,
	0x70, 0x3e, 0xb5, 0x66, 0x48, 0x03, 0xf6, 0x0e, 0x61, 0x35, 0x57, 0xb9, 0x86, 0xc1, 0x1d, 0x9e,
	0xe1, 0xf8, 0x98, 0x11, 0x69, 0xd9, 0x8e, 0x94, 0x9b, 0x1e, 0x87, 0xe9, 0xce, 0x55, 0x28, 0xdf,
	0x8c, 0xa1, 0x89, 0x0d, 0xbf, 0xe6, 0x42, 0x68, 0x41, 0x99, 0x2d, 0x0f, 0xb0, 0x54, 0xbb, 0x16,
};

/* The FIPS-197 key expansion of an AES-128 key, as bytes. */
static void aes128_schedule(const unsigned char key[16], unsigned char out[AES128_SCHEDULE])
{
	unsigned char rcon = 0x01;
	int i;

	memcpy(out, key, 16);
	for (i = 16; i < AES128_SCHEDULE; i += 4) {
		unsigned char t[4];

		memcpy(t, out + i - 4, 4);
		if (i % 16 == 0) {	/* RotWord, SubWord, Rcon */
			unsigned char t0 = t[0];

			t[0] = aes_sbox[t[1]] ^ rcon;
			t[1] = aes_sbox[t[2]];
			t[2] = aes_sbox[t[3]];
			t[3] = aes_sbox[t0];
			rcon = (unsigned char)((rcon << 1) ^ (rcon & 0x80 ? 0x1b : 0));
		}
		out[i] = out[i - 16] ^ t[0];
		out[i + 1] = out[i - 15] ^ t[1];
		out[i + 2] = out[i - 14] ^ t[2];
		out[i + 3] = out[i - 13] ^ t[3];
	}
}

static uint64_t parse_seed_or_die(const char *s)
{
	uint64_t seed;

	if (secret_parse_seed(s, &seed))
		die("bad seed '%s' (want 1 to 16 hex digits, e.g. 0123456789abcdef)", s);
	return seed;
}

static void read_channels(const char *path, uint64_t seed)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	size_t cap = 0, lineno = 0;

	if (!f)
		die("cannot open channel list %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *name;
		size_t i;

		lineno++;
		if (!strchr(line, '\n') && !feof(f))
			die("%s:%zu: line too long", path, lineno);
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0' || *p == '#')
			continue;
		name = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (*p)
			*p++ = '\0';
		if (!valid_name(name))
			die("%s:%zu: bad channel name '%s' (1 to %d of [A-Za-z0-9_.-])",
			    path, lineno, name, MAX_NAME);
		for (i = 0; i < nchannels; i++)
			if (!strcmp(channels[i].name, name))
				die("%s:%zu: channel '%s' listed twice", path, lineno, name);
		if (nchannels == cap) {
			cap = cap ? 2 * cap : 32;
			channels = realloc(channels, cap * sizeof(*channels));
			if (!channels)
				die("out of memory");
		}
		memset(&channels[nchannels], 0, sizeof(channels[nchannels]));
		strcpy(channels[nchannels].name, name);
		channels[nchannels].head_len = SECRET_HALF;
		channels[nchannels].aes_of = -1;
		while (isspace((unsigned char)*p))
			p++;
		if (!strncmp(p, "aes=", 4)) {
			char *of = p + 4;
			size_t len = strcspn(of, " \t\n");

			for (i = 0; i < nchannels; i++)
				if (strlen(channels[i].name) == len &&
				    !strncmp(channels[i].name, of, len))
					break;
			if (!len || i == nchannels || channels[i].aes_of >= 0)
				die("%s:%zu: %.*s: aes= names no earlier channel with a secret of its own",
				    path, lineno, (int)(len + 4), p);
			channels[nchannels].aes_of = (int)i;
			aes128_schedule((const unsigned char *)channels[i].secret,
					channels[nchannels].schedule[0]);
			aes128_schedule((const unsigned char *)channels[i].secret + SECRET_HALF,
					channels[nchannels].schedule[1]);
		} else if (!strncmp(p, "key=", 4)) {
			char *end;
			unsigned long n = strtoul(p + 4, &end, 10);

			if (end == p + 4 || !(isspace((unsigned char)*end) || !*end) ||
			    n < 5 || n > SECRET_HALF)
				die("%s:%zu: bad key length in '%.8s' (key=5 to key=%d)",
				    path, lineno, p, SECRET_HALF);
			channels[nchannels].head_len = n;
		}
		secret_derive(seed, name, channels[nchannels].secret);
		nchannels++;
	}
	if (ferror(f))
		die("cannot read channel list %s: %s", path, strerror(errno));
	fclose(f);
	if (nchannels == 0)
		die("no channels in %s", path);
}

/* --key NAME=HEX: that channel's head is the key's bytes. */
static void set_key(const char *arg)
{
	const char *eq = strchr(arg, '='), *h;
	unsigned char bytes[32];
	size_t n = 0, i, len;

	if (!eq || eq == arg)
		die("bad --key '%s' (want NAME=HEX)", arg);
	len = (size_t)(eq - arg);
	for (h = eq + 1; h[0] && h[1] && n < sizeof(bytes); h += 2) {
		unsigned int b;

		if (!isxdigit((unsigned char)h[0]) || !isxdigit((unsigned char)h[1]) ||
		    sscanf(h, "%2x", &b) != 1)
			die("bad --key for %.*s: not hex", (int)len, arg);
		bytes[n++] = (unsigned char)b;
	}
	if (*h || n < 5)
		die("bad --key for %.*s: 5 to 32 bytes of hex", (int)len, arg);
	for (i = 0; i < nchannels; i++) {
		if (strlen(channels[i].name) == len && !strncmp(channels[i].name, arg, len)) {
			if (channels[i].aes_of >= 0)
				die("--key for %.*s: it counts key schedules (aes=)", (int)len, arg);
			memcpy(channels[i].key, bytes, n);
			channels[i].head_len = n;
			channels[i].has_key = 1;
			return;
		}
	}
	die("--key for %.*s: no such channel in the list", (int)len, arg);
}

static uint64_t load64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static unsigned int filter_hash(uint64_t v)
{
	return (unsigned int)((v * 0xff51afd7ed558ccdULL) >> (64 - FILTER_BITS));
}

static int in_filter(uint64_t v)
{
	unsigned int h = filter_hash(v);

	return (filter[h / 64] >> (h % 64)) & 1;
}

static unsigned int bucket(uint64_t key)
{
	return (unsigned int)((key * 0x9e3779b97f4a7c15ULL) >> (64 - table_bits));
}

static void build_patterns(void)
{
	size_t i, k, size;

	for (i = 0; i < 256; i++)
		alnum[i] = isalnum((int)i) && i < 128;

	npatterns = nchannels * NKINDS;
	patterns = calloc(npatterns, sizeof(*patterns));
	for (table_bits = 6; (1u << table_bits) < 4 * npatterns; table_bits++)
		;
	size = (size_t)1 << table_bits;
	table = malloc(size * sizeof(*table));
	if (!patterns || !table)
		die("out of memory");
	for (i = 0; i < size; i++)
		table[i] = -1;

	for (i = 0; i < nchannels; i++) {
		for (k = 0; k < NKINDS; k++) {
			struct pattern *p = &patterns[i * NKINDS + k];
			unsigned int b, j;

			p->bytes = (const unsigned char *)channels[i].secret +
				   (k == TAIL ? SECRET_HALF : 0);
			p->len = k == FULL ? SECRET_LEN :
				 k == HEAD ? channels[i].head_len : SECRET_HALF;
			p->count = &channels[i].count[k];
			if (channels[i].aes_of >= 0) {
				p->bytes = channels[i].schedule[k == TAIL];
				p->len = k == FULL ? AES128_SCHEDULE : AES128_SCHEDULE - 16;
				if (k != FULL)
					p->bytes += 16;
				if (nshort == sizeof(short_patterns) / sizeof(short_patterns[0]))
					die("too many short, --key or aes= patterns");
				short_patterns[nshort++] = p;
				continue;
			}
			if (k == HEAD && channels[i].has_key) {
				p->bytes = channels[i].key;
				if (nshort == sizeof(short_patterns) / sizeof(short_patterns[0]))
					die("too many short or --key patterns");
				short_patterns[nshort++] = p;
				continue;
			}
			for (j = 0; j < p->len; j++)	/* the block filter relies on it */
				if (!alnum[p->bytes[j]])
					die("internal error: secret of %s is not alphanumeric",
					    channels[i].name);
			if (p->len < SECRET_HALF) {
				if (nshort == sizeof(short_patterns) / sizeof(short_patterns[0]))
					die("more than %zu channels with key=N", nshort);
				short_patterns[nshort++] = p;
				continue;
			}
			p->key = load64(p->bytes);
			for (j = 1; j <= 8; j++) {
				unsigned int h = filter_hash(load64(p->bytes + j));

				filter[h / 64] |= 1ULL << (h % 64);
			}
			b = bucket(p->key);
			p->next = table[b];
			table[b] = (int)(p - patterns);
		}
	}
}

/* Count every pattern that starts at offset s. */
static inline void match_at(const unsigned char *ram, size_t size, size_t s)
{
	uint64_t key = load64(ram + s);
	int i;

	for (i = table[bucket(key)]; i >= 0; i = patterns[i].next) {
		const struct pattern *p = &patterns[i];

		if (p->key == key && s + p->len <= size &&
		    !memcmp(ram + s + 8, p->bytes + 8, p->len - 8))
			(*p->count)++;
	}
}

static void scan(const unsigned char *ram, size_t size)
{
	size_t b, s, i;

	for (i = 0; i < nshort; i++) {
		const struct pattern *p = short_patterns[i];
		const unsigned char *at = ram, *end = ram + size;

		while ((at = memmem(at, end - at, p->bytes, p->len))) {
			(*p->count)++;
			at++;
		}
	}

	/*
	 * A match [s, s+16) with b <= s < b+8 covers the 8 bytes at b+8,
	 * which are then the 8 bytes at offset b+8-s (1..8) of a pattern:
	 * unless their last byte is alphanumeric and they are in the filter,
	 * nothing starts in [b, b+8).  Every start s <= size-16 is in one
	 * such block.
	 */
	for (b = 0; b + SECRET_HALF <= size; b += 8) {
		if (!alnum[ram[b + 15]] || !in_filter(load64(ram + b + 8)))
			continue;
		for (s = b; s < b + 8 && s + SECRET_HALF <= size; s++)
			match_at(ram, size, s);
	}
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

/*
 * Scan the parts of the file that are not holes: guest RAM the guest
 * never touched is a hole, reads as zeroes and cannot hold a pattern (no
 * text pattern contains a zero byte, and a key schedule is not a page of
 * them, so none spans a hole either), and mapping it would make the
 * kernel allocate zeroed page cache for all of it.
 * Returns the number of bytes scanned.
 */
static size_t scan_data(int fd, const unsigned char *ram, size_t size)
{
	off_t pos = 0, data, hole;
	size_t scanned = 0;

	while ((size_t)pos < size) {
		data = lseek(fd, pos, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break;			/* only a hole from pos on */
		if (data < 0) {			/* no SEEK_DATA here: everything */
			data = pos;
			hole = (off_t)size;
		} else {
			hole = lseek(fd, data, SEEK_HOLE);
			if (hole < 0 || (size_t)hole > size)
				hole = (off_t)size;
		}
		if (hole <= data)
			break;
		/* Fault the range in ahead of the scan (best effort). */
		madvise((void *)(ram + data), (size_t)(hole - data), MADV_POPULATE_READ);
		scan(ram + data, (size_t)(hole - data));
		scanned += (size_t)(hole - data);
		pos = hole;
	}
	return scanned;
}

static void write_json(const char *path, uint64_t seed, size_t size)
{
	char tmp[4096], hex[SECRET_SEED_HEX + 1];
	FILE *f;
	size_t i;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		die("JSON path too long: %s", path);
	f = fopen(tmp, "w");
	if (!f)
		die("cannot write %s: %s", tmp, strerror(errno));
	secret_format_seed(seed, hex);
	fprintf(f, "{\"seed\": \"%s\", \"ram_bytes\": %zu, \"channels\": {", hex, size);
	for (i = 0; i < nchannels; i++)
		fprintf(f, "%s\n  \"%s\": {\"full\": %llu, \"head\": %llu, \"tail\": %llu}",
			i ? "," : "", channels[i].name,
			(unsigned long long)channels[i].count[FULL],
			(unsigned long long)channels[i].count[HEAD],
			(unsigned long long)channels[i].count[TAIL]);
	fprintf(f, "\n}}\n");
	if (fflush(f) || ferror(f) || fclose(f)) {
		unlink(tmp);
		die("cannot write %s: %s", tmp, strerror(errno));
	}
	if (rename(tmp, path)) {
		unlink(tmp);
		die("cannot rename %s to %s: %s", tmp, path, strerror(errno));
	}
}

static int derive_main(int argc, char **argv)
{
	char secret[SECRET_LEN + 1];
	uint64_t seed;

	if (argc != 4)
		usage();
	if (!valid_name(argv[2]))
		die("bad channel name '%s'", argv[2]);
	seed = parse_seed_or_die(argv[3]);
	secret_derive(seed, argv[2], secret);
	secret[SECRET_LEN] = '\n';
	if (fwrite(secret, 1, sizeof(secret), stdout) != sizeof(secret) || fflush(stdout))
		die("cannot write the secret: %s", strerror(errno));
	return 0;
}

/* ramscan aes128 KEY-HEX: the key's schedule, 176 bytes as hex. */
static int aes128_main(int argc, char **argv)
{
	unsigned char key[16], out[AES128_SCHEDULE];
	const char *h = argc == 3 ? argv[2] : "";
	int i;

	if (argc != 3 || strlen(h) != 32)
		die("usage: ramscan aes128 KEY-HEX (32 hex digits)");
	for (i = 0; i < 16; i++) {
		unsigned int b;

		if (!isxdigit((unsigned char)h[2 * i]) || !isxdigit((unsigned char)h[2 * i + 1]) ||
		    sscanf(h + 2 * i, "%2x", &b) != 1)
			die("aes128: '%s' is not 32 hex digits", h);
		key[i] = (unsigned char)b;
	}
	aes128_schedule(key, out);
	for (i = 0; i < AES128_SCHEDULE; i++)
		printf("%02x", out[i]);
	putchar('\n');
	return fflush(stdout) ? 2 : 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const char *seed_arg = NULL, *list = NULL, *json = NULL, *ramfile = NULL;
	const char *keys[8];
	int quiet = 0, fd, i, nkeys = 0;
	const unsigned char *ram;
	struct stat st;
	uint64_t seed;
	double t0, t1;
	size_t size, c, scanned;

	if (argc >= 2 && !strcmp(argv[1], "derive"))
		return derive_main(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "aes128"))
		return aes128_main(argc, argv);

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--seed") && i + 1 < argc)
			seed_arg = argv[++i];
		else if (!strcmp(a, "--channels") && i + 1 < argc)
			list = argv[++i];
		else if (!strcmp(a, "--json") && i + 1 < argc)
			json = argv[++i];
		else if (!strcmp(a, "--key") && i + 1 < argc && nkeys < 8)
			keys[nkeys++] = argv[++i];
		else if (!strcmp(a, "--quiet") || !strcmp(a, "-q"))
			quiet = 1;
		else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			usage();
		else if (a[0] == '-' && a[1])
			die("unknown or incomplete option '%s' (see --help)", a);
		else if (!ramfile)
			ramfile = a;
		else
			die("more than one RAM file ('%s', '%s')", ramfile, a);
	}
	if (!seed_arg || !list || !ramfile)
		usage();
	seed = parse_seed_or_die(seed_arg);
	read_channels(list, seed);
	for (i = 0; i < nkeys; i++)
		set_key(keys[i]);

	fd = open(ramfile, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("cannot open RAM file %s: %s", ramfile, strerror(errno));
	if (fstat(fd, &st))
		die("cannot stat RAM file %s: %s", ramfile, strerror(errno));
	if (!S_ISREG(st.st_mode))
		die("RAM file %s is not a regular file", ramfile);
	if (st.st_size == 0)
		die("RAM file %s is empty", ramfile);
	size = (size_t)st.st_size;

	t0 = now();
	ram = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (ram == MAP_FAILED)
		die("cannot map RAM file %s (%zu bytes): %s", ramfile, size, strerror(errno));
	build_patterns();
	scanned = scan_data(fd, ram, size);
	close(fd);
	t1 = now();
	munmap((void *)ram, size);

	if (json)
		write_json(json, seed, size);

	if (!quiet) {
		char hex[SECRET_SEED_HEX + 1];

		secret_format_seed(seed, hex);
		printf("ramscan: %s, %zu MiB (%zu MiB not holes), seed %s, %.0f ms\n",
		       ramfile, size >> 20, scanned >> 20, hex, (t1 - t0) * 1e3);
		printf("%-24s %8s %8s %8s\n", "channel", kind_name[FULL],
		       kind_name[HEAD], kind_name[TAIL]);
		for (c = 0; c < nchannels; c++)
			printf("%-24s %8llu %8llu %8llu\n", channels[c].name,
			       (unsigned long long)channels[c].count[FULL],
			       (unsigned long long)channels[c].count[HEAD],
			       (unsigned long long)channels[c].count[TAIL]);
		if (fflush(stdout))
			die("cannot write to stdout: %s", strerror(errno));
	}
	return 0;
}
