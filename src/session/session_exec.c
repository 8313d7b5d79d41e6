/* session_exec.c - the session supervisor's loop: accepts control
 * connections, launches each command into the session's namespaces (in a
 * pid namespace of its own), enforces per-command timeouts, the session's
 * idle time and lifetime (each command with a watcher of its own,
 * sandbox/watch.h, the disk and memory with the session's), and answers with
 * how the command ended (base/outcome.h). */
#define _GNU_SOURCE
#include "session/session_exec.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/policy.h"
#include "base/syncmsg.h"
#include "base/util.h"
#include "session/control.h"

static void reply_error(int client, const char *msg, const char *hint)
{
	struct json_object *o = json_object_new_object();
	struct sbx_outcome out = { 0 };

	outcome_error(&out, SBX_ORIGIN_SESSION, "%s", msg);
	snprintf(out.hint, sizeof(out.hint), "%s", hint ? hint : "");
	outcome_to_json(&out, o);
	control_send(client, o, NULL, 0);
	json_object_put(o);
}

static void reply_err(int client, const struct sbx_err *err)
{
	char msg[sizeof(err->msg) + 128];

	snprintf(msg, sizeof(msg), "%s%s%s", err->msg, err->errnum ? ": " : "",
		 err->errnum ? strerror(err->errnum) : "");
	reply_error(client, msg, err->hint);
}

static struct json_object *req_get(struct json_object *req, const char *key, json_type t)
{
	struct json_object *v;
	return json_object_object_get_ex(req, key, &v) && json_object_is_type(v, t) ? v : NULL;
}

static struct sbx_session_cmd *free_slot(struct sbx_session *s)
{
	for (size_t i = 0; i < SBX_SESSION_MAX_CMDS; i++)
		if (!s->cmds[i].used)
			return &s->cmds[i];
	return NULL;
}

static int running(const struct sbx_session *s)
{
	int n = 0;
	for (size_t i = 0; i < SBX_SESSION_MAX_CMDS; i++)
		n += s->cmds[i].used;
	return n;
}

/* stdio for the command: the client's fds, or pipes we capture. */
static int command_io(struct sbx_session_cmd *c, const int *fds, size_t nfds, int io[3])
{
	int p[2][2];

	c->capture[0] = c->capture[1] = -1;
	if (nfds == 3) {
		memcpy(io, fds, 3 * sizeof(int));
		return 0;
	}
	io[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (io[0] < 0 || pipe2(p[0], O_CLOEXEC) < 0 || pipe2(p[1], O_CLOEXEC) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		c->capture[i] = p[i][0];
		fcntl(p[i][0], F_SETFL, O_NONBLOCK);
		io[i + 1] = p[i][1];
	}
	return 0;
}

static void ahead_drop(struct sbx_session *s)
{
	if (s->ahead.pidfd >= 0) {
		syscall(SYS_pidfd_send_signal, s->ahead.pidfd, SIGKILL, NULL, 0);
		close(s->ahead.pidfd);
	}
	if (s->ahead.chan >= 0)
		close(s->ahead.chan);
	s->ahead.chan = s->ahead.pidfd = -1;
}

/* Asks the session's init for the next command's init, unless one is
 * held or on its way. Not while exactly one command runs: making it (a
 * clone, a mount namespace, /proc and its masks, the filter) would take
 * CPU from that command's start, and in a run of commands one after the
 * other, the time between a reply and the next request suffices. With
 * more than one running, the commands come in parallel: ask at once. */
static void ahead_ask(struct sbx_session *s)
{
	if (running(s) == 1 || s->ahead.chan >= 0 || s->ahead.asked || s->init_gone)
		return;
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string("prepare"));
	s->ahead.asked = control_send(s->sb.sync, o, NULL, 0) == 0;
	json_object_put(o);
}

/* The session's init hands over each command's init it made ahead. */
static void init_msg(struct sbx_session *s)
{
	struct sbx_msg m;
	int fds[SBX_MSG_MAX_FDS];
	size_t n = 0;
	int r = msg_recv(s->sb.sync, &m, fds, &n);

	if (r == 0 && m.type == SBX_MSG_PREPARED)
		s->ahead.asked = 0;
	if (r == 0 && m.type == SBX_MSG_PREPARED && n == 2 && s->ahead.chan < 0) {
		s->ahead.chan = fds[0];
		s->ahead.pidfd = fds[1];
		s->ahead.pid = m.code;
		return;
	}
	if (r == 0 && m.type == SBX_MSG_PREPARED && n == 2)
		syscall(SYS_pidfd_send_signal, fds[1], SIGKILL, NULL, 0);
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	if (r != 0)
		s->init_gone = 1; /* its pidfd ends the session */
}

/* The request, the command's stdio and the report socket go straight to
 * the command's init made ahead; without one (or if it died while it
 * waited), the session's init makes one now (hand_to_init). */
static int hand_ahead(struct sbx_session *s, struct json_object *req, const int io[4], pid_t *pid,
		      int *pidfd)
{
	/* asked for when the last command ended: it may still be on its way */
	struct pollfd p = { s->sb.sync, POLLIN, 0 };
	if (s->ahead.chan < 0 && s->ahead.asked && !s->init_gone && poll(&p, 1, 1000) == 1)
		init_msg(s);
	if (s->ahead.chan < 0)
		return -1;
	int r = control_send(s->ahead.chan, req, io, 4);
	close(s->ahead.chan);
	s->ahead.chan = -1;
	if (r < 0) {
		ahead_drop(s);
		return -1;
	}
	*pid = s->ahead.pid;
	*pidfd = s->ahead.pidfd;
	s->ahead.pidfd = -1;
	return 0;
}

/* The session's init starts the command (it alone can make a pid
 * namespace below the session's): it gets the request, the command's stdio
 * and one end of a socket pair on which the command's init reports, and
 * answers READY with the command init's pidfd. */
static int hand_to_init(struct sbx_session *s, struct json_object *req, const int io[4], int report,
			pid_t *pid, int *pidfd, struct sbx_err *err)
{
	struct sbx_msg m = { 0 };
	size_t n = 0;

	if (control_send(s->sb.sync, req, io, 4) < 0 || msg_recv(report, &m, pidfd, &n) != 0 ||
	    m.type != SBX_MSG_READY || n != 1) {
		if (n)
			close(*pidfd);
		return m.type == SBX_MSG_ERROR ? msg_error(&m, err)
			: err_set(err, 0, "the session did not start the command");
	}
	*pid = m.code;
	return 0;
}

/* The pid a pidfd refers to, in our pid namespace (its fdinfo). */
static pid_t host_pid(int pidfd, pid_t fallback)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return fallback;
	buf[n] = '\0';
	char *p = strstr(buf, "\nPid:");
	long v = p ? strtol(p + 5, NULL, 10) : 0;
	return v > 0 ? (pid_t)v : fallback;
}

static int start_command(struct sbx_session *s, struct sbx_session_cmd *c, struct json_object *req,
			 const int *fds, size_t nfds, struct sbx_err *err)
{
	struct json_object *t = req_get(req, "timeout_ms", json_type_int);
	int sv[2], io[4];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 || command_io(c, fds, nfds, io) < 0)
		return err_sys(err, "command set-up");
	io[3] = sv[1];
	log_trace("supervisor: request accepted");
	/* the init made ahead is the session's default user's: --user goes
	 * to the session's init, which makes one for the user asked for */
	int r = req_get(req, "user", json_type_string) ? -1 : hand_ahead(s, req, io, &c->pid, &c->pidfd);
	if (r < 0)
		r = hand_to_init(s, req, io, sv[0], &c->pid, &c->pidfd, err);
	close(sv[1]);
	if (nfds != 3)
		for (int i = 0; i < 3; i++)
			close(io[i]);
	if (r < 0) {
		close(sv[0]);
		for (int i = 0; i < 2; i++)
			if (c->capture[i] >= 0)
				close(c->capture[i]);
		return -1;
	}
	log_trace("supervisor: command started");
	/* the session's init names it by its pid in the sandbox: the memory
	 * sum walks it from here, by the pid the pidfd holds on the host */
	c->pid = host_pid(c->pidfd, c->pid);
	int64_t want = t ? json_object_get_int64(t) : (int64_t)s->cfg->timeout_ms;
	uint64_t timeout = want > 0 ? (uint64_t)want : 0;
	/* a request on the control socket is held to the administrator's
	 * ceiling as a flag is: no timeout, or a longer one, becomes the cap */
	if (s->timeout_cap_ms && (!timeout || timeout > s->timeout_cap_ms))
		timeout = s->timeout_cap_ms;
	/* the session's disk and memory are watched from the first command on */
	if (!running(s)) {
		watch_free(&s->limits);
		watch_start(&s->limits, &s->plan, 0, 1, 0);
	}
	c->used = 1;
	c->sync = sv[0];
	watch_start(&c->watch, &s->plan, timeout, 0, 0);
	return 0;
}

/* For cp, download and export: an O_PATH fd of the session's root, which
 * the host-side tools only ever resolve below (openat2 RESOLVE_IN_ROOT). */
static void reply_root(const struct sbx_session *s, int client)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "workspace", json_object_new_string(s->cfg->workspace ? s->cfg->workspace : ""));
	json_object_object_add(o, "image", json_object_new_string(s->cfg->image));
	control_send(client, o, &s->sb.fds.fd[SBX_FD_ROOT], 1);
	json_object_put(o);
}

/* For a snapshot (undo/snapshot.h): the staging directory (the writable
 * layer and the workspace, reachable from no path inside) and the root,
 * with what the snapshot records of the session. */
static void reply_layer(const struct sbx_session *s, int client)
{
	const struct sbx_plan *p = &s->plan;
	int disk = p->storage == SBX_STORAGE_DISK;
	struct json_object *o = json_object_new_object(), *layers = json_object_new_array();
	int fds[2] = { s->sb.fds.fd[SBX_FD_STAGING], s->sb.fds.fd[SBX_FD_ROOT] };
	/* storage = disk: the layer is the host's run directory, which the
	 * staging directory only had bound (a bind that went with the old
	 * root's detach, so it is not below the staging fd) */
	_cleanup_close_ int rundir = disk && p->run_dir
		? open(p->run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;

	if (disk)
		fds[0] = rundir;
	if (s->sb.fds.n != SBX_FD__COUNT || fds[0] < 0) {
		json_object_put(o);
		json_object_put(layers);
		reply_error(client, "the session's writable layer is not reachable", NULL);
		return;
	}
	json_object_object_add(o, "upper", json_object_new_string(disk ? "upper" : "layer/upper"));
	/* a fork's workspace is in its overlay (mounts.c) */
	json_object_object_add(o, "ws", json_object_new_string(p->nsnaps || !p->workspace || p->project.src ? "" : "ws"));
	/* --project: the workspace is the project's overlay, its writes in the change set */
	json_object_object_add(o, "changes", json_object_new_string(s->cfg->project_set.id ? s->cfg->project_set.id : ""));
	json_object_object_add(o, "workspace", json_object_new_string(p->workspace ? p->workspace : ""));
	json_object_object_add(o, "image", json_object_new_string(s->cfg->image));
	json_object_object_add(o, "image_digest", json_object_new_string(p->img.digest ? p->img.digest : ""));
	json_object_object_add(o, "profile", json_object_new_string(s->cfg->profile ? s->cfg->profile : "default"));
	json_object_object_add(o, "from", json_object_new_string(s->cfg->from ? s->cfg->from : ""));
	json_object_object_add(o, "cgroup", json_object_new_string(p->lim.v2.path ? p->lim.v2.path : ""));
	json_object_object_add(o, "supervisor", json_object_new_int(getpid()));
	for (size_t i = 0; i < p->nsnaps; i++)
		json_object_array_add(layers, json_object_new_string(p->snaps[i]));
	json_object_object_add(o, "layers", layers);
	control_send(client, o, fds, 2);
	json_object_put(o);
}

/* {"op":"net","action":"allow|deny","host":"HOST[:PORT]","for":"once|session"}:
 * a live rule for the session's proxy (control.h). */
static void reply_net(struct sbx_session *s, int client, struct json_object *req)
{
	struct json_object *a = req_get(req, "action", json_type_string), *h = req_get(req, "host", json_type_string);
	struct json_object *f = req_get(req, "for", json_type_string);
	struct sbx_err err = { 0 };
	enum proxy_rule kind;

	if (!a || !h) {
		reply_error(client, "request: net needs an action and a host", NULL);
		return;
	}
	const char *act = json_object_get_string(a), *fr = f ? json_object_get_string(f) : "session";
	if (strcmp(act, "deny") == 0)
		kind = PROXY_DENY;
	else if (strcmp(act, "allow") == 0 && strcmp(fr, "once") == 0)
		kind = PROXY_ALLOW_ONCE;
	else if (strcmp(act, "allow") == 0 && strcmp(fr, "session") == 0)
		kind = PROXY_ALLOW_SESSION;
	else {
		reply_error(client, "request: net: unknown action or duration", NULL);
		return;
	}
	if (!s->px) {
		snprintf(err.msg, sizeof(err.msg),
			 "session '%s' has no egress proxy (egress is '%s'): no rule to change", s->name,
			 s->plan.net.mode_name ? s->plan.net.mode_name : "?");
		reply_err(client, &err);
		return;
	}
	struct json_object *by = req_get(req, "by", json_type_string);
	if (proxy_rule_add(s->px, json_object_get_string(h), kind, by ? json_object_get_string(by) : "sbxrun net",
			   &err) < 0) {
		reply_err(client, &err);
		return;
	}
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	control_send(client, o, NULL, 0);
	json_object_put(o);
}

static void add_rule(void *arg, const char *kind, const char *entry)
{
	struct json_object *r = json_object_new_object();
	json_object_object_add(r, "rule", json_object_new_string(kind));
	json_object_object_add(r, "host", json_object_new_string(entry));
	json_object_array_add(arg, r);
}

/* {"op":"rules"}: {"egress":MODE,"rules":[{"rule":..,"host":..}]} */
static void reply_rules(struct sbx_session *s, int client)
{
	struct json_object *o = json_object_new_object(), *rules = json_object_new_array();

	if (s->px)
		proxy_rules_each(s->px, add_rule, rules);
	json_object_object_add(o, "egress", json_object_new_string(s->plan.net.mode_name ? s->plan.net.mode_name : "?"));
	json_object_object_add(o, "rules", rules);
	control_send(client, o, NULL, 0);
	json_object_put(o);
}

static void add_pending(void *arg, uint64_t id, const char *host, int port, uint64_t waited_ms, uint64_t left_ms)
{
	struct json_object *r = json_object_new_object();
	json_object_object_add(r, "id", json_object_new_int64((int64_t)id));
	json_object_object_add(r, "host", json_object_new_string(host));
	json_object_object_add(r, "port", json_object_new_int(port));
	json_object_object_add(r, "waited_ms", json_object_new_int64((int64_t)waited_ms));
	json_object_object_add(r, "left_ms", json_object_new_int64((int64_t)left_ms));
	json_object_array_add(arg, r);
}

/* {"op":"pending"}: {"pending":[{"id":..,"host":..,"port":..,"waited_ms":..,"left_ms":..}]}, id the
 * held connection's number (a connection held later has a larger one) */
static void reply_pending(struct sbx_session *s, int client)
{
	struct json_object *o = json_object_new_object(), *list = json_object_new_array();

	if (s->px)
		proxy_pending_each(s->px, add_pending, list);
	json_object_object_add(o, "pending", list);
	control_send(client, o, NULL, 0);
	json_object_put(o);
}

/* policy.ini, $SBXRUN_POLICY or the session's profile changed: the
 * proxy's and the gateway's rules read again (sandbox/liverules.c). */
static void rules_changed(struct sbx_session *s)
{
	if (s->px && liverules_changed(&s->live))
		s->timeout_cap_ms = s->live.timeout_cap_ms;
}

static void handle_request(struct sbx_session *s, int client)
{
	struct json_object *req = NULL, *op;
	int fds[4];
	size_t nfds = 0;
	struct sbx_err err = { 0 };

	if (control_recv(client, &req, fds, &nfds, 4) != 0 || !(op = req_get(req, "op", json_type_string))) {
		reply_error(client, "request: not a JSON object with an 'op'", NULL);
		goto done;
	}
	const char *o = json_object_get_string(op);
	s->last_active = now_ms();
	if (strcmp(o, "stop") == 0) {
		s->stopping = 1;
		reply_error(client, "stopping", NULL);
	} else if (strcmp(o, "root") == 0) {
		reply_root(s, client);
	} else if (strcmp(o, "layer") == 0) {
		reply_layer(s, client);
	} else if (strcmp(o, "net") == 0) {
		reply_net(s, client, req);
	} else if (strcmp(o, "rules") == 0) {
		reply_rules(s, client);
	} else if (strcmp(o, "pending") == 0) {
		reply_pending(s, client);
	} else if (strcmp(o, "exec") == 0) {
		struct sbx_session_cmd *c = free_slot(s);
		if (!c)
			reply_error(client, "too many commands running in this session", NULL);
		else if (start_command(s, c, req, fds, nfds, &err) < 0)
			reply_err(client, &err);
		else {
			c->client = client;
			client = -1; /* owned by the command now */
		}
	} else {
		reply_error(client, "request: unknown op", NULL);
	}
done:
	for (size_t i = 0; i < nfds; i++)
		close(fds[i]);
	if (req)
		json_object_put(req);
	if (client >= 0)
		close(client);
}

static void accept_client(struct sbx_session *s)
{
	struct sbx_err err = { 0 };
	int c = accept4(s->listen, NULL, NULL, SOCK_CLOEXEC);

	if (c < 0)
		return;
	if (control_check_peer(c, &err) < 0) {
		log_warn("control: refused a connection: %s", err.msg);
		close(c);
		return;
	}
	struct pollfd p = { c, POLLIN, 0 };
	if (poll(&p, 1, 5000) <= 0) {
		close(c);
		return;
	}
	handle_request(s, c);
}

static void send_reply(struct sbx_session_cmd *c, const struct sbx_outcome *out)
{
	struct json_object *o = json_object_new_object();

	outcome_to_json(out, o);
	for (int i = 0; i < 2; i++)
		if (c->capture[i] >= 0 || c->out[i].data)
			json_object_object_add(o, i ? "stderr" : "stdout",
					       json_object_new_string_len(c->out[i].data ? c->out[i].data : "",
									  (int)c->out[i].len));
	control_send(c->client, o, NULL, 0);
	json_object_put(o);
}

static void capture_read(struct sbx_session_cmd *c, int i)
{
	char buf[16384];
	ssize_t n = read(c->capture[i], buf, sizeof(buf));

	if (n <= 0) {
		if (n == 0 || errno != EAGAIN) {
			close(c->capture[i]);
			c->capture[i] = -2; /* done, but still reported */
		}
		return;
	}
	struct sbx_buf *b = &c->out[i];
	size_t keep = b->len + (size_t)n > SBX_CAPTURE_MAX ? SBX_CAPTURE_MAX - b->len : (size_t)n;
	b->data = xrealloc(b->data, b->len + keep + 1);
	memcpy(b->data + b->len, buf, keep);
	b->len += keep;
}

static void finish_command(struct sbx_session *s, struct sbx_session_cmd *c)
{
	struct sbx_outcome out;

	/* The command's init is the session init's child, not ours: its
	 * status comes as a message, its end as the pidfd turning readable. */
	while (c->sync >= 0) {
		struct pollfd p = { c->sync, POLLIN, 0 };
		if (poll(&p, 1, 0) <= 0)
			break;
		struct sbx_msg m;
		if (msg_recv(c->sync, &m, NULL, NULL) != 0)
			break;
		watch_msg(&c->watch, &m);
	}
	for (int i = 0; i < 2; i++)
		while (c->capture[i] >= 0)
			capture_read(c, i);
	watch_finish(&c->watch, -1, 0, &out);
	log_trace("supervisor: command ended");
	send_reply(c, &out);
	watch_free(&c->watch);
	close(c->client);
	close(c->pidfd);
	close(c->sync);
	for (int i = 0; i < 2; i++)
		free(c->out[i].data);
	memset(c, 0, sizeof(*c));
	s->last_active = now_ms();
}

static void kill_command(struct sbx_session_cmd *c)
{
	syscall(SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
}

/* pty master from the command's init goes on to the client */
static void command_msg(struct sbx_session_cmd *c)
{
	struct sbx_msg m;
	int fds[SBX_MSG_MAX_FDS];
	size_t n = 0;

	if (msg_recv(c->sync, &m, fds, &n) != 0) {
		close(c->sync);
		c->sync = -1;
		return;
	}
	if (m.type == SBX_MSG_PTY && n == 1) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "event", json_object_new_string("pty"));
		control_send(c->client, o, fds, 1);
		json_object_put(o);
	} else {
		watch_msg(&c->watch, &m);
	}
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
}

/* The client forwards signals; its going away ends the command. */
static void client_msg(struct sbx_session_cmd *c)
{
	struct json_object *o = NULL, *sig;
	int r = control_recv(c->client, &o, NULL, NULL, 0);

	if (r != 0) {
		kill_command(c);
	} else if (json_object_object_get_ex(o, "signal", &sig)) {
		int n = json_object_get_int(sig);
		if (n > 0 && n < 65)
			syscall(SYS_pidfd_send_signal, c->pidfd, n, NULL, 0);
	}
	if (o)
		json_object_put(o);
}

static int next_timeout(const struct sbx_session *s, uint64_t now)
{
	uint64_t deadline = UINT64_MAX;
	int busy = running(s) > 0;

	for (size_t i = 0; i < SBX_SESSION_MAX_CMDS; i++) {
		int ms = s->cmds[i].used ? watch_poll_ms(&s->cmds[i].watch, now) : -1;
		if (ms >= 0 && now + (uint64_t)ms < deadline)
			deadline = now + (uint64_t)ms;
	}
	int ms = busy ? watch_poll_ms(&s->limits, now) : -1;
	if (ms >= 0 && now + (uint64_t)ms < deadline)
		deadline = now + (uint64_t)ms; /* sbxrun's own disk and memory accounting */
	if (!busy && s->cfg->idle_ms && s->last_active + s->cfg->idle_ms < deadline)
		deadline = s->last_active + s->cfg->idle_ms;
	if (s->cfg->lifetime_ms && s->started + s->cfg->lifetime_ms < deadline)
		deadline = s->started + s->cfg->lifetime_ms;
	if (deadline == UINT64_MAX)
		return -1;
	return deadline <= now ? 0 : (int)(deadline - now > 86400000 ? 86400000 : deadline - now);
}

/* The disk quota and memory (on the rlimit fallback) are the session's:
 * its init, every command and /dev/shm summed, one walk of the writable
 * layer, while commands run; past a limit, the commands end (what the
 * layer and /dev/shm hold stays, as it would in a cgroup). */
static void check_limits(struct sbx_session *s, uint64_t now)
{
	pid_t roots[1 + SBX_SESSION_MAX_CMDS];
	size_t n = 0;

	roots[n++] = s->sb.pid;
	for (size_t i = 0; i < SBX_SESSION_MAX_CMDS; i++)
		if (s->cmds[i].used)
			roots[n++] = s->cmds[i].pid;
	enum sbx_end why = watch_tick(&s->limits, roots, n, now);
	if (why == SBX_END_NONE)
		return;
	log_warn("session '%s': over its %s: its commands are ended", s->name,
		 why == SBX_END_DISK ? "disk quota" : "memory limit");
	for (size_t i = 0; i < SBX_SESSION_MAX_CMDS; i++)
		if (s->cmds[i].used && !s->cmds[i].watch.exited) {
			watch_killed(&s->cmds[i].watch, why, &s->limits);
			kill_command(&s->cmds[i]);
		}
	watch_free(&s->limits);
	watch_start(&s->limits, &s->plan, 0, 1, 0);
}

static void check_deadlines(struct sbx_session *s, uint64_t now)
{
	int busy = running(s) > 0;

	for (size_t i = 0; i < SBX_SESSION_MAX_CMDS; i++) {
		struct sbx_session_cmd *c = &s->cmds[i];
		if (c->used && watch_tick(&c->watch, NULL, 0, now) != SBX_END_NONE)
			kill_command(c);
	}
	if (busy)
		check_limits(s, now);
	if ((!busy && s->cfg->idle_ms && now >= s->last_active + s->cfg->idle_ms) ||
	    (s->cfg->lifetime_ms && now >= s->started + s->cfg->lifetime_ms)) {
		log_info("session '%s': ending (%s)", s->name, busy ? "lifetime" : "idle or lifetime");
		s->stopping = 1;
	}
}

/* Which command a polled fd belongs to: fills the map while building. The
 * first slots are the session's own: control socket, signals, init, proxy,
 * DNS stub, the init's messages. */
#define FIXED_SLOTS 7
struct slot { struct sbx_session_cmd *c; int what; };

static int build_poll(struct sbx_session *s, struct pollfd *p, struct slot *map, int sfd)
{
	int n = 0;

	p[n++] = (struct pollfd){ s->listen, POLLIN, 0 };
	p[n++] = (struct pollfd){ sfd, POLLIN, 0 };
	p[n++] = (struct pollfd){ s->sb.pidfd, POLLIN, 0 };
	p[n++] = (struct pollfd){ s->px ? proxy_pollfd(s->px) : -1, POLLIN, 0 };
	p[n++] = (struct pollfd){ s->dns ? dnsstub_pollfd(s->dns) : -1, POLLIN, 0 };
	p[n++] = (struct pollfd){ s->init_gone ? -1 : s->sb.sync, POLLIN, 0 };
	p[n++] = (struct pollfd){ s->px ? liverules_fd(&s->live) : -1, POLLIN, 0 };
	for (size_t i = 0; i < SBX_SESSION_MAX_CMDS; i++) {
		struct sbx_session_cmd *c = &s->cmds[i];
		if (!c->used)
			continue;
		int fds[5] = { c->pidfd, c->sync, c->client, c->capture[0], c->capture[1] };
		for (int k = 0; k < 5; k++) {
			map[n] = (struct slot){ c, k };
			p[n++] = (struct pollfd){ fds[k] >= 0 ? fds[k] : -1, POLLIN, 0 };
		}
	}
	return n;
}

static void dispatch(struct sbx_session *s, struct pollfd *p, struct slot *map, int n)
{
	for (int i = FIXED_SLOTS; i < n; i++) {
		struct sbx_session_cmd *c = map[i].c;
		if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)) || !c->used)
			continue;
		switch (map[i].what) {
		case 1: command_msg(c); break;
		case 2: client_msg(c); break;
		case 3: capture_read(c, 0); break;
		case 4: capture_read(c, 1); break;
		}
	}
	/* The reply goes when the command's init has ended, or as soon as it
	 * reported the exit (it killed and reaped all the command started)
	 * and the output is complete: its own exit, which unmounts its /proc
	 * and mount namespace, then follows off the reply's path. */
	for (int i = FIXED_SLOTS; i < n; i++) {
		struct sbx_session_cmd *c = map[i].c;
		if (map[i].what == 0 && c->used &&
		    ((p[i].revents & POLLIN) || (c->watch.exited && c->capture[0] < 0 && c->capture[1] < 0)))
			finish_command(s, c);
	}
}

int session_serve(struct sbx_session *s, const sigset_t *set)
{
	_cleanup_close_ int sfd = signalfd(-1, set, SFD_CLOEXEC);
	struct pollfd p[FIXED_SLOTS + 5 * SBX_SESSION_MAX_CMDS];
	struct slot map[FIXED_SLOTS + 5 * SBX_SESSION_MAX_CMDS];

	struct sbx_policy pol = { 0 };
	struct sbx_err perr = { 0 };
	s->ahead.chan = s->ahead.pidfd = -1;
	/* read when the session started, as its own config was */
	if (policy_load(&pol, &perr) == 0)
		s->timeout_cap_ms = policy_timeout_cap_ms(&pol);
	policy_free(&pol);
	struct hostmatch_sets sets = plan_image_sets(&s->plan.img);
	s->live.watch.fd = -1;
	if (s->px)
		liverules_start(&s->live, s->cfg, NETPLAN_SANDBOX, &sets, s->px);
	watch_start(&s->limits, &s->plan, 0, 1, 0);
	while (!s->stopping) {
		ahead_ask(s);
		int n = build_poll(s, p, map, sfd);
		if (poll(p, (nfds_t)n, next_timeout(s, now_ms())) < 0 && errno != EINTR)
			break;
		if (s->px && (p[3].revents & POLLIN))
			proxy_dispatch(s->px);
		if (s->dns && (p[4].revents & POLLIN))
			dnsstub_dispatch(s->dns);
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof(si)) == sizeof(si) && si.ssi_signo != SIGCHLD &&
			    si.ssi_signo != SIGWINCH)
				s->stopping = 1;
		}
		if (p[2].revents & POLLIN) {
			log_warn("session '%s': the sandbox's init ended", s->name);
			s->stopping = 1;
		}
		if (p[5].revents & (POLLIN | POLLHUP | POLLERR))
			init_msg(s);
		if (p[6].revents & POLLIN)
			rules_changed(s);
		dispatch(s, p, map, n);
		if (p[0].revents & POLLIN)
			accept_client(s);
		check_deadlines(s, now_ms());
	}
	for (size_t i = 0; i < SBX_SESSION_MAX_CMDS; i++)
		if (s->cmds[i].used) {
			kill_command(&s->cmds[i]);
			finish_command(s, &s->cmds[i]);
		}
	ahead_drop(s);
	watch_free(&s->limits);
	liverules_free(&s->live);
	return 0;
}
