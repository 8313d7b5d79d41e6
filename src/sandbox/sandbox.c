/* sandbox.c - one sandbox from plan (plan.c) to result. sandbox_start
 * clones the child (child.c) into new namespaces, writes its id maps, moves
 * it into its cgroup and waits for its fds; sandbox_run then starts the
 * DNS stub and the proxy behind the sockets it handed over and supervises
 * it to the end (supervise.c). */
#define _GNU_SOURCE
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/apparmor.h"
#include "base/inroot.h"
#include "base/log.h"
#include "base/syncmsg.h"
#include "base/util.h"
#include "gateway/gateway.h"
#include "net/dnsstub.h"
#include "net/netns.h"
#include "net/proxy.h"
#include "sandbox/child.h"
#include "sandbox/idmap.h"
#include "term/pty.h"
#include "sandbox/supervise.h"
#include "sandbox/tier.h"
#include "sandbox/userns.h"

/* clone3, or clone where a container's seccomp filter answers clone3
 * ENOSYS (Docker's default does, so that libc falls back to clone, whose
 * flags it can inspect). */
static pid_t clone_sandbox(unsigned long ns, int *pidfd, int *no_userns, struct sbx_err *err)
{
	const unsigned long flags = ns | CLONE_PIDFD;
	struct clone_args args = {
		.flags = flags, .pidfd = (uint64_t)(uintptr_t)pidfd, .exit_signal = SIGCHLD,
	};
	pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));

	if (pid < 0 && errno == ENOSYS)
		pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, pidfd, NULL, 0);
	if (pid < 0) {
		err_sys(err, ns ? "create the sandbox's namespaces" : "start the sandbox");
		if (ns && (errno == EPERM || errno == ENOSPC || errno == EINVAL || errno == ENOSYS)) {
			tier_no_userns(err);
			*no_userns = 1;
		}
	}
	return pid;
}

/* The plan the landlock tier's processes read: its domain, the private
 * workspace as working directory, HOME and PWD, tmp as TMPDIR, and the
 * proxy's port where the usual one was taken. A JVM takes user.home from
 * the passwd entry, not HOME: the caller's home, which it may not read;
 * JAVA_TOOL_OPTIONS makes it HOME too, so that Maven and Gradle find their
 * files there (toolconf.h) and write their caches below. */
static struct sbx_plan *landlock_plan(const struct sbx_plan *plan, const struct sbx_landlock *ll)
{
	struct sbx_plan *p = xmalloc(sizeof(*p));
	size_t n = 0, i = 0;
	char usual[32], port[32];

	*p = *plan;
	p->ll = ll;
	p->workdir = ll->ws;
	while (plan->envp && plan->envp[n])
		n++;
	const char *jto = "";
	p->envp = xcalloc(n + 5, sizeof(char *));
	snprintf(usual, sizeof(usual), "%s:%d", SBX_PROXY_ADDR, SBX_PROXY_PORT);
	snprintf(port, sizeof(port), "%s:%u", SBX_PROXY_ADDR, (unsigned)ll->port);
	for (size_t k = 0; k < n; k++) {
		const char *e = plan->envp[k], *at = strstr(e, usual);
		if (!strncmp(e, "JAVA_TOOL_OPTIONS=", 18))
			jto = e + 18;
		if (!strncmp(e, "HOME=", 5) || !strncmp(e, "TMPDIR=", 7) || !strncmp(e, "PWD=", 4) ||
		    !strncmp(e, "JAVA_TOOL_OPTIONS=", 18))
			continue;
		p->envp[i++] = ll->port && at ? xasprintf("%.*s%s%s", (int)(at - e), e, port,
							   at + strlen(usual)) : xstrdup(e);
	}
	p->envp[i++] = xasprintf("HOME=%s", ll->ws);
	p->envp[i++] = xasprintf("PWD=%s", ll->ws);
	p->envp[i++] = xasprintf("TMPDIR=%s", ll->tmp);
	p->envp[i++] = strpbrk(ll->ws, " \t\n'\"\\") ? xasprintf("JAVA_TOOL_OPTIONS=%s", jto)
		: xasprintf("JAVA_TOOL_OPTIONS=%s%s-Duser.home=%s", jto, jto[0] ? " " : "", ll->ws);
	return p;
}

static void landlock_plan_free(struct sbx_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; p->envp && p->envp[i]; i++)
		free(p->envp[i]);
	free(p->envp);
	free(p);
}

/* No user namespace (err says why), and the plan accepts the landlock
 * tier: the domain and the private directory, then a plain child, which
 * confines itself (child_landlock_main). Orphans of the command come to
 * this process, a subreaper, to be ended (landlock_reap_all). */
static int start_landlock(const struct sbx_plan *plan, struct sbx_sandbox *sb, int sync,
			  struct sbx_err *err)
{
	struct sbx_err cause = *err;

	if (plan->user.name) /* nonroot.h: a user namespace of its own, which this tier has not */
		return err_set(err, 0, "user = %s: the landlock tier has no user namespace (%.400s), "
			       "so no user beside root; leave [sandbox] user out here", plan->user.name, cause.msg);
	if (landlock_prepare(plan, sb->ll, err) < 0) {
		char msg[sizeof(err->msg)];
		snprintf(msg, sizeof(msg), "%s", err->msg);
		snprintf(err->msg, sizeof(err->msg), "%s (%.600s)", msg, cause.msg);
		snprintf(err->hint, sizeof(err->hint), "%s", cause.hint);
		return -1;
	}
	sb->ll_plan = landlock_plan(plan, sb->ll);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	memset(err, 0, sizeof(*err));
	sb->proxy_fd = steal_fd(sb->ll->door);
	sb->pid = clone_sandbox(0, &sb->pidfd, &(int){ 0 }, err);
	if (sb->pid == 0)
		child_landlock_main(sb->ll_plan, sync);
	sb->gave_up |= TIER_LANDLOCK;
	return sb->pid < 0 ? -1 : 0;
}

/* SBX_MSG_FUSE: the child mounted the root's FUSE device; serve it. */
static int start_fuse(const struct sbx_plan *plan, struct sbx_sandbox *sb, int *fds, size_t n,
		      struct sbx_err *err)
{
	int r = 0;

	if (n != 3 || !plan->fuse_bin || sb->fuse.pid > 0)
		r = err_set(err, EPROTO, "sandbox setup: unexpected FUSE message");
	else
		r = fuselayer_spawn(plan->fuse_bin, fds[1], fds[2], fds[0], plan->uid_in, plan->gid_in,
				    &sb->fuse, err);
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	return r;
}

/* A later step refused: where AppArmor restricts user namespaces, the
 * hint names its fix (base/apparmor.c). */
static void userns_hint(struct sbx_err *err)
{
	char hint[sizeof(err->hint)];

	if ((err->errnum == EPERM || err->errnum == EACCES) && aa_userns_hint_self(hint, sizeof(hint)))
		err_hint(err, "%s", hint);
}

/* Host side, after clone: id maps, GO (with a root caller's --project DIR,
 * idmapped, when there is one), then wait for the child's fds. 1 (err
 * says which step) where the namespaces were made but are not usable: the
 * maps' write or the child's first mount refused (contain.c). */
static int start_child(const struct sbx_plan *plan, struct sbx_sandbox *sb, int project_fd,
		       struct sbx_err *err)
{
	struct sbx_msg m = { .type = SBX_MSG_GO };
	size_t n = 0;
	int r;

	log_trace("host: cloned");
	if (!plan->ll && userns_write_maps(sb->pid, plan->uid_in, plan->host_uid, plan->gid_in, plan->host_gid, err) < 0)
		return err->errnum == EPERM || err->errnum == EACCES ? 1 : -1;
	/* after the clone: no process of the sandbox ever held the CA's key */
	if (plan->cred && credplan_ca(plan->cred, plan->img.rootfs_fd, err) < 0)
		return -1;
	if (msg_send(sb->sync, &m, project_fd >= 0 ? &project_fd : NULL, project_fd >= 0) < 0)
		return err_sys(err, "start the sandbox");
	while ((r = msg_recv(sb->sync, &m, sb->fds.fd, &n)) == 0 &&
	       (m.type == SBX_MSG_PROXY || m.type == SBX_MSG_DNS || m.type == SBX_MSG_FUSE)) {
		/* start_fuse takes the fds of a FUSE message */
		if (m.type == SBX_MSG_FUSE) {
			if (start_fuse(plan, sb, sb->fds.fd, n, err) < 0)
				return -1;
			n = 0;
			continue;
		}
		int *keep = m.type == SBX_MSG_PROXY ? &sb->proxy_fd : &sb->dns_fd;
		for (size_t i = 0; i < n; i++)
			if (*keep < 0)
				*keep = sb->fds.fd[i];
			else
				close(sb->fds.fd[i]);
		n = 0;
	}
	sb->fds.n = n;
	log_trace("host: sandbox ready");
	if (r != 0)
		return err_set(err, 0, "the sandbox died while being set up");
	if (m.type == SBX_MSG_UNUSABLE) {
		err_set(err, m.errnum, "a mount in the sandbox's new namespaces");
		return 1;
	}
	if (m.type == SBX_MSG_ERROR) {
		msg_error(&m, err);
		err_wrap(err, "sandbox setup");
		if (fuselayer_ended(&sb->fuse))
			err_hint(err, "fuse-overlayfs, which serves the writable layer, ended early; "
				 "'sbxrun -v' shows its messages");
		else
			userns_hint(err);
		return -1;
	}
	if (m.type != SBX_MSG_READY)
		return err_set(err, EPROTO, "sandbox setup: unexpected message %d", m.type);
	sb->gave_up |= (unsigned)m.code;
	tier_announce(plan, sb->gave_up);
	return 0;
}

/* One try: the sandbox's namespaces (unless unusable: they were made and
 * could not be used, err says why), else the landlock tier where the plan
 * accepts it; then its cgroup and its set-up. 1 where the namespaces
 * turned out unusable (start_child). */
static int start_try(const struct sbx_plan *plan, struct sbx_sandbox *sb, int project_fd,
		     int unusable, struct sbx_err *err)
{
	int sv[2], no_userns = unusable;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return err_sys(err, "socketpair");
	/* the network namespace (unless egress = full) comes from net_start */
	sb->pid = unusable ? -1 : clone_sandbox(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID |
						CLONE_NEWIPC | CLONE_NEWUTS, &sb->pidfd, &no_userns, err);
	if (sb->pid < 0 && no_userns && tier_landlock_accepted(plan, err))
		start_landlock(plan, sb, sv[1], err);
	if (sb->pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (sb->ll_plan)
		plan = sb->ll_plan;
	else if (sb->pid == 0) {
		close(sv[0]);
		child_main(plan, sv[1]);
	}
	close(sv[1]);
	sb->sync = sv[0];
	if (!plan->pid1_loop)
		limits_kill_as_group(&plan->lim);
	if (limits_attach(&plan->lim, sb->pid, err) < 0)
		return -1;
	return start_child(plan, sb, project_fd, err);
}

int sandbox_start(const struct sbx_plan *plan, struct sbx_sandbox *sb, struct sbx_err *err)
{
	_cleanup_close_ int project_fd = -1;

	memset(sb, 0, sizeof(*sb));
	sb->pidfd = sb->sync = sb->proxy_fd = sb->dns_fd = sb->fuse.pidfd = -1;
	sb->ll = plan->ll_state;
	/* root's sandbox is another uid: DIR's owner is shown as that one */
	if (plan->project.src && geteuid() == 0 && (project_fd = idmap_project(plan, err)) < 0)
		return -1;
	int r = start_try(plan, sb, project_fd, 0, err);
	if (r == 1) { /* made but not usable: as if none could be made */
		supervise_kill(sb->pid, sb->pidfd);
		close(sb->sync);
		close(sb->pidfd);
		sb->sync = sb->pidfd = -1;
		tier_userns_unusable(err);
		sb->gave_up |= TIER_UNUSABLE;
		r = start_try(plan, sb, -1, 1, err);
	}
	if (r != 0) {
		if (sb->pid > 0)
			supervise_kill(sb->pid, sb->pidfd);
		sandbox_release(sb);
		return -1;
	}
	return 0;
}

void sandbox_release(struct sbx_sandbox *sb)
{
	for (size_t i = 0; i < sb->fds.n; i++)
		close(sb->fds.fd[i]);
	sb->fds.n = 0;
	if (sb->sync >= 0)
		close(sb->sync);
	if (sb->pidfd >= 0)
		close(sb->pidfd);
	if (sb->proxy_fd >= 0)
		close(sb->proxy_fd);
	if (sb->dns_fd >= 0)
		close(sb->dns_fd);
	sb->sync = sb->pidfd = sb->proxy_fd = sb->dns_fd = -1;
	if (sb->ll_plan) { /* what is left of the command, then its workspace */
		landlock_reap_all();
		prctl(PR_SET_CHILD_SUBREAPER, 0);
	}
	if (sb->ll) /* the private directory stays for --out: sandbox_plan_free removes it */
		landlock_close(sb->ll);
	landlock_plan_free(sb->ll_plan);
	sb->ll_plan = NULL;
	/* after the sandbox ended: nothing uses the layer any more */
	fuselayer_stop(&sb->fuse);
}

int sandbox_proxy(const struct sbx_plan *plan, int door, struct sbx_proxy **px, struct sbx_err *err)
{
	struct sbx_proxy_conf conf = {
		.profile_name = plan->profile, .hosts = &plan->net.hosts,
		.events_fd = plan->events_fd, .queue_when_full = true,
		.cred = plan->cred ? plan->cred->cr : NULL, .tlsca = plan->cred ? plan->cred->ca : NULL,
	};
	/* the image's sets, for the gateway's copy of the allow list (every
	 * hop must pass it) and its apt hosts */
	struct hostmatch_sets hs = plan_image_sets(&plan->img);
	struct sbx_gateway_conf gc = plan->gw;
	struct rlimit rl;
	struct sbx_policy pol = { 0 };
	struct sbx_err perr;

	/* the administrator's ceiling, held by the proxy so that a change to
	 * it (proxy_set_policy) is measured against the same */
	conf.sets = hs;
	if (policy_load(&pol, &perr) == 0)
		conf.policy = &pol;

	/* each relayed connection holds six fds (two sockets, two pipes) */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	gc.profile_name = plan->profile;
	gc.sets = &hs;
	gc.events_fd = plan->events_fd;
	if (gateway_local_for(&gc, &conf.local, err) < 0)
		return -1;
	/* the door and the gateway are the proxy's now: it closes and frees them */
	int fd = dup(door);
	if (fd < 0) {
		if (conf.local.host)
			conf.local.free(conf.local.ctx);
		return err_sys(err, "dup");
	}
	int r = proxy_new(&conf, fd, px, err);
	policy_free(&pol);
	return r;
}

int sandbox_dns(const struct sbx_plan *plan, int sock, struct sbx_dnsstub **dns, struct sbx_err *err)
{
	/* the socket is the stub's now: it closes it */
	int fd = dup(sock);
	return fd < 0 ? err_sys(err, "dup")
		: dnsstub_new(fd, plan->profile, plan->hostname, plan->events_fd, dns, err);
}

/* How the limits were enforced (what ended the run, the watcher said). */
static void limits_result(const struct sbx_plan *plan, struct sbx_result *res)
{
	static const enum sbx_key keys[] = { SBX_K_MEMORY, SBX_K_PIDS, SBX_K_CPUS, SBX_K_FILE_SIZE,
					     SBX_K_OPEN_FILES };

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		res->mechanism[keys[i]] = limits_mechanism(&plan->lim, keys[i]);
}

/* plan->ws_hook with the workspace, then the command may start. */
static int run_ws_hook(const struct sbx_plan *plan, struct sbx_sandbox *sb, struct sbx_err *err)
{
	struct sbx_msg m = { .type = SBX_MSG_GO };

	_cleanup_close_ int ws = -1;
	if (sb->ll_plan) { /* the landlock tier's private workspace */
		if ((ws = open(sb->ll->ws, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
			return err_sys(err, "the sandbox's workspace '%s'", sb->ll->ws);
	} else if (sb->fds.n != SBX_FD__COUNT || !plan->workspace)
		return err_set(err, 0, "the sandbox's workspace is not available (--copy, --out)");
	else
		ws = inroot_open(sb->fds.fd[SBX_FD_ROOT], plan->workspace, O_PATH | O_DIRECTORY, 0, err);
	if (ws < 0 || plan->ws_hook(plan->ws_hook_arg, ws, err) < 0)
		return -1;
	return msg_send(sb->sync, &m, NULL, 0) < 0 ? err_sys(err, "start the command") : 0;
}

int sandbox_run(const struct sbx_plan *plan, struct sbx_result *res, struct sbx_err *err)
{
	struct sbx_sandbox sb;
	sigset_t set;

	memset(res, 0, sizeof(*res));
	res->mechanism[SBX_K_TIMEOUT] = plan->timeout_ms ? "wall-clock" : "none";
	res->mechanism[SBX_K_DISK] = sandbox_storage_name(plan);
	supervise_block_signals(&set);
	/* the caller's terminal, and what of the output reaches it (pty.c) */
	struct sbx_pty_relay relay;
	pty_term_save();
	pty_relay_init(&relay, plan->raw_tty);
	if (!plan->tty && pty_relay_divert(&relay, err) < 0)
		return -1;
	int started = sandbox_start(plan, &sb, err);
	pty_relay_undivert(&relay);
	if (started < 0) {
		pty_relay_end(&relay);
		return -1;
	}
	if (sb.ll_plan) /* the landlock tier's workspace is the machine's own disk */
		res->mechanism[SBX_K_DISK] = "none";
	struct sbx_proxy *px = NULL;
	struct sbx_dnsstub *dns = NULL;
	if ((plan->ws_hook && run_ws_hook(plan, &sb, err) < 0) ||
	    (sb.proxy_fd >= 0 && sandbox_proxy(plan, sb.proxy_fd, &px, err) < 0) ||
	    (sb.dns_fd >= 0 && sandbox_dns(plan, sb.dns_fd, &dns, err) < 0)) {
		supervise_kill(sb.pid, sb.pidfd);
		pty_relay_end(&relay);
		proxy_free(px);
		sandbox_release(&sb);
		return -1;
	}
	/* [network] ask: someone to ask where the caller's terminal is (askterm.c) */
	if (px && plan->ask_ms && plan->tty && isatty(0) && isatty(2))
		proxy_set_ask(px, plan->ask_ms);
	int r = supervise(plan, sb.pid, sb.pidfd, sb.sync, &set, px, dns, &relay, &res->out, err);
	log_trace("host: supervised");
	dnsstub_free(dns);
	if (px) {
		struct sbx_proxy_counters st;
		proxy_counters(px, &st);
		res->egress_allowed = st.allowed;
		res->egress_refused = st.refused;
		res->egress_bytes_up = st.bytes_up;
		res->egress_bytes_down = st.bytes_down;
		proxy_free(px);
	}
	res->gave_up = sb.gave_up;
	sandbox_release(&sb);
	limits_result(plan, res);
	return r;
}
