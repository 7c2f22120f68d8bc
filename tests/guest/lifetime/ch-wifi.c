// SPDX-License-Identifier: GPL-2.0
/*
 * lifetime - mac80211: keys on an access point of mac80211_hwsim's first
 * radio, installed with nl80211 (wifi.h).
 */
#include "lifetime.h"

#include <ctype.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "wifi.h"

#define FRAMES		8	/* encrypted frames sent with a key */

static const char public_text[] = PUBLIC_TEXT;

static const unsigned char wifi_sta[6] = { 0x02, 0x00, 0x5a, 0x00, 0x00, 0x01 };

/* One nl80211 request without key bytes; fail()s naming it. */
static int wifi_call(int fd, struct nl_msg *m, const char *what, struct result *r)
{
	if (!nl_call(fd, m, NULL, 0))
		return 0;
	return fail(r, "nl80211 %s: %s%s%s", what, strerror(errno),
		    nl_error[0] ? ": " : "", nl_error);
}

/* A generic netlink socket and nl80211's family id: the socket, or -1 (fail()'d). */
static int nl80211_open(int *family, struct result *r)
{
	int fd = nl_open();

	if (fd < 0)
		return fail_errno(r, "generic netlink socket");
	*family = nl80211_family(fd);
	if (*family < 0) {
		fail_errno(r, "nl80211 family (is cfg80211 built in?)");
		close(fd);
		return -1;
	}
	return fd;
}

/* A START_AP request for interface ifindex: beaconing, open system. */
static void start_ap_msg(struct nl_msg *m, int family, unsigned int ifindex,
			 const char *ifname, const unsigned char mac[6])
{
	unsigned char head[128];
	size_t n;

	n = wifi_beacon_head(head, mac, ifname);
	nl_init(m, family, NL80211_CMD_START_AP);
	nl_u32(m, NL80211_ATTR_IFINDEX, ifindex);
	nl_put(m, NL80211_ATTR_BEACON_HEAD, head, n);
	nl_put(m, NL80211_ATTR_BEACON_TAIL, NULL, 0);
	nl_u32(m, NL80211_ATTR_BEACON_INTERVAL, 100);
	nl_u32(m, NL80211_ATTR_DTIM_PERIOD, 2);
	nl_put(m, NL80211_ATTR_SSID, ifname, strlen(ifname));
	nl_u32(m, NL80211_ATTR_HIDDEN_SSID, NL80211_HIDDEN_SSID_NOT_IN_USE);
	nl_put(m, NL80211_ATTR_PRIVACY, NULL, 0);
	nl_u32(m, NL80211_ATTR_AUTH_TYPE, NL80211_AUTHTYPE_OPEN_SYSTEM);
	nl_u32(m, NL80211_ATTR_WIPHY_FREQ, WIFI_FREQ);
}

/*
 * A new interface of type iftype (an access point, a station) on the radio
 * of wlan0, up; its ifindex or 0.
 */
static unsigned int wifi_iface(int fd, int family, const char *ifname,
			       const unsigned char mac[6], uint32_t iftype, struct result *r)
{
	unsigned int radio, ifindex;
	struct nl_msg m;

	radio = if_nametoindex("wlan0");
	if (!radio)
		return fail(r, "no wlan0: is mac80211_hwsim built in?"), 0;
	nl_init(&m, family, NL80211_CMD_NEW_INTERFACE);
	nl_u32(&m, NL80211_ATTR_IFINDEX, radio);	/* names the radio */
	nl_put(&m, NL80211_ATTR_IFNAME, ifname, strlen(ifname) + 1);
	nl_u32(&m, NL80211_ATTR_IFTYPE, iftype);
	nl_put(&m, NL80211_ATTR_MAC, mac, 6);
	if (wifi_call(fd, &m, iftype == NL80211_IFTYPE_AP ? "NEW_INTERFACE (AP)" :
		      "NEW_INTERFACE (station)", r))
		return 0;
	ifindex = if_nametoindex(ifname);
	if (!ifindex)
		return fail(r, "%s was created but has no ifindex", ifname), 0;
	if (if_set_up(ifname, 1))
		return fail_errno(r, "bringing the interface up"), 0;
	return ifindex;
}

/*
 * A new interface on the radio of wlan0, an access point with the address
 * mac, beaconing, with one associated, authorized client, wifi_sta, as
 * hostapd would set it up.  Returns its ifindex, or 0 (fail()'d).  Each
 * channel has an interface of its own, so that deleting one (the release)
 * frees its keys and nothing else.
 */
static unsigned int wifi_ap(int fd, int family, const char *ifname,
			    const unsigned char mac[6], struct result *r)
{
	static const unsigned char rates[] = { 0x82, 0x84, 0x8b, 0x96,
					       0x0c, 0x12, 0x18, 0x24 };
	struct nl80211_sta_flag_update flags;
	unsigned int ifindex;
	struct nl_msg m;

	ifindex = wifi_iface(fd, family, ifname, mac, NL80211_IFTYPE_AP, r);
	if (!ifindex)
		return 0;
	start_ap_msg(&m, family, ifindex, ifname, mac);
	if (wifi_call(fd, &m, "START_AP", r))
		return 0;

	nl_init(&m, family, NL80211_CMD_NEW_STATION);
	nl_u32(&m, NL80211_ATTR_IFINDEX, ifindex);
	nl_put(&m, NL80211_ATTR_MAC, wifi_sta, 6);
	nl_put(&m, NL80211_ATTR_STA_SUPPORTED_RATES, rates, sizeof(rates));
	nl_u16(&m, NL80211_ATTR_STA_LISTEN_INTERVAL, 10);
	nl_u16(&m, NL80211_ATTR_STA_AID, 1);
	flags.mask = flags.set = 1u << NL80211_STA_FLAG_AUTHENTICATED |
				 1u << NL80211_STA_FLAG_ASSOCIATED;
	nl_put(&m, NL80211_ATTR_STA_FLAGS2, &flags, sizeof(flags));
	if (wifi_call(fd, &m, "NEW_STATION", r))
		return 0;

	nl_init(&m, family, NL80211_CMD_SET_STATION);
	nl_u32(&m, NL80211_ATTR_IFINDEX, ifindex);
	nl_put(&m, NL80211_ATTR_MAC, wifi_sta, 6);
	flags.mask = flags.set = 1u << NL80211_STA_FLAG_AUTHORIZED;
	nl_put(&m, NL80211_ATTR_STA_FLAGS2, &flags, sizeof(flags));
	if (wifi_call(fd, &m, "SET_STATION (authorized)", r))
		return 0;
	return ifindex;
}

/*
 * The channel's secret, its first keylen characters, as the key of an
 * access point: a WEP-104 default key (used for every frame, as WEP does)
 * or a CCMP pairwise key for the client.  FRAMES frames go to the client
 * with it and are seen encrypted on hwsim0.  At the release the interface
 * is deleted, which frees its keys; a resident channel keeps it through
 * the scan instead (the control that shows the scan finds a key mac80211
 * holds).
 */
static int wifi_key(const struct channel *ch, struct result *r, const char *ifname,
		    unsigned char id, uint32_t cipher, size_t keylen)
{
	int pairwise = cipher != WIFI_CIPHER_WEP104;
	unsigned char mac[6] = { 0x02, 0x00, 0x5a, 0x00, 0x00, id };
	char key[SECRET_HALF], frame[ETH_HLEN + sizeof(public_text)];
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_halen = 6 };
	struct nl_msg m;
	unsigned int ifindex;
	int fd, family, tx, sniff, i, seen, clear, ret;

	fd = nl80211_open(&family, r);
	if (fd < 0)
		return -1;
	ifindex = wifi_ap(fd, family, ifname, mac, r);
	if (!ifindex)
		return -1;

	/* The key, in one request buffer and one key buffer, both scrubbed. */
	secret_derive_n(seed, ch->name, key, keylen);
	nl_init(&m, family, NL80211_CMD_NEW_KEY);
	nl_u32(&m, NL80211_ATTR_IFINDEX, ifindex);
	if (pairwise)
		nl_put(&m, NL80211_ATTR_MAC, wifi_sta, 6);
	nl_nest_start(&m, NL80211_ATTR_KEY);
	nl_put(&m, NL80211_KEY_DATA, key, keylen);
	nl_u8(&m, NL80211_KEY_IDX, 0);
	nl_u32(&m, NL80211_KEY_CIPHER, cipher);
	nl_u32(&m, NL80211_KEY_TYPE, pairwise ? NL80211_KEYTYPE_PAIRWISE : NL80211_KEYTYPE_GROUP);
	nl_nest_end(&m);
	scrub(key, sizeof(key));
	ret = wifi_call(fd, &m, "NEW_KEY", r);
	scrub(&m, sizeof(m));
	if (ret)
		return -1;
	if (!pairwise) {
		nl_init(&m, family, NL80211_CMD_SET_KEY);
		nl_u32(&m, NL80211_ATTR_IFINDEX, ifindex);
		nl_nest_start(&m, NL80211_ATTR_KEY);
		nl_u8(&m, NL80211_KEY_IDX, 0);
		nl_put(&m, NL80211_KEY_DEFAULT, NULL, 0);
		nl_nest_end(&m);
		if (wifi_call(fd, &m, "SET_KEY (default)", r))
			return -1;
	}

	/* Traffic: FRAMES frames to the client, which the key encrypts. */
	sniff = wifi_sniffer();
	if (sniff < 0)
		return fail_errno(r, "a packet socket on hwsim0");
	tx = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (tx < 0)
		return fail_errno(r, "packet socket");
	to.sll_ifindex = (int)ifindex;
	memcpy(to.sll_addr, wifi_sta, 6);
	memcpy(frame, wifi_sta, 6);
	memcpy(frame + 6, mac, 6);
	frame[12] = (char)(WIFI_ETHERTYPE >> 8);
	frame[13] = (char)(WIFI_ETHERTYPE & 0xff);
	memcpy(frame + ETH_HLEN, public_text, sizeof(public_text));
	for (i = 0; i < FRAMES; i++)
		if (sendto(tx, frame, sizeof(frame), 0, (struct sockaddr *)&to, sizeof(to)) < 0)
			return fail_errno(r, "sending a frame");
	seen = wifi_count_protected(sniff, mac, wifi_sta, public_text, FRAMES, 3000, &clear);
	close(sniff);
	close(tx);
	if (clear)
		return fail(r, "%d frames went out in the clear", clear);
	if (seen < FRAMES)
		return fail(r, "%d of %d frames seen encrypted on hwsim0", seen, FRAMES);
	note(r, "%s key on AP %s, %d frames to its client seen encrypted on hwsim0",
	     pairwise ? "CCMP pairwise" : "WEP-104 default", ifname, seen);

	if (flags_of(ch) & RESIDENT)
		resident(r);
	hold(r);
	nl_init(&m, family, NL80211_CMD_DEL_INTERFACE);
	nl_u32(&m, NL80211_ATTR_IFINDEX, ifindex);
	ret = wifi_call(fd, &m, "DEL_INTERFACE", r);
	close(fd);
	return ret;
}

int ch_wifi_wep_key(const struct channel *ch, struct result *r)
{
	return wifi_key(ch, r, "ap-wep", 0x10, WIFI_CIPHER_WEP104, 13);
}

int ch_wifi_ccmp_key(const struct channel *ch, struct result *r)
{
	return wifi_key(ch, r, "ap-ccmp", 0x20, WIFI_CIPHER_CCMP, SECRET_HALF);
}

int ch_wifi_alive(const struct channel *ch, struct result *r)
{
	return wifi_key(ch, r, "ap-alive", 0x30, WIFI_CIPHER_CCMP, SECRET_HALF);
}

/*
 * wifi-ap-pmk: an access point started with its PMK (NL80211_ATTR_PMK, the
 * secret's 32 characters), as hostapd asks a driver that offloads the
 * 4-way handshake to do.  mac80211_hwsim offloads none and nl80211 refuses
 * the request, which changes nothing here: the PMK was in the request
 * either way.  COPIES requests on a socket without NETLINK_CAP_ACK (libnl's
 * default), whose error ACKs echo each request, read at the release.  6.12
 * clears key-carrying requests after their doit (NL80211_FLAG_CLEAR_SKB)
 * but START_AP lacked the flag: its request and the echo in its ACK kept
 * the PMK.
 */
static int wifi_ap_pmk(const struct channel *ch, struct result *r, const char *ifname,
		       unsigned char id, int up)
{
	unsigned char mac[6] = { 0x02, 0x00, 0x5a, 0x00, 0x00, id };
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	unsigned char ack[2048];
	unsigned int ifindex;
	char pmk[SECRET_LEN];
	int fd, raw, family, i, refused = 0, ret;
	struct nl_msg m;

	fd = nl80211_open(&family, r);
	if (fd < 0)
		return -1;
	ifindex = wifi_iface(fd, family, ifname, mac, NL80211_IFTYPE_AP, r);
	if (!ifindex)
		return -1;
	if (!up && if_set_up(ifname, 0))
		return fail_errno(r, "taking the interface down");
	raw = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (raw < 0 || bind(raw, (struct sockaddr *)&sa, sizeof(sa)))
		return fail_errno(r, "a generic netlink socket without NETLINK_CAP_ACK");
	for (i = 0; i < COPIES; i++) {
		start_ap_msg(&m, family, ifindex, ifname, mac);
		nl_u32(&m, NL80211_ATTR_WPA_VERSIONS, NL80211_WPA_VERSION_2);
		secret_derive(seed, ch->name, pmk);
		nl_put(&m, NL80211_ATTR_PMK, pmk, sizeof(pmk));
		scrub(pmk, sizeof(pmk));
		m.h.nlmsg_seq = (uint32_t)i + 1;
		ret = send(raw, m.buf, m.h.nlmsg_len, 0) == (ssize_t)m.h.nlmsg_len;
		scrub(&m, sizeof(m));
		if (!ret)
			return fail_errno(r, "sending START_AP with a PMK");
	}
	note(r, "%d START_AP requests with a PMK on AP %s (%s), their ACKs read at the release",
	     COPIES, ifname, up ? "up" : "down");
	hold(r);
	for (i = 0; i < COPIES; i++) {
		struct timeval tv = { .tv_sec = 5 };
		ssize_t n;

		setsockopt(raw, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		n = recv(raw, ack, sizeof(ack), 0);
		if (n >= (ssize_t)(NLMSG_HDRLEN + sizeof(struct nlmsgerr)) &&
		    ((struct nlmsghdr *)ack)->nlmsg_type == NLMSG_ERROR &&
		    ((struct nlmsgerr *)NLMSG_DATA(ack))->error)
			refused++;
		scrub(ack, sizeof(ack));
	}
	close(raw);
	nl_init(&m, family, NL80211_CMD_DEL_INTERFACE);
	nl_u32(&m, NL80211_ATTR_IFINDEX, ifindex);
	ret = wifi_call(fd, &m, "DEL_INTERFACE", r);
	close(fd);
	if (!ret && refused != COPIES)
		ret = fail(r, "%d of %d START_AP requests with a PMK refused", refused, COPIES);
	return ret;
}

int ch_wifi_ap_pmk(const struct channel *ch, struct result *r)
{
	return wifi_ap_pmk(ch, r, "ap-pmk", 0x40, 1);
}

/*
 * wifi-ap-pmk-down: the same on an access point interface that is down.
 * nl80211 refuses the request in its pre_doit (the interface must be up),
 * so its post_doit, which clears flagged requests, does not run.
 */
int ch_wifi_ap_pmk_down(const struct channel *ch, struct result *r)
{
	return wifi_ap_pmk(ch, r, "ap-pmk-down", 0x50, 0);
}

/* ---- wifi-wpa2 (channels-real): hostapd and wpa_supplicant ---------------- */

/* The MAC address of an interface, 0 or -1. */
static int if_mac(const char *ifname, unsigned char mac[6])
{
	struct ifreq ifr;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret;

	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ret = ioctl(fd, SIOCGIFHWADDR, &ifr);
	close(fd);
	if (!ret)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return ret;
}

/* Write a file of the channel's (0600); 0 or -1. */
static int write_secret_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), ret;

	if (fd < 0)
		return -1;
	ret = write_full(fd, text, strlen(text));
	if (close(fd))
		ret = -1;
	return ret;
}

/*
 * In a program's log (a tmpfs file), the 16 bytes of "<what> - hexdump(len=16): xx ..."
 * as hex without spaces into hex (33 bytes); 1 if found.
 */
static int log_key(const char *log, const char *what, char *hex)
{
	static char text[1 << 20];
	char want[64], *p;
	ssize_t n = read_file(log, text, sizeof(text));
	int i;

	if (n <= 0)
		return 0;
	snprintf(want, sizeof(want), "%s - hexdump(len=16): ", what);
	p = strstr(text, want);
	if (!p)
		return 0;
	p += strlen(want);
	for (i = 0; i < 16; i++, p += 3) {
		if (!isxdigit((unsigned char)p[0]) || !isxdigit((unsigned char)p[1]))
			return 0;
		hex[2 * i] = p[0];
		hex[2 * i + 1] = p[1];
	}
	hex[32] = '\0';
	return 1;
}

/* The first line of a log that says it failed, for a message ("" if none). */
static const char *log_failure(const char *log)
{
	static char text[1 << 20], line[120];
	static const char *const words[] = { "Could not", "could not", "Failed", "failed",
					     "rror", "nvalid" };
	char *p = NULL, *start;
	size_t i;

	line[0] = '\0';
	if (read_file(log, text, sizeof(text)) <= 0)
		return line;
	for (i = 0; i < sizeof(words) / sizeof(words[0]) && !p; i++)
		p = strstr(text, words[i]);
	if (!p)
		return line;
	for (start = p; start > text && start[-1] != '\n'; start--)
		;
	start[strcspn(start, "\n")] = '\0';
	snprintf(line, sizeof(line), ": '%.100s'", start);
	return line;
}

static int log_has(const char *log, const char *what)
{
	static char text[1 << 20];

	return read_file(log, text, sizeof(text)) > 0 && strstr(text, what) != NULL;
}

/*
 * hostapd's and wpa_supplicant's nl80211 driver sets interface flags
 * through a PF_INET socket: without INET it does not start ("Failed to
 * initialize driver 'nl80211'").  Asked before any secret is derived.
 */
static int wpa2_skip(struct result *r)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	skip(r, "kernel has no INET: hostapd's and wpa_supplicant's nl80211 driver "
	     "needs a PF_INET socket (needs CONFIG_INET=y)");
	return 1;
}

/*
 * wifi-wpa2: hostapd (package hostapd) on wlan0 and wpa_supplicant
 * (package wpasupplicant) on wlan1, mac80211_hwsim's two radios, with the
 * channel's secret as the WPA2 passphrase in their configuration files
 * (tmpfs), complete a WPA2-PSK (CCMP) handshake; FRAMES frames go from the
 * AP to the station, seen encrypted on hwsim0; SIGTERM makes the station
 * disconnect and both exit, held at their exits until the release, when
 * the configuration files and logs are unlinked.  Their debug key logging
 * (-K) gives the pairwise temporal key; the parent hands it to the host
 * with the scan request ("wifi-wpa2-tk=<hex>"), which counts it as
 * channel wifi-wpa2-tk.  The channel's own count is the passphrase.
 * Needs INET (wpa2_skip()): the kernels of make check have it
 * (Kconfig-fragments/real-programs.config).
 */
int ch_wifi_wpa2(const struct channel *ch, struct result *r)
{
	const char *dir = "/tmp";
	char hconf[128], sconf[128], hlog[128], slog[128], text[1024], pass[SECRET_LEN + 1];
	char *hargv[] = { "hostapd", "-dd", "-K", "-t", hconf, NULL };
	char *sargv[] = { "wpa_supplicant", "-dd", "-K", "-t", "-i", "wlan1", "-D", "nl80211",
			  "-c", sconf, NULL };
	unsigned char ap[6], sta[6];
	char frame[ETH_HLEN + sizeof(public_text)];
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_halen = 6 };
	struct prog h = { 0 }, s = { 0 };
	int hl = -1, sl = -1, i, ret = -1, tx = -1, sniff = -1, seen, clear;

	if (wpa2_skip(r))
		return 0;
	if (!if_nametoindex("wlan0") || !if_nametoindex("wlan1"))
		return fail(r, "no wlan0 and wlan1: is mac80211_hwsim built in (2 radios)?");
	if (if_mac("wlan0", ap) || if_mac("wlan1", sta))
		return fail_errno(r, "SIOCGIFHWADDR");
	snprintf(hconf, sizeof(hconf), "%s/lifetime-hostapd.conf", dir);
	snprintf(sconf, sizeof(sconf), "%s/lifetime-wpa_supplicant.conf", dir);
	snprintf(hlog, sizeof(hlog), "%s/lifetime-hostapd.log", dir);
	snprintf(slog, sizeof(slog), "%s/lifetime-wpa_supplicant.log", dir);
	secret_derive(seed, ch->name, pass);
	pass[SECRET_LEN] = '\0';
	snprintf(text, sizeof(text),
		 "interface=wlan0\ndriver=nl80211\nssid=lifetime-wpa2\nhw_mode=g\nchannel=1\n"
		 "wpa=2\nwpa_key_mgmt=WPA-PSK\nrsn_pairwise=CCMP\nwpa_passphrase=%s\n", pass);
	i = write_secret_file(hconf, text);
	snprintf(text, sizeof(text),
		 "network={\n\tssid=\"lifetime-wpa2\"\n\tkey_mgmt=WPA-PSK\n\tproto=RSN\n"
		 "\tpairwise=CCMP\n\tgroup=CCMP\n\tpsk=\"%s\"\n\tscan_freq=2412\n}\n", pass);
	i |= write_secret_file(sconf, text);
	scrub(text, sizeof(text));
	scrub(pass, sizeof(pass));
	if (i) {
		fail_errno(r, "writing the configuration files");
		goto out;
	}
	hl = open(hlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	sl = open(slog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (hl < 0 || sl < 0) {
		fail_errno(r, "the logs");
		goto out;
	}
	if (prog_start(&h, "/usr/sbin/hostapd", "hostapd", hargv, -1, hl, hl, r))
		goto out;
	for (i = 0; i < PROG_TIMEOUT * 10 && !log_has(hlog, "AP-ENABLED"); i++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	if (i == PROG_TIMEOUT * 10) {
		fail(r, "hostapd: no AP-ENABLED within %d s%s", PROG_TIMEOUT, log_failure(hlog));
		goto out;
	}
	if (prog_start(&s, "/usr/sbin/wpa_supplicant", "wpasupplicant", sargv, -1, sl, sl, r))
		goto out;
	for (i = 0; i < PROG_TIMEOUT * 10 && !log_has(slog, "CTRL-EVENT-CONNECTED"); i++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	if (i == PROG_TIMEOUT * 10) {
		fail(r, "wpa_supplicant: not connected within %d s%s", PROG_TIMEOUT,
		     log_failure(slog));
		goto out;
	}
	if (!log_key(slog, "WPA: TK", r->scan_key_hex)) {
		fail(r, "no 'WPA: TK' in wpa_supplicant's -K log");
		goto out;
	}
	snprintf(r->scan_key_channel, sizeof(r->scan_key_channel), "%s-tk", ch->name);

	/* Traffic: FRAMES frames from the AP to the station, encrypted. */
	sniff = wifi_sniffer();
	tx = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (sniff < 0 || tx < 0) {
		fail_errno(r, "packet sockets");
		goto out;
	}
	to.sll_ifindex = (int)if_nametoindex("wlan0");
	memcpy(to.sll_addr, sta, 6);
	memcpy(frame, sta, 6);
	memcpy(frame + 6, ap, 6);
	frame[12] = (char)(WIFI_ETHERTYPE >> 8);
	frame[13] = (char)(WIFI_ETHERTYPE & 0xff);
	memcpy(frame + ETH_HLEN, public_text, sizeof(public_text));
	for (i = 0; i < FRAMES; i++)
		if (sendto(tx, frame, sizeof(frame), 0, (struct sockaddr *)&to, sizeof(to)) < 0) {
			fail_errno(r, "sending a frame");
			goto out;
		}
	seen = wifi_count_protected(sniff, ap, sta, public_text, FRAMES, 3000, &clear);
	if (clear || seen < FRAMES) {
		fail(r, "%d of %d frames seen encrypted on hwsim0, %d in the clear", seen, FRAMES,
		     clear);
		goto out;
	}
	/* The station leaves (deauthentication), then the AP stops. */
	prog_signal(&s, SIGTERM);
	if (prog_wait_exit(&s, PROG_TIMEOUT, r))
		goto out;
	prog_signal(&h, SIGTERM);
	if (prog_wait_exit(&h, PROG_TIMEOUT, r))
		goto out;
	note(r, "hostapd and wpa_supplicant WPA2-PSK CCMP on wlan0/wlan1, %d frames seen encrypted, both stopped",
	     seen);
	hold(r);
	prog_release(&s);
	prog_release(&h);
	ret = 0;
out:
	prog_kill(&s);
	prog_kill(&h);
	if (tx >= 0)
		close(tx);
	if (sniff >= 0)
		close(sniff);
	if (hl >= 0)
		close(hl);
	if (sl >= 0)
		close(sl);
	unlink(hconf);
	unlink(sconf);
	unlink(hlog);
	unlink(slog);
	return ret;
}

/*
 * wifi-wpa2-tk: what wifi-wpa2 leaves of the temporal key; nothing runs
 * for it (wifi-wpa2 sends the key with the scan request).
 */
int ch_wifi_wpa2_tk(const struct channel *ch, struct result *r)
{
	(void)ch;
	if (wpa2_skip(r))
		return 0;
	note(r, "the key of wifi-wpa2's handshake, counted by the host");
	return 0;
}

/*
 * wifi-wext-key: the secret's first 13 characters as a WEP-104 key, set
 * COPIES times through the wireless extensions on a station interface of
 * its own, at indexes 1 to 4, with SIOCSIWENCODE (iwconfig's "key") and
 * SIOCSIWENCODEEXT (wpa_supplicant's wext driver) in turn.  wext copies
 * each request into a buffer of its own (ioctl_standard_iw_point()'s
 * extra: 64 and 104 bytes), which 6.12 frees with kfree() and the
 * cfg80211 patch (0012) with kfree_sensitive() for the ENCODE requests;
 * cfg80211 keeps the keys in wdev->wext.keys, which the patch marks and
 * 6.12 frees with kfree_sensitive() when the interface is deleted, at the
 * release.
 */
int ch_wifi_wext_key(const struct channel *ch, struct result *r)
{
	static const char ifname[] = "wext-sta";
	unsigned char mac[6] = { 0x02, 0x00, 0x5a, 0x00, 0x00, 0x60 };
	char key[13];
	unsigned int ifindex;
	struct nl_msg m;
	int fd, family, sock, i, ret;

	fd = nl80211_open(&family, r);
	if (fd < 0)
		return -1;
	ifindex = wifi_iface(fd, family, ifname, mac, NL80211_IFTYPE_STATION, r);
	if (!ifindex)
		return -1;
	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return fail_errno(r, "a socket for the wext ioctl");
	for (i = 0; i < COPIES; i++) {
		secret_derive_n(seed, ch->name, key, sizeof(key));
		ret = i % 2 ? wext_set_key_ext(sock, ifname, key, sizeof(key), i % 4 + 1) :
			     wext_set_key(sock, ifname, key, sizeof(key), i % 4 + 1);
		scrub(key, sizeof(key));
		if (ret) {
			if (errno == ENOTTY || errno == EOPNOTSUPP)
				return fail(r, "%s refused (%s): is CONFIG_CFG80211_WEXT on?",
					    i % 2 ? "SIOCSIWENCODEEXT" : "SIOCSIWENCODE", strerror(errno));
			return fail_errno(r, i % 2 ? "SIOCSIWENCODEEXT" : "SIOCSIWENCODE");
		}
	}
	close(sock);
	note(r, "%d WEP-104 keys set with SIOCSIWENCODE on station %s, deleted at the release",
	     COPIES, ifname);
	hold(r);
	nl_init(&m, family, NL80211_CMD_DEL_INTERFACE);
	nl_u32(&m, NL80211_ATTR_IFINDEX, ifindex);
	ret = wifi_call(fd, &m, "DEL_INTERFACE", r);
	close(fd);
	return ret;
}
