/* session_init.c - inside a session, pid 1 reaps and, on the supervisor's
 * request, clones each command's own init into a new pid namespace below
 * the session's (only a process inside can: a pid namespace is nested
 * under the creator's active one), ahead of the command, and hands it to
 * the supervisor. The request reaches that init as the control JSON with
 * the command's stdio and the end of a socket pair on which the command's
 * init reports to the supervisor. Once set up, pid 1 keeps only what that
 * takes (its rows of the containment list, contain.c: CAP_SYS_ADMIN,
 * CAP_SETPCAP, and a filter that lets it make those namespaces and mount a
 * /proc, nothing more); each command's init drops the rest before its
 * request comes. */
#define _GNU_SOURCE
#include "session/session_init.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "base/syncmsg.h"
#include "base/util.h"
#include "sandbox/contain.h"
#include "sandbox/env.h"
#include "sandbox/init.h"
#include "sandbox/nonroot.h"
#include "session/control.h"

static struct json_object *get(struct json_object *req, const char *key, json_type t)
{
	struct json_object *v;
	return json_object_object_get_ex(req, key, &v) && json_object_is_type(v, t) ? v : NULL;
}

static int plan_argv(struct json_object *req, char ***argv, struct sbx_err *err)
{
	struct json_object *cmd = get(req, "cmd", json_type_array);
	size_t n = cmd ? json_object_array_length(cmd) : 0;

	if (n == 0 || n > 4096)
		return err_set(err, 0, "request: 'cmd' must be a non-empty array of strings");
	*argv = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		struct json_object *a = json_object_array_get_idx(cmd, i);
		if (!json_object_is_type(a, json_type_string))
			return err_set(err, 0, "request: 'cmd' must be a non-empty array of strings");
		(*argv)[i] = xstrdup(json_object_get_string(a));
	}
	return 0;
}

static int plan_env(const struct sbx_plan *plan, int as_user, struct json_object *req, char ***envp,
		    struct sbx_err *err)
{
	struct json_object *v = get(req, "env", json_type_array);
	struct sbx_envv e = { 0 };

	for (char **p = nonroot_env(plan, as_user); p && *p; p++)
		envv_set(&e, *p);
	for (size_t i = 0; v && i < json_object_array_length(v); i++) {
		const char *kv = json_object_get_string(json_object_array_get_idx(v, i));
		if (!kv || !strchr(kv, '=') || kv[0] == '=') {
			*envp = e.v;
			return err_set(err, 0, "request: env entries are KEY=VALUE");
		}
		envv_set(&e, kv);
	}
	*envp = e.v ? e.v : xcalloc(1, sizeof(char *));
	return 0;
}

/* The command's plan: the session's, with this request's command, user
 * (the session's [sandbox] user or root), env, workdir and terminal. */
static int command_plan(const struct sbx_plan *plan, struct json_object *req, struct sbx_plan *cp,
			char ***argv, char ***envp, struct sbx_err *err)
{
	struct json_object *v = get(req, "user", json_type_string);
	int as_user;

	if (nonroot_pick(plan, v ? json_object_get_string(v) : NULL, &as_user, err) < 0 ||
	    plan_argv(req, argv, err) < 0 || plan_env(plan, as_user, req, envp, err) < 0)
		return -1;
	*cp = *plan;
	cp->as_user = as_user;
	cp->argv = *argv;
	cp->envp = *envp;
	cp->pid1_loop = NULL;
	if ((v = get(req, "workdir", json_type_string))) {
		if (json_object_get_string(v)[0] != '/')
			return err_set(err, 0, "request: workdir is not an absolute path");
		cp->workdir = (char *)json_object_get_string(v);
	}
	cp->tty = (v = get(req, "tty", json_type_boolean)) && json_object_get_boolean(v);
	memset(&cp->ws, 0, sizeof(cp->ws));
	if ((v = get(req, "rows", json_type_int)))
		cp->ws.ws_row = (unsigned short)json_object_get_int(v);
	if ((v = get(req, "cols", json_type_int)))
		cp->ws.ws_col = (unsigned short)json_object_get_int(v);
	return 0;
}

/* A command's init made ahead of the request: already in its own pid
 * namespace, with its own mount namespace and a fresh, masked /proc, so
 * that a request pays none of that (bench/README.md: it was a third of a
 * session command's latency). It waits on chan for the request. */
struct prepared {
	pid_t pid;
	int pidfd;
	int chan; /* our end: the request, its stdio and report socket go here */
};

static __attribute__((noreturn)) void prepared_main(const struct sbx_plan *plan, int chan)
{
	_cleanup_strv_ char **argv = NULL, **envp = NULL;
	struct sbx_err err = { 0 }, mnt_err = { 0 };
	struct json_object *req = NULL;
	struct contain c = { .plan = plan, .fd = chan, .slave = -1 };
	struct sbx_plan cp;
	int fds[4];
	size_t n = 0;

	/* Its rows of the containment list: fds closed, its own /proc, then
	 * what every command of the session drops anyway (capabilities,
	 * no_new_privs, the seccomp filter): this init needs none of it once
	 * /proc is mounted, and its child inherits it all. */
	int ready = contain_walk(&c, CONTAIN_AHEAD, &mnt_err) == 0;
	if (control_recv(chan, &req, fds, &n, 4) != 0 || n != 4)
		_exit(125); /* the supervisor is gone, or handed over nothing */
	close(chan);
	int report = fds[3];
	for (int i = 0; i < 3; i++)
		dup2(fds[i], i);
	log_trace("command init (made ahead): request received");
	if (report > 3)
		syscall(SYS_close_range, 3, report - 1, 0);
	syscall(SYS_close_range, report + 1, ~0U, 0);
	if (ready && command_plan(plan, req, &cp, &argv, &envp, &err) == 0 && cp.as_user != plan->as_user)
		err_set(&err, EPERM, "request: this command's init was made for %s",
			plan->as_user ? "the sandbox's user" : "root");
	if (!ready || err.msg[0]) {
		msg_send_error(report, !ready ? &mnt_err : &err, SBX_ORIGIN_INIT);
		_exit(125);
	}
	cp.confined = 1;
	init_run(&cp, report);
	_exit(125);
}

static int prepare(const struct sbx_plan *plan, struct prepared *pc)
{
	int sv[2];

	pc->pid = -1;
	pc->pidfd = pc->chan = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	/* clone, not clone3: the filter (CONTAIN_NS_MAKER's) can read clone's
	 * flags, and allows CLONE_NEWPID there only; clone3 is ENOSYS. The
	 * pidfd comes back through the parent-tid argument, the third on
	 * every architecture but s390's. */
#if defined(__s390__) || defined(__s390x__)
	pid_t pid = (pid_t)syscall(SYS_clone, 0, CLONE_NEWPID | CLONE_PIDFD | SIGCHLD, &pc->pidfd, NULL, 0);
#else
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWPID | CLONE_PIDFD | SIGCHLD, 0, &pc->pidfd, NULL, 0);
#endif
	if (pid == 0) {
		close(sv[0]);
		prepared_main(plan, sv[1]);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return -1;
	}
	pc->pid = pid;
	pc->chan = sv[0];
	return 0;
}

static void prepared_drop(struct prepared *pc)
{
	if (pc->pidfd >= 0) {
		syscall(SYS_pidfd_send_signal, pc->pidfd, SIGKILL, NULL, 0);
		close(pc->pidfd);
	}
	if (pc->chan >= 0)
		close(pc->chan);
	pc->pid = pc->pidfd = pc->chan = -1;
}

/* The fallback when the supervisor holds no init made ahead (a request
 * came before the next one was ready): one is made now and handed the
 * request. READY with its pidfd goes first on the report socket, then the
 * request, so the command's own reports always follow READY. */
static void spawn(const struct sbx_plan *plan, struct json_object *req, const int *fds)
{
	_cleanup_strv_ char **argv = NULL, **envp = NULL;
	struct sbx_err err = { 0 };
	struct sbx_plan cp;
	struct prepared pc;
	int report = fds[3];

	/* checked here too, so that a bad request gets its error instead of READY */
	if (command_plan(plan, req, &cp, &argv, &envp, &err) < 0) {
		msg_send_error(report, &err, SBX_ORIGIN_SESSION);
		return;
	}
	struct sbx_plan idp = *plan; /* made ahead as this request's user */
	idp.as_user = cp.as_user;
	if (prepare(&idp, &pc) < 0) {
		err_sys(&err, "create the command's pid namespace");
		msg_send_error(report, &err, SBX_ORIGIN_SESSION);
		return;
	}
	struct sbx_msg m = { .type = SBX_MSG_READY, .code = pc.pid };
	msg_send(report, &m, &pc.pidfd, 1);
	if (control_send(pc.chan, req, fds, 4) < 0) /* it died: its pidfd tells the supervisor */
		log_trace("command init: gone before the request");
	close(pc.pidfd);
	close(pc.chan);
}

/* Makes the next command's init ahead and hands it to the supervisor (its
 * channel and pidfd), which then sends a request straight to it: one
 * hand-over less on a command's way in. The supervisor asks for each one;
 * this side keeps no copy, so one init never gets two requests. */
static void prepare_for_supervisor(const struct sbx_plan *plan, int confined, int sync)
{
	struct prepared pc;
	struct sbx_msg m = { .type = SBX_MSG_PREPARED };

	/* none: the supervisor sends exec requests here */
	if (!confined || prepare(plan, &pc) < 0) {
		msg_send(sync, &m, NULL, 0);
		return;
	}
	m.code = pc.pid;
	int fds[2] = { pc.chan, pc.pidfd };
	if (msg_send(sync, &m, fds, 2) < 0) {
		prepared_drop(&pc);
		return;
	}
	close(pc.chan);
	close(pc.pidfd);
}

static int is_op(struct json_object *req, const char *op)
{
	struct json_object *v = get(req, "op", json_type_string);
	return v && strcmp(json_object_get_string(v), op) == 0;
}

void session_init_loop(const struct sbx_plan *plan, int sync, int sfd)
{
	/* Set up: from here on it reaps and makes each command's init, which
	 * confines itself fully before its command runs. Should this fail,
	 * every command fails with the reason, and none runs. */
	struct sbx_err cerr = { 0 };
	struct contain c = { .plan = plan, .fd = sync, .slave = -1 };
	int confined = contain_walk(&c, CONTAIN_NS_MAKER, &cerr) == 0;

	for (;;) {
		struct pollfd p[2] = { { sfd, POLLIN, 0 }, { sync, POLLIN, 0 } };
		if (poll(p, 2, -1) < 0)
			continue;
		struct signalfd_siginfo si;
		if ((p[0].revents & POLLIN) && read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGCHLD)
				while (waitpid(-1, NULL, WNOHANG) > 0)
					;
			else if (si.ssi_pid == 0 && (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT))
				_exit(0);
		}
		if (!(p[1].revents & (POLLIN | POLLHUP)))
			continue;
		struct json_object *req = NULL;
		int fds[4];
		size_t n = 0;
		int r = control_recv(sync, &req, fds, &n, 4);
		if (r == 1)
			_exit(0); /* the supervisor is gone */
		if (r == 0 && n == 0 && is_op(req, "prepare"))
			prepare_for_supervisor(plan, confined, sync);
		else if (r == 0 && n == 4 && !confined)
			msg_send_error(fds[3], &cerr, SBX_ORIGIN_SESSION);
		else if (r == 0 && n == 4)
			spawn(plan, req, fds);
		for (size_t i = 0; i < n; i++)
			close(fds[i]);
		if (req)
			json_object_put(req);
	}
}
