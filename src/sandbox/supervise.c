/* supervise.c - the host side stays alive as supervisor: it forwards
 * signals to the sandbox's init, serves the proxy, the DNS stub and the
 * terminal, and kills pid 1 (which ends every process in its pid
 * namespace) when its watcher (watch.c: timeout, disk quota, memory) says
 * so; the watcher tells how the command ended. */
#define _GNU_SOURCE
#include "sandbox/supervise.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "base/syncmsg.h"
#include "base/util.h"
#include "net/dnsstub.h"
#include "net/proxy.h"
#include "term/pty.h"
#include "sandbox/askterm.h"
#include "sandbox/watch.h"

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };

void supervise_block_signals(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(set, forwarded[i]);
	sigprocmask(SIG_BLOCK, set, NULL);
}

static int send_signal(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

void supervise_kill(pid_t pid, int pidfd)
{
	siginfo_t info;
	send_signal(pidfd, SIGKILL);
	while (waitid(P_PID, (id_t)pid, &info, WEXITED) < 0 && errno == EINTR)
		;
}

/* Returns 0 after a message, 1 at the end of the stream. */
static int handle_msg(int sync, struct sbx_watch *w, struct sbx_pty_relay *relay)
{
	struct sbx_msg m;
	int fds[SBX_MSG_MAX_FDS];
	size_t nfds = 0;

	if (msg_recv(sync, &m, fds, &nfds) != 0)
		return 1;
	for (size_t i = (m.type == SBX_MSG_PTY && relay->master < 0); i < nfds; i++)
		close(fds[i]);
	if (m.type == SBX_MSG_PTY && relay->master < 0 && nfds > 0)
		pty_relay_start(relay, fds[0]);
	else
		watch_msg(w, &m);
	return 0;
}

static int loop_end(struct sbx_pty_relay *relay, struct sbx_watch *w)
{
	pty_relay_end(relay);
	/* the command may have changed the caller's terminal through its stdin */
	pty_term_restore();
	watch_free(w);
	return -1;
}

int supervise(const struct sbx_plan *plan, pid_t pid, int pidfd, int sync, const sigset_t *set,
	      struct sbx_proxy *px, struct sbx_dnsstub *dns, struct sbx_pty_relay *relay,
	      struct sbx_outcome *out, struct sbx_err *err)
{
	_cleanup_close_ int sfd = signalfd(-1, set, SFD_CLOEXEC);
	struct sbx_watch w;
	siginfo_t info = { 0 };
	int sync_open = 1;
	struct sbx_askterm asked = { .profile = plan->profile };

	watch_start(&w, plan, plan->timeout_ms, 1, 1);
	if (sfd < 0) {
		supervise_kill(pid, pidfd);
		loop_end(relay, &w);
		return err_sys(err, "supervisor set-up");
	}
	for (;;) {
		struct pollfd p[9] = { { pidfd, POLLIN, 0 }, { sync_open ? sync : -1, POLLIN, 0 },
				       { sfd, POLLIN, 0 }, { px ? proxy_pollfd(px) : -1, POLLIN, 0 },
				       { dns ? dnsstub_pollfd(dns) : -1, POLLIN, 0 } };
		int np = 5 + pty_relay_pollfds(relay, p + 5);
		if (poll(p, (nfds_t)np, watch_poll_ms(&w, now_ms())) < 0 && errno != EINTR) {
			askterm_free(&asked);
			loop_end(relay, &w);
			return err_sys(err, "poll");
		}
		if (p[1].revents & (POLLIN | POLLHUP))
			sync_open = handle_msg(sync, &w, relay) == 0;
		if (p[2].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo == SIGWINCH && relay->master >= 0)
				pty_relay_winch(relay);
			else
				send_signal(pidfd, (int)si.ssi_signo);
		}
		pty_relay_handle(relay, p + 5, np - 5);
		if (px && (p[3].revents & POLLIN))
			proxy_dispatch(px);
		if (px && plan->ask_ms && relay->master >= 0) {
			struct askterm_source src = askterm_proxy(px);
			askterm_step(&asked, &src, relay);
		}
		if (dns && (p[4].revents & POLLIN))
			dnsstub_dispatch(dns);
		/* the timeout, the disk quota, memory on the rlimit fallback */
		if (watch_tick(&w, &pid, 1, now_ms()) != SBX_END_NONE)
			send_signal(pidfd, SIGKILL);
		if (p[0].revents & POLLIN)
			break;
	}
	/* init reports the command's end after it killed and reaped all else
	 * in the sandbox; its own exit (the kernel unmounting the namespace)
	 * is still waited for and reaped here. Returning on the report alone
	 * would leave the orphaned init to whatever reaps orphans: in a
	 * container whose pid 1 never reaps (a CI agent, node, python), a
	 * zombie per run. Measured on a quiet machine, the wait costs nothing
	 * that shows (bench/README.md, fourth round); a cgroup, the writable
	 * layer on disk and the FUSE daemon must go after init in any case. */
	log_trace("host: the sandbox's init has ended");
	while (waitid(P_PID, (id_t)pid, &info, WEXITED) < 0 && errno == EINTR)
		;
	struct pollfd last = { sync, POLLIN, 0 };
	while (sync_open && poll(&last, 1, 0) > 0 && (last.revents & (POLLIN | POLLHUP)))
		sync_open = handle_msg(sync, &w, relay) == 0;
	askterm_free(&asked);
	watch_finish(&w, info.si_code, info.si_status, out);
	loop_end(relay, &w);
	struct rusage ru;
	if (getrusage(RUSAGE_CHILDREN, &ru) == 0 && (uint64_t)ru.ru_maxrss * 1024 > out->peak_memory)
		out->peak_memory = (uint64_t)ru.ru_maxrss * 1024;
	return 0;
}
