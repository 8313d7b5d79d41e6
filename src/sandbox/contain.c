/* contain.c - the one containment list: what the sandbox's processes do to
 * themselves between the host side's GO and the command's exec, one row a
 * step, in the order they happen. The first process (child.c) builds the
 * sandbox and becomes pid 1; pid 1 (init.c) confines itself once it is set
 * up, a session's pid 1 only as far as it can while it still makes each
 * command's namespaces, and a session's command init, made ahead, as a
 * run's pid 1 does; the command inherits that, and its own rows clean up,
 * set its rlimits, check the rest back and exec. Each process walks its
 * rows (enum contain_who): the order is read here and nowhere else. */
#define _GNU_SOURCE
#include "sandbox/contain.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/log.h"
#include "base/syncmsg.h"
#include "base/util.h"
#include "sandbox/caps.h"
#include "sandbox/landlock.h"
#include "sandbox/limits.h"
#include "sandbox/nonroot.h"
#include "term/pty.h"
#include "sandbox/sandbox.h"
#include "sandbox/seccomp.h"
#include "sandbox/tier.h"
#include "sandbox/userns.h"

extern char **environ;

/* Dies with the host side, and takes the whole pid namespace along. */
static int die_with_host(struct contain *c, struct sbx_err *err)
{
	(void)c, (void)err;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	return 0;
}

/* Every inherited fd but c->fd: nothing of the host side stays open. */
static int close_fds(struct contain *c, struct sbx_err *err)
{
	(void)err;
	if (c->fd > 3)
		syscall(SYS_close_range, 3, c->fd - 1, 0);
	syscall(SYS_close_range, c->fd + 1, ~0U, 0);
	return 0;
}

/* The first GO may hand over a root caller's --project DIR, idmapped
 * (idmap.h); open_sources takes it. */
static int wait_go(struct contain *c, struct sbx_err *err)
{
	struct sbx_msg m;
	int fds[SBX_MSG_MAX_FDS];
	size_t n = 0;

	(void)err;
	if (msg_recv(c->fd, &m, fds, &n) != 0 || m.type != SBX_MSG_GO)
		_exit(125); /* the host side is gone */
	for (size_t i = 0; i < n; i++)
		if (i == 0 && c->go_fd < 0)
			c->go_fd = fds[i];
		else
			close(fds[i]);
	log_trace("child: go");
	return 0;
}

/* The first step that needs a capability in the new namespaces. Where
 * they are made but not usable (Ubuntu's AppArmor restriction without
 * sbxrun's profile makes the user namespace without capabilities; a
 * seccomp filter that refuses mount), the host side is told so and takes
 * the landlock tier as where none can be made (tier.h); nothing has been
 * done in them yet. */
static int namespaces_usable(struct contain *c, struct sbx_err *err)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
		return 0;
	if (errno != EPERM && errno != EACCES)
		return err_sys(err, "make the sandbox's mounts private");
	struct sbx_msg m = { .type = SBX_MSG_UNUSABLE, .errnum = errno };
	(void)msg_send(c->fd, &m, NULL, 0);
	_exit(125);
}

/* With all capabilities in our namespace still: counts of its own. */
static int own_ucounts(struct contain *c, struct sbx_err *err)
{
	struct sbx_err uerr = { 0 };

	(void)err;
	if (userns_ucounts_apply(&c->plan->ucounts, &uerr) < 0)
		log_verbose("%s: %s: the sandbox shares the user's inotify and fanotify counts", uerr.msg,
			    strerror(uerr.errnum));
	return 0;
}

/* Before the identity changes: a root caller's child can still enter
 * root's directories as their owner. */
static int open_sources(struct contain *c, struct sbx_err *err)
{
	return mounts_open_sources(c->plan, steal_fd(c->go_fd), &c->ms, err);
}

static int identity(struct contain *c, struct sbx_err *err)
{
	return userns_become(c->plan->uid_in, c->plan->gid_in, err);
}

/* After the host side moved us into our cgroup: it becomes our "/". */
static int cgroup_ns(struct contain *c, struct sbx_err *err)
{
	(void)c;
	return unshare(CLONE_NEWCGROUP) < 0 ? err_sys(err, "a cgroup namespace") : 0;
}

/* The landlock tier's first process keeps its ruleset's fd for init. */
static int close_fds_but_ruleset(struct contain *c, struct sbx_err *err)
{
	int a = c->fd < c->plan->ll->ruleset ? c->fd : c->plan->ll->ruleset;
	int b = c->fd < c->plan->ll->ruleset ? c->plan->ll->ruleset : c->fd;

	(void)err;
	if (a > 3)
		syscall(SYS_close_range, 3, a - 1, 0);
	if (b > a + 1)
		syscall(SYS_close_range, a + 1, b - 1, 0);
	syscall(SYS_close_range, b + 1, ~0U, 0);
	return 0;
}

/* The landlock tier (landlock.h): the domain init and all it starts keep,
 * taken once init has opened what it needs by path (-t's terminal: its
 * peer is opened through the master, which Landlock checks as an open of
 * /dev/pts/N, a directory the domain does not grant). */
static int landlock_domain(struct contain *c, struct sbx_err *err)
{
	if (!c->plan->ll)
		return 0;
	int r = landlock_restrict(c->plan->ll, err);
	close(c->plan->ll->ruleset);
	return r;
}

/* A change of credentials clears the parent-death signal: set again, and
 * the host side checked for having died before that. */
static int still_with_host(struct contain *c, struct sbx_err *err)
{
	struct pollfd hup = { c->fd, POLLHUP, 0 };

	die_with_host(c, err);
	if (poll(&hup, 1, 0) > 0 && (hup.revents & POLLHUP))
		_exit(125);
	return 0;
}

/* Made by a thread beside the child's main thread while it builds the file system. */
static int network(struct contain *c, struct sbx_err *err)
{
	c->net.started = 0;
	if (c->plan->net.own_netns && nethelper_start(&c->plan->net, &c->net, err) < 0)
		return -1;
	log_trace("child: identity, cgroup ns; network set-up started");
	return 0;
}

/* A container's seccomp filter may refuse it: the nested tier keeps the
 * container's name (sandbox/tier.h). */
static int hostname(struct contain *c, struct sbx_err *err)
{
	const char *h = c->plan->hostname;

	if (sethostname(h, strlen(h)) == 0)
		return 0;
	return tier_step_refused(c->plan, TIER_HOSTNAME_KEPT, &c->ms.gave_up, "sethostname", err);
}

static int file_system(struct contain *c, struct sbx_err *err)
{
	if (mounts_setup(c->plan, &c->ms, c->fd, err) < 0)
		return -1;
	log_trace("child: file system built, pivot_root done");
	return 0;
}

/* [sandbox] user: its account and HOME in the sandbox's layer. */
static int user_account(struct contain *c, struct sbx_err *err)
{
	return nonroot_setup(c->plan, err);
}

static int network_join(struct contain *c, struct sbx_err *err)
{
	if (c->net.started && nethelper_join(&c->net, c->fd, err) < 0)
		return -1;
	log_trace("child: network namespace joined");
	return 0;
}

/* The host side keeps the namespace and root fds only where something
 * joins the sandbox later (a session: cp, download, exec); a plain run
 * needs none, and 16 opens and closes less are 0.05 ms of its start. */
static int ready(struct contain *c, struct sbx_err *err)
{
	static const char *const ns[] = { "/proc/self/ns/user", "/proc/self/ns/mnt",
					  "/proc/self/ns/net", "/proc/self/ns/pid",
					  "/proc/self/ns/ipc", "/proc/self/ns/uts",
					  "/proc/self/ns/cgroup" };
	int keep_fds = !c->plan->ll && (c->plan->pid1_loop || c->plan->ws_hook);
	int fds[SBX_MSG_MAX_FDS] = { 0 };
	size_t n = 0;
	/* with what the nested tier gave up (sandbox/tier.h) */
	struct sbx_msg m = { .type = SBX_MSG_READY, .code = (int)c->ms.gave_up };

	for (size_t i = 0; keep_fds && i < ARRAY_SIZE(ns); i++)
		if ((fds[n] = open(ns[i], O_RDONLY | O_CLOEXEC)) >= 0)
			n++;
	if (keep_fds && (fds[n] = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0)
		n++;
	/* the staging directory's fd leaves with them: nothing inside keeps it */
	if (keep_fds && n == SBX_FD_STAGING && c->ms.staging >= 0)
		fds[n++] = steal_fd(c->ms.staging);
	int r = msg_send(c->fd, &m, fds, n);
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	return r < 0 ? err_sys(err, "send the sandbox's fds") : 0;
}

/* The host side fills the workspace (--copy) before the command starts. */
static int workspace_filled(struct contain *c, struct sbx_err *err)
{
	(void)err;
	if (c->plan->ws_hook)
		wait_go(c, err);
	return 0;
}

/* After this the host side can no longer open /proc/PID/ns or root. */
static int non_dumpable(struct contain *c, struct sbx_err *err)
{
	(void)c, (void)err;
	prctl(PR_SET_DUMPABLE, 0);
	return 0;
}

/* A session's pid 1 still makes, for each command, a pid namespace
 * (clone), and in that a mount namespace with a fresh, masked /proc
 * (unshare, mount): CAP_SYS_ADMIN for those, and CAP_SETPCAP so that the
 * command's init can still clear its bounding set (caps_drop_all); nothing
 * else. The filter's prefix allows only those calls (seccomp.h). */
static int caps_ns_maker(struct contain *c, struct sbx_err *err)
{
	/* [sandbox] user: CAP_SETFCAP too, which the kernel asks of whoever
	 * maps the sandbox's root into a user namespace (the user's, nonroot.c) */
	static const unsigned keep[] = { CAP_SYS_ADMIN, CAP_SETPCAP, CAP_SETFCAP };

	return caps_keep_only(keep, ARRAY_SIZE(keep) - !c->plan->user.name, err);
}

static int seccomp_ns_maker(struct contain *c, struct sbx_err *err)
{
	return seccomp_apply_ns_maker(&c->plan->seccomp, c->plan->user.name != NULL, err);
}

/* A session command's init: its own mount namespace with a /proc of its
 * own pid namespace. */
static int new_proc(struct contain *c, struct sbx_err *err)
{
	return mounts_new_proc(c->plan, err);
}

/* A command of [sandbox] user's: a read-only view and a user namespace
 * of its own (nonroot.h); a run's init makes a mount namespace for it,
 * a session's command init has one. Its capabilities there go next. */
static int user_run(struct contain *c, struct sbx_err *err)
{
	return nonroot_enter(c->plan, 1, err);
}

static int user_ahead(struct contain *c, struct sbx_err *err)
{
	return nonroot_enter(c->plan, 0, err);
}

static int caps_dropped(struct contain *c, struct sbx_err *err)
{
	(void)c;
	return caps_drop_all(err);
}

/* The landlock tier has no network namespace: socket families are cut by
 * a filter of their own (TCP is Landlock's too, from ABI 4). */
static int socket_families(struct contain *c, struct sbx_err *err)
{
	return c->plan->ll ? landlock_socket_filter(c->plan->ll, err) : 0;
}

/* no_new_privs and the filter, compiled (or read from the cache) by
 * sandbox_plan; last, so that it need not allow what the steps before use. */
static int filter_loaded(struct contain *c, struct sbx_err *err)
{
	return seccomp_apply(&c->plan->seccomp, err);
}

/* The signals its init handled (and SIGPIPE: the host side may ignore it,
 * the proxy does) back to default, none blocked. */
static int signals_default(struct contain *c, struct sbx_err *err)
{
	sigset_t none;

	(void)err;
	sigemptyset(&none);
	for (size_t i = 0; i < c->nsignals; i++)
		signal(c->signals[i], SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_SETMASK, &none, NULL);
	return 0;
}

static int new_session(struct contain *c, struct sbx_err *err)
{
	(void)c;
	return setsid() < 0 ? err_sys(err, "setsid") : 0;
}

static int controlling_tty(struct contain *c, struct sbx_err *err)
{
	return c->slave >= 0 ? pty_make_controlling(c->slave, err) : 0;
}

static int workdir(struct contain *c, struct sbx_err *err)
{
	if (chdir(c->plan->workdir) < 0)
		return err_sys(err, "%s", c->plan->workdir);
	log_trace("command: set up, confining");
	return 0;
}

/* In the user namespace, with the final uid (RLIMIT_NPROC counts per uid). */
static int rlimits(struct contain *c, struct sbx_err *err)
{
	return limits_apply_child(&c->plan->lim, err);
}

/* The landlock tier: there is no pid namespace whose end takes the command
 * along, so it dies with its init; and a domain below its init's, which
 * neither its signals nor its abstract sockets leave (ABI 6). */
static int landlock_command(struct contain *c, struct sbx_err *err)
{
	if (!c->plan->ll)
		return 0;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	return landlock_scope_command(c->plan->ll, err);
}

/* What the init's caps_dropped and seccomp did, read back from the kernel:
 * no capability left, no_new_privs set, a filter in place when the plan
 * has one. */
static int confined(struct contain *c, struct sbx_err *err)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return err_sys(err, "capabilities: cannot read them");
	for (int i = 0; i < 2; i++)
		if (d[i].effective || d[i].permitted || d[i].inheritable)
			return err_set(err, EPERM, "capabilities: some remain in the command's init");
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return err_set(err, EPERM, "no_new_privs is not set in the command's init");
	if (c->plan->seccomp.len && prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != SECCOMP_MODE_FILTER)
		return err_set(err, EPERM, "seccomp: no filter in the command's init");
	log_trace("command: confined, exec");
	return 0;
}

static int exec(struct contain *c, struct sbx_err *err)
{
	environ = c->plan->envp;
	execvp(c->plan->argv[0], c->plan->argv);
	int e = errno;
	c->code = e == ENOENT ? 127 : 126;
	return err_set(err, e, "%s", c->plan->argv[0]);
}

enum {
	CHILD = CONTAIN_CHILD,
	NS_MAKER = CONTAIN_NS_MAKER,
	AHEAD = CONTAIN_AHEAD,
	INIT = CONTAIN_INIT,
	COMMAND = CONTAIN_COMMAND,
	LL_CHILD = CONTAIN_LL_CHILD,
};

static const struct contain_step {
	const char *name;
	unsigned who;
	int (*run)(struct contain *c, struct sbx_err *err);
} steps[] = {
	/* The first process, in its new user, mount, pid, ipc and uts
	 * namespaces; then it becomes pid 1 (init.c), which hides the
	 * caller's command line, takes its signals through a signalfd and
	 * makes the terminal (init's own work, not rows) before its rows
	 * below; a session's pid 1 takes the NS_MAKER rows instead. */
	{ "dies with the host side", CHILD | LL_CHILD, die_with_host },
	/* The landlock tier's first process (no namespace could be made) is
	 * a plain child of the host side, in the machine's own file system: the
	 * child's rows that need no namespace; its init takes the domain. */
	{ "inherited fds closed", CHILD, close_fds },
	{ "inherited fds closed, the landlock ruleset kept", LL_CHILD, close_fds_but_ruleset },
	{ "GO from the host side (uid and gid maps written, cgroup joined)", CHILD | LL_CHILD, wait_go },
	{ "a mount in its namespaces: usable, not only made", CHILD, namespaces_usable },
	{ "inotify and fanotify counts of its own", CHILD, own_ucounts },
	{ "host sources opened", CHILD, open_sources },
	{ "the mapped uid and gid", CHILD, identity },
	{ "a cgroup namespace", CHILD, cgroup_ns },
	{ "still dies with the host side", CHILD, still_with_host },
	{ "the network namespace started beside", CHILD, network },
	{ "hostname", CHILD, hostname },
	{ "file system, pivot_root", CHILD, file_system },
	{ "the sandbox's user: its account, HOME ([sandbox] user)", CHILD, user_account },
	{ "the network namespace joined", CHILD, network_join },
	{ "READY to the host side", CHILD | LL_CHILD, ready },
	{ "the workspace filled (--copy)", CHILD | LL_CHILD, workspace_filled },
	{ "non-dumpable", CHILD | LL_CHILD, non_dumpable },
	/* A session's pid 1 keeps what it needs to make each command's
	 * namespaces; should this fail, it still runs, and every command
	 * fails with the reason (session_init_loop). */
	{ "capabilities: CAP_SYS_ADMIN, CAP_SETPCAP only (and CAP_SETFCAP: [sandbox] user)", NS_MAKER, caps_ns_maker },
	{ "no_new_privs, seccomp with the namespace prefix", NS_MAKER, seccomp_ns_maker },
	/* A session's command init, made ahead in its own pid namespace:
	 * it fails only when the request comes (there is no one to tell
	 * before), then walks init_run as a run's pid 1 does, less what it
	 * did here. */
	{ "inherited fds closed", AHEAD, close_fds },
	{ "its own /proc", AHEAD, new_proc },
	{ "the user's read-only view, its user namespace ([sandbox] user)", AHEAD, user_ahead },
	/* pid 1 is set up: from here on it starts the command, forwards
	 * signals and reaps, which needs no capability and nothing the filter
	 * denies. The command inherits these and checks them back. */
	{ "the landlock domain (the landlock tier)", INIT, landlock_domain },
	{ "the user's mount namespace, read-only view, user namespace ([sandbox] user)", INIT, user_run },
	{ "capabilities dropped", INIT | AHEAD, caps_dropped },
	{ "socket families (the landlock tier)", INIT, socket_families },
	{ "no_new_privs, seccomp", INIT | AHEAD, filter_loaded },
	/* The command, cloned by its init (start_child). Its fds are closed
	 * later than the other processes' (first thing there): the terminal's
	 * peer goes onto 0-2 first, and setsid must come before that. */
	{ "signals back to default", COMMAND, signals_default },
	{ "a session of its own", COMMAND, new_session },
	{ "controlling terminal", COMMAND, controlling_tty },
	{ "inherited fds closed", COMMAND, close_fds },
	{ "working directory", COMMAND, workdir },
	{ "rlimits", COMMAND, rlimits },
	{ "dies with its init, a domain of its own (the landlock tier)", COMMAND, landlock_command },
	{ "capabilities, no_new_privs and seccomp checked", COMMAND, confined },
	{ "exec", COMMAND, exec },
};

int contain_walk(struct contain *c, enum contain_who who, struct sbx_err *err)
{
	c->code = 125;
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++)
		if ((steps[i].who & who) && steps[i].run(c, err) < 0) {
			log_trace("contain: %s: failed", steps[i].name);
			return -1;
		}
	return 0;
}
