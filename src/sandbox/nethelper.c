/* nethelper.c - the sandbox's network namespace, made by a helper process
 * beside the child (steps of the containment list, contain.c). */
#define _GNU_SOURCE
#include "sandbox/nethelper.h"

#include <errno.h>
#include <linux/sockios.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/syncmsg.h"
#include "net/netns.h"

/* The network namespace is made by a helper while the child builds the
 * file system: creating one (copy_net_ns) is the costliest single step of
 * a start, 0.6 ms here, and it shares nothing with the mounts (other locks,
 * no paths), so on a second core it costs no wall time (bench/README.md).
 * The helper makes the namespace, brings lo up, makes the DNS stub's socket
 * and the proxy's door and sends the namespace (SIOCGSKNS, no path: the
 * child may be in the middle of pivot_root), the stub's socket and the door;
 * the child joins it before anything of the sandbox runs and hands the two
 * sockets to the host side. */
static __attribute__((noreturn)) void net_helper_main(const struct sbx_netplan *np, int sock)
{
	struct sbx_err err = { 0 };
	struct sbx_msg m = { .type = SBX_MSG_READY };
	int fds[3] = { -1, -1, -1 }, s = -1;

	/* nothing of the child's but the way back (not its sync socket) */
	if (sock > 3)
		syscall(SYS_close_range, 3, sock - 1, 0);
	syscall(SYS_close_range, sock + 1, ~0U, 0);
	if (unshare(CLONE_NEWNET) < 0)
		err_sys(&err, "a network namespace");
	else if (netns_loopback_up(&err) == 0 && (fds[1] = netns_dns_socket(&err)) >= 0 &&
		 np->proxy)
		fds[2] = netns_proxy_door(&err);
	if (!err.msg[0] && ((s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0 ||
			    (fds[0] = ioctl(s, SIOCGSKNS)) < 0))
		err_sys(&err, "open the network namespace");
	if (err.msg[0] || msg_send(sock, &m, fds, fds[2] >= 0 ? 3 : 2) < 0) {
		msg_send_error(sock, &err, SBX_ORIGIN_SETUP);
		_exit(125);
	}
	_exit(0);
}

int nethelper_start(const struct sbx_netplan *np, struct nethelper *h, struct sbx_err *err)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return err_sys(err, "socketpair");
	h->pid = fork();
	if (h->pid == 0) {
		close(sv[0]);
		net_helper_main(np, sv[1]);
	}
	close(sv[1]);
	if (h->pid < 0) {
		close(sv[0]);
		return err_sys(err, "start the network set-up");
	}
	h->sock = sv[0];
	return 0;
}

/* Joins the helper's network namespace; hands the DNS stub's socket (the
 * host side answers lookups, dnsstub.c) and the proxy's door over. */
int nethelper_join(struct nethelper *h, int sync, struct sbx_err *err)
{
	struct sbx_msg m;
	int fds[SBX_MSG_MAX_FDS], r = -1;
	size_t n = 0;

	if (msg_recv(h->sock, &m, fds, &n) != 0)
		err_set(err, 0, "the network set-up ended early");
	else if (m.type == SBX_MSG_ERROR)
		msg_error(&m, err);
	else if (n < 2 || setns(fds[0], CLONE_NEWNET) < 0)
		err_sys(err, "join the network namespace");
	else if (msg_send(sync, &(struct sbx_msg){ .type = SBX_MSG_DNS }, &fds[1], 1) < 0)
		err_sys(err, "hand the DNS stub's socket over");
	else if (n == 3 && msg_send(sync, &(struct sbx_msg){ .type = SBX_MSG_PROXY }, &fds[2], 1) < 0)
		err_sys(err, "hand the proxy's socket over");
	else
		r = 0;
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	close(h->sock);
	while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
		;
	return r;
}
