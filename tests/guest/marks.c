// SPDX-License-Identifier: GPL-2.0
/*
 * marks - the wireless marks of the series hold: key material mac80211 and
 * cfg80211 keep between a request and its use lives in kmalloc-sensitive-*.
 *
 * Those keys are freed with kfree_sensitive() in 6.12 already, so no
 * lifetime channel can tell a marked copy from an unmarked one: what the
 * mark adds is where the key lives (a cache of its own, never beside an
 * ordinary object) and the clear of the paths that kfree() it (the error
 * paths of ieee80211_key_alloc()).  So the check is where the key lives:
 * with SLUB's user tracking on for the sensitive caches
 * (slab_debug=U,kmalloc-sensitive-*), /sys/kernel/debug/slab/<cache>/
 * alloc_traces lists the allocation site of every live object and
 * free_traces the free site of every freed one.  In KTAP:
 *
 *   traces_readable          the sensitive caches track their users: the
 *                            check below can see an allocation site
 *   mac80211_key             a CCMP group key installed on an access point
 *                            of mac80211_hwsim: ieee80211_key_alloc() in the
 *                            alloc_traces of a kmalloc-sensitive-* cache
 *                            (the mac80211 patch, 0013)
 *   cfg80211_connkeys        an IBSS joined with a WEP key: the key copy
 *                            nl80211_parse_connkeys() makes lives in a
 *                            sensitive cache, alive (its allocation site)
 *                            or freed once uploaded (cfg80211's free sites)
 *                            (the cfg80211 patch, 0012)
 *   wext_keys                a WEP key set with the wireless extensions
 *                            (SIOCSIWENCODE) on a station: the keys cfg80211
 *                            keeps for wext (wdev->wext.keys) live in a
 *                            sensitive cache while the interface exists
 *                            (the cfg80211 patch, 0012)
 *   tty_write_buf            a line written to a pty: the tty's write_buf,
 *                            which keeps what was written, lives in a
 *                            sensitive cache while the pty is open (its
 *                            allocation stack holds tty_write()) (the tty
 *                            patch, 0011)
 *
 * Without the mark the same site shows in a plain kmalloc-* cache's
 * traces, and the check fails (make mutants: revert-0011 to revert-0013,
 * mark-*).  The traces list the objects in use only (free_traces: where
 * an object in use was freed last): a buffer freed within the call that
 * allocated it (the AF_ALG request, the skcipher walk's bounce buffer) is
 * out of this check's reach.
 *
 * usage: marks       Exit status 0 if every check passed, 1 otherwise.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "wifi.h"

#define TRACES_MAX	(256 * 1024)

static int n, fails;

static void check(int ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void check(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	char msg[256];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ok)
		printf("# %s: %s\nok %d %s\n", name, msg, ++n, name);
	else
		printf("not ok %d %s # %s\n", ++n, name, msg);
	fails += !ok;
	fflush(stdout);
}

/* One nl80211 request; 0, or -1 with errno and why set. */
static int call(int fd, struct nl_msg *m, const char *what, char *why, size_t len)
{
	if (!nl_call(fd, m, NULL, 0))
		return 0;
	snprintf(why, len, "nl80211 %s: %s%s%s", what, strerror(errno),
		 nl_error[0] ? ": " : "", nl_error);
	return -1;
}

/*
 * A new interface of @type on the radio of @radio (an interface of it), up;
 * its ifindex or 0.  One radio cannot be an access point and in an IBSS at
 * once: each check has one of mac80211_hwsim's two radios.
 */
static unsigned int new_iface(int fd, int family, const char *radio_if, const char *ifname,
			      uint32_t type, const unsigned char mac[6], char *why, size_t len)
{
	unsigned int radio = if_nametoindex(radio_if), ifindex;
	struct nl_msg m;

	if (!radio) {
		snprintf(why, len, "no %s: is mac80211_hwsim built in?", radio_if);
		return 0;
	}
	nl_init(&m, family, NL80211_CMD_NEW_INTERFACE);
	nl_u32(&m, NL80211_ATTR_IFINDEX, radio);
	nl_put(&m, NL80211_ATTR_IFNAME, ifname, strlen(ifname) + 1);
	nl_u32(&m, NL80211_ATTR_IFTYPE, type);
	nl_put(&m, NL80211_ATTR_MAC, mac, 6);
	if (call(fd, &m, "NEW_INTERFACE", why, len))
		return 0;
	ifindex = if_nametoindex(ifname);
	if (!ifindex || if_set_up(ifname, 1)) {
		snprintf(why, len, "%s: not created or not up: %s", ifname, strerror(errno));
		return 0;
	}
	return ifindex;
}

/* An access point beaconing with a CCMP group key installed; 0 or -1. */
static int ap_with_key(int fd, int family, char *why, size_t len)
{
	static const unsigned char mac[6] = { 0x02, 0x00, 0x6b, 0x00, 0x00, 0x01 };
	static const unsigned char key[16] = "not-a-secret-key";
	unsigned char head[128];
	unsigned int ifindex;
	struct nl_msg m;
	size_t hl;

	ifindex = new_iface(fd, family, "wlan0", "mk-ap", NL80211_IFTYPE_AP, mac, why, len);
	if (!ifindex)
		return -1;
	hl = wifi_beacon_head(head, mac, "mk-ap");
	nl_init(&m, family, NL80211_CMD_START_AP);
	nl_u32(&m, NL80211_ATTR_IFINDEX, ifindex);
	nl_put(&m, NL80211_ATTR_BEACON_HEAD, head, hl);
	nl_put(&m, NL80211_ATTR_BEACON_TAIL, NULL, 0);
	nl_u32(&m, NL80211_ATTR_BEACON_INTERVAL, 100);
	nl_u32(&m, NL80211_ATTR_DTIM_PERIOD, 2);
	nl_put(&m, NL80211_ATTR_SSID, "mk-ap", 5);
	nl_u32(&m, NL80211_ATTR_HIDDEN_SSID, NL80211_HIDDEN_SSID_NOT_IN_USE);
	nl_put(&m, NL80211_ATTR_PRIVACY, NULL, 0);
	nl_u32(&m, NL80211_ATTR_AUTH_TYPE, NL80211_AUTHTYPE_OPEN_SYSTEM);
	nl_u32(&m, NL80211_ATTR_WIPHY_FREQ, WIFI_FREQ);
	if (call(fd, &m, "START_AP", why, len))
		return -1;
	nl_init(&m, family, NL80211_CMD_NEW_KEY);
	nl_u32(&m, NL80211_ATTR_IFINDEX, ifindex);
	nl_nest_start(&m, NL80211_ATTR_KEY);
	nl_put(&m, NL80211_KEY_DATA, key, sizeof(key));
	nl_u8(&m, NL80211_KEY_IDX, 1);
	nl_u32(&m, NL80211_KEY_CIPHER, WIFI_CIPHER_CCMP);
	nl_u32(&m, NL80211_KEY_TYPE, NL80211_KEYTYPE_GROUP);
	nl_nest_end(&m);
	return call(fd, &m, "NEW_KEY (CCMP group)", why, len);
}

/* An IBSS joined with a WEP-104 default key; 0 or -1. */
static int ibss_with_key(int fd, int family, char *why, size_t len)
{
	static const unsigned char mac[6] = { 0x02, 0x00, 0x6b, 0x00, 0x00, 0x02 };
	static const unsigned char key[13] = "not-a-secret";
	unsigned int ifindex;
	struct nl_msg m;

	ifindex = new_iface(fd, family, "wlan1", "mk-ibss", NL80211_IFTYPE_ADHOC, mac, why, len);
	if (!ifindex)
		return -1;
	nl_init(&m, family, NL80211_CMD_JOIN_IBSS);
	nl_u32(&m, NL80211_ATTR_IFINDEX, ifindex);
	nl_put(&m, NL80211_ATTR_SSID, "mk-ibss", 7);
	nl_u32(&m, NL80211_ATTR_WIPHY_FREQ, WIFI_FREQ);
	nl_put(&m, NL80211_ATTR_PRIVACY, NULL, 0);
	nl_nest_start(&m, NL80211_ATTR_KEYS);
	nl_nest_start(&m, 1);
	nl_put(&m, NL80211_KEY_DATA, key, sizeof(key));
	nl_u8(&m, NL80211_KEY_IDX, 0);
	nl_u32(&m, NL80211_KEY_CIPHER, WIFI_CIPHER_WEP104);
	nl_put(&m, NL80211_KEY_DEFAULT, NULL, 0);
	nl_nest_end(&m);
	nl_nest_end(&m);
	return call(fd, &m, "JOIN_IBSS (WEP key)", why, len);
}

/*
 * A station with a WEP-104 key set through the wireless extensions, as
 * iwconfig sets one: cfg80211 keeps it in wdev->wext.keys until the
 * interface goes.  0 or -1.
 */
static int wext_with_key(int fd, int family, char *why, size_t len)
{
	static const unsigned char mac[6] = { 0x02, 0x00, 0x6b, 0x00, 0x00, 0x03 };
	static const char key[13] = "not-a-secret";
	int sock, ret;

	if (!new_iface(fd, family, "wlan0", "mk-wext", NL80211_IFTYPE_STATION, mac, why, len))
		return -1;
	sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ret = sock < 0 ? -1 : wext_set_key(sock, "mk-wext", key, sizeof(key), 1);
	if (ret)
		snprintf(why, len, "SIOCSIWENCODE: %s (is CONFIG_CFG80211_WEXT on?)",
			 strerror(errno));
	if (sock >= 0)
		close(sock);
	return ret;
}

/*
 * A pty with a line written to its master: the tty's write_buf is live
 * until the pty closes.  The master's fd (kept open), or -1 with @why set.
 */
static int pty_written(char *why, size_t len)
{
	static const char line[] = "a line that is no secret\n";
	int fd = posix_openpt(O_RDWR | O_NOCTTY);

	if (fd < 0 || grantpt(fd) || unlockpt(fd) ||
	    write(fd, line, sizeof(line) - 1) != (ssize_t)(sizeof(line) - 1)) {
		snprintf(why, len, "pty: %s", strerror(errno));
		return -1;
	}
	return fd;
}

/* @buf as KTAP comments, a line each, at most 200 lines. */
static void dump(const char *what, const char *buf)
{
	int lines = 0;

	printf("# the kmalloc-sensitive-* %s:\n", what);
	while (*buf && lines++ < 200) {
		int len = (int)strcspn(buf, "\n");

		if (strncmp(buf, "No data", 7))
			printf("#   %.*s\n", len, buf);
		buf += len + (buf[len] == '\n');
	}
	fflush(stdout);
}

/* Append file @path to @buf (NUL-terminated, at most TRACES_MAX). */
static void slurp(char *buf, size_t *used, const char *path)
{
	int fd = open(path, O_RDONLY);
	ssize_t r;

	if (fd < 0)
		return;
	while (*used + 1 < TRACES_MAX &&
	       (r = read(fd, buf + *used, TRACES_MAX - 1 - *used)) > 0)
		*used += (size_t)r;
	buf[*used] = '\0';
	close(fd);
}

/* The traces of every cache whose name starts with @prefix. */
static size_t traces(const char *prefix, const char *file, char *buf)
{
	char path[512];
	struct dirent *d;
	size_t used = 0;
	DIR *dir;

	buf[0] = '\0';
	dir = opendir("/sys/kernel/debug/slab");
	if (!dir)
		return 0;
	while ((d = readdir(dir)))
		if (!strncmp(d->d_name, prefix, strlen(prefix))) {
			snprintf(path, sizeof(path), "/sys/kernel/debug/slab/%s/%s",
				 d->d_name, file);
			slurp(buf, &used, path);
		}
	closedir(dir);
	return used;
}

int main(void)
{
	static char alloc[TRACES_MAX], freed[TRACES_MAX];
	char why[256] = "", why2[256] = "", why3[256] = "", why4[256] = "";
	struct timespec settle = { 1, 0 };
	int fd, family, ap, ibss, wext, pty;
	size_t got;

	printf("KTAP version 1\n1..5\n");
	fflush(stdout);
	mkdir("/sys/kernel/debug", 0755);
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);	/* may be mounted */
	fd = nl_open();
	family = fd < 0 ? -1 : nl80211_family(fd);
	if (family < 0)
		snprintf(why, sizeof(why), "no nl80211: %s", strerror(errno));
	ap = family < 0 ? -1 : ap_with_key(fd, family, why, sizeof(why));
	ibss = family < 0 ? -1 : ibss_with_key(fd, family, why2, sizeof(why2));
	wext = family < 0 ? -1 : wext_with_key(fd, family, why4, sizeof(why4));
	pty = pty_written(why3, sizeof(why3));
	nanosleep(&settle, NULL);	/* the IBSS joins and uploads its keys */

	got = traces("kmalloc-sensitive-", "alloc_traces", alloc);
	traces("kmalloc-sensitive-", "free_traces", freed);
	check(got > 0 && strstr(alloc, "age="), "traces_readable",
	      "%zu bytes of alloc_traces from the kmalloc-sensitive-* caches "
	      "(needs slab_debug=U,kmalloc-sensitive-*)", got);
	if (ap)
		check(0, "mac80211_key", "no key installed: %s", why);
	else
		check(strstr(alloc, "ieee80211_key_alloc") != NULL, "mac80211_key",
		      "ieee80211_key_alloc() %s the kmalloc-sensitive-* alloc_traces",
		      strstr(alloc, "ieee80211_key_alloc") ? "in" : "not in");
	if (ibss) {
		check(0, "cfg80211_connkeys", "no IBSS joined: %s", why2);
	} else {
		int live = strstr(alloc, "nl80211_parse_connkeys") != NULL;
		int gone = strstr(freed, "cfg80211_upload_connect_keys") != NULL ||
			   strstr(freed, "nl80211_join_ibss") != NULL;

		check(live || gone, "cfg80211_connkeys",
		      "the IBSS's key copy: %s", live ? "allocated by nl80211_parse_connkeys() in a sensitive cache" :
		      gone ? "freed from a sensitive cache" : "in no sensitive cache's traces");
	}
	/* cfg80211_set_encryption(), maybe inlined into its caller */
	if (wext) {
		check(0, "wext_keys", "no wext key set: %s", why4);
	} else {
		int in = strstr(alloc, "cfg80211_set_encryption") != NULL ||
			 strstr(alloc, "cfg80211_wext_siwencode") != NULL;

		check(in, "wext_keys", "cfg80211's wext key store %s the kmalloc-sensitive-* alloc_traces",
		      in ? "in" : "not in");
	}
	/* The pty's write: tty_write(), not the console's redirected_tty_write() */
	if (pty < 0)
		check(0, "tty_write_buf", "no pty written: %s", why3);
	else
		check(strstr(alloc, " tty_write+") != NULL, "tty_write_buf",
		      "tty_write() %s the kmalloc-sensitive-* alloc_traces",
		      strstr(alloc, " tty_write+") ? "in" : "not in");
	if (fails) {	/* what the checks read, for whoever reads the failure */
		dump("alloc_traces", alloc);
		dump("free_traces", freed);
	}
	if (pty >= 0)
		close(pty);
	return fails ? 1 : 0;
}
