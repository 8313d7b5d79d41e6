/* child.c - the sandbox's first process, inside its new namespaces, from
 * the host side's GO to pid 1: it opens the host sources it mounts, takes
 * its identity, unshares the cgroup namespace, has the network namespace
 * made beside it (a helper, net_start), builds the file system
 * (mounts.c), joins the network namespace, hands its fds to the host side
 * (READY), becomes non-dumpable and runs init (init.c). */
#define _GNU_SOURCE
#include "sandbox/child.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "base/syncmsg.h"
#include "base/util.h"
#include "net/netns.h"
#include "sandbox/init.h"
#include "sandbox/mounts.h"

/* The fds the child keeps from the host side; all others are closed. */
static void close_inherited(int sync)
{
	if (sync > 3)
		syscall(SYS_close_range, 3, sync - 1, 0);
	syscall(SYS_close_range, sync + 1, ~0U, 0);
}

/* The host side keeps the namespace and root fds only where something
 * joins the sandbox later (a session: cp, download, exec); a plain run
 * needs none, and 16 opens and closes less are 0.05 ms of its start. */
static int send_ready(int sync, int keep_fds, struct sbx_err *err)
{
	static const char *const ns[] = { "/proc/self/ns/user", "/proc/self/ns/mnt",
					  "/proc/self/ns/net", "/proc/self/ns/pid",
					  "/proc/self/ns/ipc", "/proc/self/ns/uts",
					  "/proc/self/ns/cgroup" };
	int fds[SBX_MSG_MAX_FDS];
	size_t n = 0;
	struct sbx_msg m = { .type = SBX_MSG_READY };

	for (size_t i = 0; keep_fds && i < ARRAY_SIZE(ns); i++)
		if ((fds[n] = open(ns[i], O_RDONLY | O_CLOEXEC)) >= 0)
			n++;
	if (keep_fds && (fds[n] = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0)
		n++;
	int r = msg_send(sync, &m, fds, n);
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	return r < 0 ? err_sys(err, "send the sandbox's fds") : 0;
}

/* The network namespace is made by a helper while the child builds the
 * file system: creating one (copy_net_ns) is the costliest single step of
 * a start, 0.6 ms here, and it shares nothing with the mounts (other locks,
 * no paths), so on a second core it costs no wall time (bench/README.md).
 * The helper makes the namespace, brings lo up, makes the DNS stub's socket
 * and the proxy's door and sends the namespace (SIOCGSKNS, no path: the
 * child may be in the middle of pivot_root), the stub's socket and the door;
 * the child joins it before anything of the sandbox runs and hands the two
 * sockets to the host side. */
struct net_helper {
	pid_t pid;
	int sock;
};

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

static int net_start(const struct sbx_netplan *np, struct net_helper *h, struct sbx_err *err)
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
static int net_join(struct net_helper *h, int sync, struct sbx_err *err)
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

static int child_setup(const struct sbx_plan *plan, int sync, struct sbx_err *err)
{
	struct net_helper net = { -1, -1 };
	struct sbx_mount_src ms;
	struct sbx_msg m;

	if (msg_recv(sync, &m, NULL, NULL) != 0 || m.type != SBX_MSG_GO)
		_exit(125); /* the host side is gone */
	log_trace("child: go");
	/* with all capabilities in our namespace still: counts of its own */
	struct sbx_err uerr = { 0 };
	if (userns_ucounts_apply(&plan->ucounts, &uerr) < 0)
		log_verbose("%s: %s: the sandbox shares the user's inotify and fanotify counts", uerr.msg,
			    strerror(uerr.errnum));
	/* Host paths are opened before the identity changes: a root caller's
	 * child can still enter root's directories as their owner. */
	if (mounts_open_sources(plan, &ms, err) < 0)
		return -1;
	if (userns_become(plan->uid_in, plan->gid_in, err) < 0)
		return -1;
	/* after the host side moved us into our cgroup: it becomes our "/" */
	if (unshare(CLONE_NEWCGROUP) < 0)
		return err_sys(err, "a cgroup namespace");
	/* a change of credentials clears the parent-death signal: set it again */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct pollfd hup = { sync, POLLHUP, 0 };
	if (poll(&hup, 1, 0) > 0 && (hup.revents & POLLHUP))
		_exit(125); /* the host side died before that */
	if (plan->net.own_netns && net_start(&plan->net, &net, err) < 0)
		return -1;
	log_trace("child: identity, cgroup ns; network set-up started");
	if (sethostname(plan->hostname, strlen(plan->hostname)) < 0)
		return err_sys(err, "sethostname");
	if (mounts_setup(plan, &ms, sync, err) < 0)
		return -1;
	log_trace("child: file system built, pivot_root done");
	if (net.pid > 0 && net_join(&net, sync, err) < 0)
		return -1;
	log_trace("child: network namespace joined");
	if (send_ready(sync, plan->pid1_loop || plan->ws_hook, err) < 0)
		return -1;
	/* the host side fills the workspace (--copy) before the command starts */
	if (plan->ws_hook && (msg_recv(sync, &m, NULL, NULL) != 0 || m.type != SBX_MSG_GO))
		_exit(125);
	return 0;
}

void child_main(const struct sbx_plan *plan, int sync)
{
	struct sbx_err err = { 0 };

	/* Dies with the host side, and takes the whole pid namespace along. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	close_inherited(sync);
	if (child_setup(plan, sync, &err) < 0) {
		msg_send_error(sync, &err, SBX_ORIGIN_SETUP);
		_exit(125);
	}
	/* After this the host side can no longer open /proc/PID/ns or root. */
	prctl(PR_SET_DUMPABLE, 0);
	init_run(plan, sync);
}
