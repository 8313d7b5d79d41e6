/* nethelper.c - the sandbox's network namespace, made by a thread beside
 * the child's main thread while that builds the file system (steps of the
 * containment list, contain.c). */
#define _GNU_SOURCE
#include "sandbox/nethelper.h"

#include <errno.h>
#include <linux/sockios.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/syncmsg.h"
#include "base/util.h"
#include "net/netns.h"

/* The network namespace is made beside the file system: creating one
 * (copy_net_ns) is the costliest single step of a start, 0.6 ms here, and
 * it shares nothing with the mounts (other locks, no paths), so on a second
 * core it costs no wall time (bench/README.md). A thread, not a process:
 * the namespace belongs to the task that unshares it, so a thread can make
 * one of its own, and a forked helper cost a copy of the child's page
 * tables and a copy-on-write fault for every page either wrote afterwards
 * (0.8 ms of a start on this machine, bench/README.md). The thread makes
 * the namespace, brings lo up, makes the DNS stub's socket and the proxy's
 * door, and leaves the namespace (SIOCGSKNS, no path: the main thread may
 * be in the middle of pivot_root) and the sockets in the shared fd table;
 * the main thread joins it before anything of the sandbox runs (the
 * capabilities, the filter and the command come after that, with one
 * thread left) and hands the two sockets to the host side. */
static void *helper_main(void *arg)
{
	struct nethelper *h = arg;
	int s = -1;

	if (unshare(CLONE_NEWNET) < 0) {
		err_sys(&h->err, "a network namespace");
		return NULL;
	}
	if (netns_loopback_up(&h->err) < 0 || (h->fds[1] = netns_dns_socket(&h->err)) < 0 ||
	    (h->np->proxy && (h->fds[2] = netns_proxy_door(&h->err)) < 0))
		return NULL;
	if ((s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0 || (h->fds[0] = ioctl(s, SIOCGSKNS)) < 0)
		err_sys(&h->err, "open the network namespace");
	if (s >= 0)
		close(s);
	return NULL;
}

int nethelper_start(const struct sbx_netplan *np, struct nethelper *h, struct sbx_err *err)
{
	pthread_attr_t attr;
	int r;

	memset(h, 0, sizeof(*h));
	h->np = np;
	h->fds[0] = h->fds[1] = h->fds[2] = -1;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	r = pthread_create(&h->thread, &attr, helper_main, h);
	pthread_attr_destroy(&attr);
	if (r != 0)
		return err_set(err, r, "start the network set-up");
	h->started = 1;
	return 0;
}

int nethelper_join(struct nethelper *h, int sync, struct sbx_err *err)
{
	int r = -1;

	pthread_join(h->thread, NULL);
	h->started = 0;
	if (h->err.msg[0])
		*err = h->err;
	else if (setns(h->fds[0], CLONE_NEWNET) < 0)
		err_sys(err, "join the network namespace");
	else if (msg_send(sync, &(struct sbx_msg){ .type = SBX_MSG_DNS }, &h->fds[1], 1) < 0)
		err_sys(err, "hand the DNS stub's socket over");
	else if (h->fds[2] >= 0 && msg_send(sync, &(struct sbx_msg){ .type = SBX_MSG_PROXY }, &h->fds[2], 1) < 0)
		err_sys(err, "hand the proxy's socket over");
	else
		r = 0;
	for (int i = 0; i < 3; i++)
		if (h->fds[i] >= 0)
			close(h->fds[i]);
	return r;
}
