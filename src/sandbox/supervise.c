/* supervise.c - the host side stays alive as supervisor: it forwards
 * signals to the sandbox's init, ends the sandbox at the timeout by killing
 * pid 1 (which ends every process in its pid namespace), and collects how
 * the command ended. */
#define _GNU_SOURCE
#include "sandbox/supervise.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/syncmsg.h"
#include "base/util.h"
#include "net/dnsstub.h"
#include "net/proxy.h"
#include "sandbox/diskuse.h"
#include "sandbox/memacct.h"
#include "sandbox/pty.h"

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };

void supervise_block_signals(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(set, forwarded[i]);
	sigprocmask(SIG_BLOCK, set, NULL);
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
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

static int make_timer(uint64_t ms, int repeat)
{
	struct timespec t = { .tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000 };
	struct itimerspec its = { .it_value = t };
	if (repeat)
		its.it_interval = t;
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (fd >= 0 && timerfd_settime(fd, 0, &its, NULL) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Returns 0 after a message, 1 at the end of the stream. */
static int handle_msg(int sync, struct sbx_result *res, struct sbx_pty_relay *relay)
{
	struct sbx_msg m;
	int fds[SBX_MSG_MAX_FDS];
	size_t nfds = 0;

	if (msg_recv(sync, &m, fds, &nfds) != 0)
		return 1;
	for (size_t i = (m.type == SBX_MSG_PTY && relay->master < 0); i < nfds; i++)
		close(fds[i]);
	if (m.type == SBX_MSG_PTY && relay->master < 0 && nfds > 0) {
		pty_relay_start(relay, fds[0]);
	} else if (m.type == SBX_MSG_ERROR) {
		res->exit_status = 125;
		snprintf(res->message, sizeof(res->message), "%s%s%s", m.text, m.errnum ? ": " : "",
			 m.errnum ? strerror(m.errnum) : "");
	} else if (m.type == SBX_MSG_EXIT) {
		res->kind = m.kind;
		res->code = m.code;
		res->peak_memory = (uint64_t)(m.peak_kb > 0 ? m.peak_kb : 0) * 1024;
	} else if (m.type == SBX_MSG_EXEC_FAILED) {
		res->kind = 0;
		res->exit_status = m.code;
		snprintf(res->message, sizeof(res->message), "%s%s%s", m.text,
			 m.errnum && m.code == 125 ? ": " : "", m.errnum && m.code == 125 ? strerror(m.errnum) : "");
	}
	return 0;
}

static void finish(const siginfo_t *info, struct sbx_result *res)
{
	if (res->timed_out)
		res->exit_status = 124;
	else if (res->kind == SBX_EXIT_CODE)
		res->exit_status = res->code;
	else if (res->kind == SBX_EXIT_SIGNAL)
		res->exit_status = 128 + res->code;
	else if (!res->message[0]) {
		/* init ended without a word: a limit killed it (memory.oom.group
		 * takes init too; sandbox_run names the limit), or it crashed */
		res->exit_status = info->si_code == CLD_EXITED ? info->si_status : 128 + info->si_status;
		res->init_died = 1;
	}
}

/* Memory on the rlimit fallback: sbxrun's own sum of the sandbox's memory;
 * the timer is re-armed by what the sample cost and how close the limit is. */
static int over_memory(struct sbx_memacct *acct, pid_t pid, int mfd)
{
	uint64_t ticks, next;
	if (read(mfd, &ticks, sizeof(ticks)) < 0)
		return 0;
	if (memacct_check(acct, &pid, 1, &next))
		return 1;
	struct itimerspec its = { .it_value = { (time_t)(next / 1000), (long)(next % 1000) * 1000000 } };
	timerfd_settime(mfd, 0, &its, NULL);
	return 0;
}

/* storage = disk: sbxrun's own accounting of the writable layer; the timer
 * is re-armed by what the walk cost and how close the quota is. */
static int over_quota(const struct sbx_plan *plan, int dfd)
{
	uint64_t ticks, t0 = now_ms();
	struct sbx_diskuse du;
	if (read(dfd, &ticks, sizeof(ticks)) < 0)
		return 0;
	if (diskuse_check(plan->run_lock, plan->host_uid, plan->host_gid, plan->cfg->disk, &du)) {
		if (du.errnum)
			log_warn("disk quota: cannot %s: %s; the sandbox is ended", du.what, strerror(du.errnum));
		return 1;
	}
	uint64_t next = diskuse_next_ms(now_ms() - t0, du.bytes, plan->cfg->disk);
	struct itimerspec its = { .it_value = { (time_t)(next / 1000), (long)(next % 1000) * 1000000 } };
	timerfd_settime(dfd, 0, &its, NULL);
	return 0;
}

int supervise(const struct sbx_plan *plan, pid_t pid, int pidfd, int sync, const sigset_t *set,
	      struct sbx_proxy *px, struct sbx_dnsstub *dns, struct sbx_pty_relay *relay,
	      struct sbx_result *res, struct sbx_err *err)
{
	_cleanup_close_ int sfd = signalfd(-1, set, SFD_CLOEXEC);
	_cleanup_close_ int tfd = plan->cfg->timeout_ms ? make_timer(plan->cfg->timeout_ms, 0) : -1;
	_cleanup_close_ int dfd = plan->storage == SBX_STORAGE_DISK && plan->cfg->disk && plan->run_dir
		? make_timer(50, 0) : -1;
	_cleanup_close_ int mfd = limits_memory_accounted(&plan->lim) && plan->cfg->memory
		? make_timer(MEMACCT_FIRST_MS, 0) : -1;
	struct sbx_memacct acct;
	uint64_t start = now_ms();
	siginfo_t info = { 0 };
	int sync_open = 1;

	if (sfd < 0 || (plan->cfg->timeout_ms && tfd < 0)) {
		supervise_kill(pid, pidfd);
		pty_relay_end(relay);
		pty_term_restore();
		return err_sys(err, "supervisor set-up");
	}
	memacct_init(&acct, plan->cfg->memory);
	for (;;) {
		struct pollfd p[10] = { { pidfd, POLLIN, 0 }, { sync_open ? sync : -1, POLLIN, 0 },
					{ sfd, POLLIN, 0 }, { tfd, POLLIN, 0 }, { dfd, POLLIN, 0 },
					{ px ? proxy_pollfd(px) : -1, POLLIN, 0 },
					{ dns ? dnsstub_pollfd(dns) : -1, POLLIN, 0 }, { mfd, POLLIN, 0 } };
		int np = 8 + pty_relay_pollfds(relay, p + 8);
		if (poll(p, (nfds_t)np, -1) < 0 && errno != EINTR) {
			pty_relay_end(relay);
			pty_term_restore();
			memacct_free(&acct);
			return err_sys(err, "poll");
		}
		if (p[1].revents & (POLLIN | POLLHUP))
			sync_open = handle_msg(sync, res, relay) == 0;
		if (p[2].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo == SIGWINCH && relay->master >= 0)
				pty_relay_winch(relay);
			else
				send_signal(pidfd, (int)si.ssi_signo);
		}
		pty_relay_handle(relay, p + 8, np - 8);
		if (px && (p[5].revents & POLLIN))
			proxy_dispatch(px);
		if (dns && (p[6].revents & POLLIN))
			dnsstub_dispatch(dns);
		if (dfd >= 0 && (p[4].revents & POLLIN) && over_quota(plan, dfd)) {
			snprintf(res->reason, sizeof(res->reason), "disk");
			send_signal(pidfd, SIGKILL);
			close(dfd);
			dfd = -1;
		}
		/* not once the command has ended: its init is ending all else */
		if (mfd >= 0 && (p[7].revents & POLLIN)) {
			int over = !res->kind && over_memory(&acct, pid, mfd);
			if (over) {
				snprintf(res->reason, sizeof(res->reason), "oom");
				send_signal(pidfd, SIGKILL);
			}
			if (over || res->kind) {
				close(mfd);
				mfd = -1;
			}
		}
		if (tfd >= 0 && (p[3].revents & POLLIN)) {
			res->timed_out = 1;
			send_signal(pidfd, SIGKILL);
			close(tfd);
			tfd = -1;
		}
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
		sync_open = handle_msg(sync, res, relay) == 0;
	pty_relay_end(relay);
	/* the command may have changed the caller's terminal through its stdin */
	pty_term_restore();
	if (acct.peak > res->peak_memory)
		res->peak_memory = acct.peak;
	memacct_free(&acct);
	res->duration_ms = now_ms() - start;
	struct rusage ru;
	if (getrusage(RUSAGE_CHILDREN, &ru) == 0 && (uint64_t)ru.ru_maxrss * 1024 > res->peak_memory)
		res->peak_memory = (uint64_t)ru.ru_maxrss * 1024;
	finish(&info, res);
	return 0;
}
