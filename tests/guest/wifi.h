/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wifi.h - the smallest nl80211 client the mac80211 channels of the
 * attacker's-view test need (tests/guest/lifetime/ch-wifi.c), over raw generic
 * netlink: no libnl, no iw, nothing to copy into the initramfs.
 *
 * What it does with a mac80211_hwsim radio is what hostapd does for a
 * WEP or WPA2 access point with one client, minus the air interface and
 * the handshakes: add an AP interface and bring it up, start beaconing on
 * 2412 MHz, add the client as an associated, authorized station, install
 * keys, and later delete the interface.  The client is a made-up address: frames to
 * it are encrypted and sent all the same, and mac80211_hwsim's "hwsim0"
 * interface shows every frame any radio sends, which is how the channel
 * proves its traffic was encrypted.
 *
 * Requests that carry key bytes are built in the caller's buffer, which
 * the caller scrubs; NETLINK_CAP_ACK keeps the kernel from echoing a
 * failed request (key included) back in its error message.
 *
 * Only libc and the uapi headers; everything is static inline, so a program
 * that uses part of it (tests/guest/marks.c) builds without warnings.
 */
#ifndef SANITIZE_WIFI_H
#define SANITIZE_WIFI_H

#include <errno.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/nl80211.h>

#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK		10
#endif
#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK		11
#endif

#define WIFI_CIPHER_WEP104	0x000fac05
#define WIFI_CIPHER_CCMP	0x000fac04
#define WIFI_FREQ		2412	/* channel 1 */
#define WIFI_ETHERTYPE		0x88b5	/* IEEE local experimental */

struct nl_msg {
	union {
		struct nlmsghdr h;
		unsigned char buf[1024];
	};
	size_t nest[4];
	int depth;
	int overflow;
};

static char nl_error[160];	/* the kernel's extended ack message, if any */

static inline void nl_init(struct nl_msg *m, uint16_t family, uint8_t cmd)
{
	struct genlmsghdr *g;

	memset(m, 0, sizeof(*m));
	m->h.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	m->h.nlmsg_type = family;
	m->h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	g = NLMSG_DATA(&m->h);
	g->cmd = cmd;
	g->version = 1;
}

static inline void nl_put(struct nl_msg *m, uint16_t type, const void *data, size_t len)
{
	size_t at = NLMSG_ALIGN(m->h.nlmsg_len);
	struct nlattr *a = (struct nlattr *)(m->buf + at);

	if (at + NLA_HDRLEN + NLA_ALIGN(len) > sizeof(m->buf)) {
		m->overflow = 1;
		return;
	}
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy(m->buf + at + NLA_HDRLEN, data, len);
	memset(m->buf + at + NLA_HDRLEN + len, 0, NLA_ALIGN(len) - len);
	m->h.nlmsg_len = at + NLA_HDRLEN + NLA_ALIGN(len);
}

static inline void nl_u32(struct nl_msg *m, uint16_t type, uint32_t v)
{
	nl_put(m, type, &v, sizeof(v));
}

static inline void nl_u16(struct nl_msg *m, uint16_t type, uint16_t v)
{
	nl_put(m, type, &v, sizeof(v));
}

static inline void nl_u8(struct nl_msg *m, uint16_t type, uint8_t v)
{
	nl_put(m, type, &v, sizeof(v));
}

static inline void nl_nest_start(struct nl_msg *m, uint16_t type)
{
	if (m->depth == (int)(sizeof(m->nest) / sizeof(m->nest[0]))) {
		m->overflow = 1;
		return;
	}
	m->nest[m->depth++] = NLMSG_ALIGN(m->h.nlmsg_len);
	nl_put(m, type | NLA_F_NESTED, NULL, 0);
}

static inline void nl_nest_end(struct nl_msg *m)
{
	struct nlattr *a;

	if (!m->depth)
		return;
	a = (struct nlattr *)(m->buf + m->nest[--m->depth]);
	a->nla_len = m->h.nlmsg_len - m->nest[m->depth];
}

static inline int nl_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 10 };
	int fd, one = 1;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	/* Error strings help whoever debugs a failed setup; optional. */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	return fd;
}

/* The extended ack's message attribute, after a capped error message. */
static inline void nl_ext_ack(const struct nlmsghdr *h)
{
	const struct nlmsgerr *e = NLMSG_DATA(h);
	size_t at = NLMSG_HDRLEN + sizeof(*e), end = h->nlmsg_len;

	nl_error[0] = '\0';
	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	while (at + NLA_HDRLEN <= end) {
		const struct nlattr *a = (const void *)((const char *)h + at);

		if (a->nla_len < NLA_HDRLEN || at + a->nla_len > end)
			break;
		if (a->nla_type == NLMSGERR_ATTR_MSG) {
			size_t n = a->nla_len - NLA_HDRLEN;

			if (n >= sizeof(nl_error))
				n = sizeof(nl_error) - 1;
			memcpy(nl_error, (const char *)a + NLA_HDRLEN, n);
			nl_error[n] = '\0';
		}
		at += NLA_ALIGN(a->nla_len);
	}
}

/*
 * Send a request and wait for its ack.  With reply non-NULL, the first
 * reply message is copied there.  Returns 0, or -1 with errno set (the
 * kernel's error) and nl_error holding its explanation if it gave one.
 */
static inline int nl_call(int fd, struct nl_msg *m, void *reply, size_t reply_len)
{
	static uint32_t seq;
	unsigned char buf[4096];
	int got_reply = 0;

	if (m->overflow || m->depth) {
		errno = EMSGSIZE;
		return -1;
	}
	m->h.nlmsg_seq = ++seq;
	nl_error[0] = '\0';
	if (send(fd, m->buf, m->h.nlmsg_len, 0) != (ssize_t)m->h.nlmsg_len)
		return -1;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n < 0)
			return -1;	/* EAGAIN: the 10 s receive timeout */
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (!e->error)
					return 0;
				nl_ext_ack(h);
				errno = -e->error;
				return -1;
			}
			if (reply && !got_reply) {
				memcpy(reply, h, h->nlmsg_len < reply_len ? h->nlmsg_len : reply_len);
				got_reply = 1;
			}
		}
	}
}

/* The generic netlink family id of "nl80211", or -1. */
static inline int nl80211_family(int fd)
{
	unsigned char reply[4096];
	struct nlmsghdr *h = (struct nlmsghdr *)reply;
	struct nl_msg m;
	size_t at, end;

	nl_init(&m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY);
	nl_put(&m, CTRL_ATTR_FAMILY_NAME, "nl80211", sizeof("nl80211"));
	memset(reply, 0, sizeof(reply));
	if (nl_call(fd, &m, reply, sizeof(reply)))
		return -1;
	end = h->nlmsg_len < sizeof(reply) ? h->nlmsg_len : sizeof(reply);
	for (at = NLMSG_LENGTH(GENL_HDRLEN); at + NLA_HDRLEN <= end;) {
		const struct nlattr *a = (const void *)(reply + at);

		if (a->nla_len < NLA_HDRLEN)
			break;
		if (a->nla_type == CTRL_ATTR_FAMILY_ID)
			return *(const uint16_t *)((const char *)a + NLA_HDRLEN);
		at += NLA_ALIGN(a->nla_len);
	}
	errno = ENOENT;
	return -1;
}

/* Interface flags, through any socket's device ioctls. */
static inline int if_set_up(const char *ifname, int up)
{
	struct ifreq ifr;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret = -1;

	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, ifname, IFNAMSIZ - 1);
	if (!ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		if (up)
			ifr.ifr_flags |= IFF_UP;
		else
			ifr.ifr_flags &= ~IFF_UP;
		ret = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return ret;
}

/*
 * A beacon's head, as hostapd builds it: header, timestamp, interval,
 * capabilities (ESS, privacy), SSID, supported rates, DS parameter set.
 * Returns its length.
 */
static inline size_t wifi_beacon_head(unsigned char *b, const unsigned char mac[6],
			       const char *ssid)
{
	static const unsigned char rates[] = { 0x82, 0x84, 0x8b, 0x96,
					       0x0c, 0x12, 0x18, 0x24 };
	size_t n = 0, len = strlen(ssid);

	b[n++] = 0x80;			/* management, beacon */
	b[n++] = 0;
	b[n++] = 0;			/* duration */
	b[n++] = 0;
	memset(b + n, 0xff, 6);		/* DA: broadcast */
	n += 6;
	memcpy(b + n, mac, 6);		/* SA */
	n += 6;
	memcpy(b + n, mac, 6);		/* BSSID */
	n += 6;
	b[n++] = 0;			/* sequence control */
	b[n++] = 0;
	memset(b + n, 0, 8);		/* timestamp, the driver's */
	n += 8;
	b[n++] = 100;			/* beacon interval, TU */
	b[n++] = 0;
	b[n++] = 0x11;			/* ESS | privacy */
	b[n++] = 0;
	b[n++] = 0;			/* SSID element */
	b[n++] = (unsigned char)len;
	memcpy(b + n, ssid, len);
	n += len;
	b[n++] = 1;			/* supported rates element */
	b[n++] = sizeof(rates);
	memcpy(b + n, rates, sizeof(rates));
	n += sizeof(rates);
	b[n++] = 3;			/* DS parameter set: channel 1 */
	b[n++] = 1;
	b[n++] = 1;
	return n;
}

/*
 * A raw socket that sees every frame mac80211_hwsim's radios send, with
 * its radiotap header ("hwsim0", brought up).  -1 if there is none.
 */
static inline int wifi_sniffer(void)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_ALL) };
	int fd;

	if (if_set_up("hwsim0", 1))
		return -1;
	sll.sll_ifindex = (int)if_nametoindex("hwsim0");
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Count, among the frames the sniffer has seen (waiting up to wait_ms for
 * more), the protected data frames from ap to sta; *clear counts the data
 * frames from ap to sta whose payload shows the plaintext marker.
 */
static inline int wifi_count_protected(int fd, const unsigned char ap[6],
				const unsigned char sta[6], const char *marker,
				int want, int wait_ms, int *clear)
{
	unsigned char f[2048];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int protected = 0;

	*clear = 0;
	while (protected < want && poll(&p, 1, wait_ms) > 0) {
		ssize_t n = recv(fd, f, sizeof(f), MSG_DONTWAIT);
		size_t rt;
		const unsigned char *h;

		if (n < 8)
			continue;
		rt = f[2] | (size_t)f[3] << 8;	/* radiotap length */
		if ((size_t)n < rt + 24)
			continue;
		h = f + rt;
		if ((h[0] & 0x0c) != 0x08 || memcmp(h + 4, sta, 6) || memcmp(h + 10, ap, 6))
			continue;		/* not a data frame ap -> sta */
		if (memmem(h, (size_t)n - rt, marker, strlen(marker)))
			(*clear)++;
		else if (h[1] & 0x40)
			protected++;
	}
	return protected;
}

/*
 * The wireless extensions' SIOCSIWENCODE, as iwconfig's "key" sets a WEP
 * key, on any socket: its request is defined here because
 * <linux/wireless.h> and glibc's <net/if.h> cannot be included together.
 * The union is the kernel's union iwreq_data, 16 bytes, copied whole.
 */
#define WEXT_SIOCSIWENCODE	0x8B2A

struct wext_point {
	void *pointer;
	uint16_t length;
	uint16_t flags;		/* the key's index, 1 to 4 */
};

struct wext_req {
	char ifname[IFNAMSIZ];
	union {
		struct wext_point encoding;
		char size[16];
	} u;
};

/* Set WEP key @index (1 to 4) of @ifname: 0, or -1 with errno. */
static inline int wext_set_key(int sock, const char *ifname, const void *key,
			       size_t len, int index)
{
	struct wext_req req;

	memset(&req, 0, sizeof(req));
	strncpy(req.ifname, ifname, sizeof(req.ifname) - 1);
	req.u.encoding.pointer = (void *)key;
	req.u.encoding.length = (uint16_t)len;
	req.u.encoding.flags = (uint16_t)index;
	return ioctl(sock, WEXT_SIOCSIWENCODE, &req);
}

/*
 * SIOCSIWENCODEEXT (wpa_supplicant's wext driver): the same key in a
 * struct iw_encode_ext, 40 bytes before the key; wext copies it into a
 * buffer of 40 + 64 bytes.  A WEP key for every peer (broadcast address).
 */
#define WEXT_SIOCSIWENCODEEXT	0x8B34
#define WEXT_ALG_WEP		1

struct wext_encode_ext {
	uint32_t ext_flags;
	uint8_t tx_seq[8];
	uint8_t rx_seq[8];
	struct sockaddr addr;
	uint16_t alg;
	uint16_t key_len;
	uint8_t key[64];
};

static inline int wext_set_key_ext(int sock, const char *ifname, const void *key,
				   size_t len, int index)
{
	struct wext_encode_ext ext;
	struct wext_req req;
	int ret;

	memset(&ext, 0, sizeof(ext));
	ext.addr.sa_family = 1;		/* ARPHRD_ETHER */
	memset(ext.addr.sa_data, 0xff, 6);
	ext.ext_flags = 0x4;		/* IW_ENCODE_EXT_GROUP_KEY */
	ext.alg = WEXT_ALG_WEP;
	ext.key_len = (uint16_t)len;
	memcpy(ext.key, key, len);
	memset(&req, 0, sizeof(req));
	strncpy(req.ifname, ifname, sizeof(req.ifname) - 1);
	req.u.encoding.pointer = &ext;
	req.u.encoding.length = (uint16_t)(offsetof(struct wext_encode_ext, key) + len);
	req.u.encoding.flags = (uint16_t)index;
	ret = ioctl(sock, WEXT_SIOCSIWENCODEEXT, &req);
	memset(&ext, 0, sizeof(ext));
	__asm__ __volatile__("" : : "r"(&ext) : "memory");
	return ret;
}

#endif /* SANITIZE_WIFI_H */
