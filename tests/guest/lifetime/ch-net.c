// SPDX-License-Identifier: GPL-2.0
/*
 * lifetime - net: TCP over loopback, the send path's page_frag
 * (channels-real).
 *
 * tcp_sendmsg() copies what a task sends into its page_frag
 * (current->task_frag, an order-3 page the task keeps for its next
 * sends), and the skbs point into it.  When the receiver has read them
 * and the skbs are gone the bytes stay in that page, which the task holds
 * until it exits: memory that is kept, not freed (docs/design.md, "Memory
 * that is kept, not freed").  tcp shows the page's fate when the task
 * exits, tcp-alive while it lives.
 */
#include "lifetime.h"

#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/*
 * A connected TCP pair over lo: *client and *server.  0, 1 if the kernel
 * has no INET (skip()'d), -1 fail()'d.
 */
static int tcp_pair(int *client, int *server, struct result *r)
{
	struct sockaddr_in addr = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(addr);
	struct ifreq ifr;
	int one = 1, lfd;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 && errno == EAFNOSUPPORT) {
		skip(r, "kernel has no INET (needs CONFIG_INET=y)");
		return 1;
	}
	if (lfd < 0)
		return fail_errno(r, "socket(AF_INET)");
	/* lo up: the kernel gives it 127.0.0.1 */
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(lfd, SIOCGIFFLAGS, &ifr) ||
	    (ifr.ifr_flags |= IFF_UP, ioctl(lfd, SIOCSIFFLAGS, &ifr))) {
		close(lfd);
		return fail_errno(r, "set lo up");
	}
	if (bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) || listen(lfd, 1) ||
	    getsockname(lfd, (struct sockaddr *)&addr, &len)) {
		close(lfd);
		return fail_errno(r, "listen on 127.0.0.1");
	}
	*client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*client < 0 || connect(*client, (struct sockaddr *)&addr, sizeof(addr))) {
		fail_errno(r, "connect to 127.0.0.1");
		goto err;
	}
	*server = accept(lfd, NULL, NULL);
	if (*server < 0) {
		fail_errno(r, "accept");
		goto err;
	}
	close(lfd);
	/* every send its own segment, as an interactive protocol sends */
	setsockopt(*client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
err:
	if (*client >= 0)
		close(*client);
	close(lfd);
	return -1;
}

/* Send the secret COPIES times on fd.  0, or -1 fail()'d. */
static int tcp_send_secret(const struct channel *ch, int fd, struct result *r)
{
	char msg[SECRET_LEN];
	int i, ret = 0;

	secret_derive(seed, ch->name, msg);
	for (i = 0; i < COPIES && !ret; i++)
		if (send(fd, msg, sizeof(msg), 0) != (ssize_t)sizeof(msg))
			ret = fail_errno(r, "send");
	scrub(msg, sizeof(msg));
	return ret;
}

/*
 * tcp: the reader reads at the release (it frees the skbs), the sender
 * exits then (its task_frag page is freed).
 */
int ch_tcp(const struct channel *ch, struct result *r)
{
	int client = -1, server = -1, sync, ret;
	pid_t pid;

	ret = tcp_pair(&client, &server, r);
	if (ret)
		return ret > 0 ? 0 : -1;
	pid = fork_helper(&sync, r);
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(client);
		read_copies_exit(ch, server, 1, r);
	}
	close(server);
	if (tcp_send_secret(ch, client, r))
		return stop_helper(pid);
	if (wait_helper(sync, pid, r, "reader"))
		return -1;
	note(r, "%d sends of %d bytes over TCP on lo, read by pid %d at the release",
	     COPIES, SECRET_LEN, (int)pid);
	hold(r);
	close(client);
	return wait_child(pid, r, "reader");
}

/*
 * tcp-alive: the reader reads at once and exits; the sender keeps its
 * socket and sleeps through the scan, holding its task_frag page.
 */
int ch_tcp_alive(const struct channel *ch, struct result *r)
{
	int client = -1, server = -1, ret;
	pid_t pid;

	ret = tcp_pair(&client, &server, r);
	if (ret)
		return ret > 0 ? 0 : -1;
	pid = fork();
	if (pid < 0)
		return fail_errno(r, "fork");
	if (pid == 0) {
		close(client);
		read_copies_exit(ch, server, 0, r);
	}
	close(server);
	if (tcp_send_secret(ch, client, r) || wait_child(pid, r, "reader"))
		return -1;
	note(r, "%d sends of %d bytes over TCP on lo, read at once; pid %d keeps its "
	     "socket, asleep", COPIES, SECRET_LEN, (int)getpid());
	resident(r);
}
