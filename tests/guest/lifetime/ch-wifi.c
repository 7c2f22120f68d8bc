// SPDX-License-Identifier: GPL-2.0
/*
 * lifetime - mac80211: keys on an access point of mac80211_hwsim's first
 * radio, installed with nl80211 (wifi.h).
 */
#include "lifetime.h"

#include <unistd.h>

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
	unsigned int radio, ifindex;
	unsigned char head[128];
	struct nl_msg m;
	size_t n;

	radio = if_nametoindex("wlan0");
	if (!radio)
		return fail(r, "no wlan0: is mac80211_hwsim built in?"), 0;
	nl_init(&m, family, NL80211_CMD_NEW_INTERFACE);
	nl_u32(&m, NL80211_ATTR_IFINDEX, radio);	/* names the radio */
	nl_put(&m, NL80211_ATTR_IFNAME, ifname, strlen(ifname) + 1);
	nl_u32(&m, NL80211_ATTR_IFTYPE, NL80211_IFTYPE_AP);
	nl_put(&m, NL80211_ATTR_MAC, mac, 6);
	if (wifi_call(fd, &m, "NEW_INTERFACE (AP)", r))
		return 0;
	ifindex = if_nametoindex(ifname);
	if (!ifindex)
		return fail(r, "%s was created but has no ifindex", ifname), 0;
	if (if_set_up(ifname, 1))
		return fail_errno(r, "bringing the interface up"), 0;

	n = wifi_beacon_head(head, mac, ifname);
	nl_init(&m, family, NL80211_CMD_START_AP);
	nl_u32(&m, NL80211_ATTR_IFINDEX, ifindex);
	nl_put(&m, NL80211_ATTR_BEACON_HEAD, head, n);
	nl_put(&m, NL80211_ATTR_BEACON_TAIL, NULL, 0);
	nl_u32(&m, NL80211_ATTR_BEACON_INTERVAL, 100);
	nl_u32(&m, NL80211_ATTR_DTIM_PERIOD, 2);
	nl_put(&m, NL80211_ATTR_SSID, ifname, strlen(ifname));
	nl_u32(&m, NL80211_ATTR_HIDDEN_SSID, NL80211_HIDDEN_SSID_NOT_IN_USE);
	nl_put(&m, NL80211_ATTR_PRIVACY, NULL, 0);
	nl_u32(&m, NL80211_ATTR_AUTH_TYPE, NL80211_AUTHTYPE_OPEN_SYSTEM);
	nl_u32(&m, NL80211_ATTR_WIPHY_FREQ, WIFI_FREQ);
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

	fd = nl_open();
	if (fd < 0)
		return fail_errno(r, "generic netlink socket");
	family = nl80211_family(fd);
	if (family < 0)
		return fail_errno(r, "nl80211 family (is cfg80211 built in?)");
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
