/* mcp_exec.c - the exec tool of `sbxrun mcp`: one command in the session,
 * its stdout and stderr on pipes of ours (capped, the rest counted), its
 * status from the session's reply. Closing the control connection (a
 * cancelled call, the server ending) makes the session kill the command. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/outcome.h"
#include "base/util.h"
#include "mcp/mcp_job.h"
#include "mcp/mcp_server.h"
#include "session/control.h"
#include "session/session_client.h"

/* The command's timeout: the argument, never above the profile's. */
static int64_t timeout_ms(const struct sbx_config *cfg, int64_t want)
{
	if (want <= 0)
		return -1;
	if (cfg->timeout_ms && (uint64_t)want > cfg->timeout_ms)
		return (int64_t)cfg->timeout_ms;
	return want;
}

/* The sandbox's [sandbox] user, or its root (apt-get install): the session
 * checks the name again (sandbox/nonroot.h). */
int mcp_user_check(const struct sbx_config *cfg, const char *user, char *why, size_t size)
{
	const char *own = cfg->user ? cfg->user : "root";

	if (!user || !user[0] || !strcmp(user, own) || !strcmp(user, "root") || !strcmp(user, "0"))
		return 0;
	snprintf(why, size, "argument 'user': commands run as the sandbox's user '%s' or as root; "
		 "running as '%s' is not available", own, user);
	return -1;
}

struct json_object *mcp_exec_request(const struct mcp_args *a, int64_t tmo, int tty)
{
	struct json_object *o = json_object_new_object(), *cmd = json_object_new_array(),
			   *env = json_object_new_array();

	json_object_object_add(o, "op", json_object_new_string("exec"));
	for (const char **c = a->cmd; c && *c; c++)
		json_object_array_add(cmd, json_object_new_string(*c));
	json_object_object_add(o, "cmd", cmd);
	if (a->workdir)
		json_object_object_add(o, "workdir", json_object_new_string(a->workdir));
	if (a->user && a->user[0])
		json_object_object_add(o, "user", json_object_new_string(a->user));
	if (tmo >= 0)
		json_object_object_add(o, "timeout_ms", json_object_new_int64(tmo));
	if (tty)
		json_object_array_add(env, json_object_new_string("TERM=dumb"));
	for (char **e = a->env; e && *e; e++)
		json_object_array_add(env, json_object_new_string(*e));
	json_object_object_add(o, "env", env);
	json_object_object_add(o, "tty", json_object_new_boolean(tty));
	if (tty) {
		json_object_object_add(o, "rows", json_object_new_int(40));
		json_object_object_add(o, "cols", json_object_new_int(200));
	}
	return o;
}

/* Sends the request with stdin on /dev/null and stdout/stderr on pipes. */
static int send_exec(struct mcp_server *srv, struct mcp_job *j, const struct mcp_args *a, struct sbx_err *err)
{
	int out[2] = { -1, -1 }, errp[2] = { -1, -1 };
	_cleanup_close_ int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if ((j->conn = session_connect(srv->session, err)) < 0)
		return -1;
	if (null < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		err_sys(err, "pipe");
		goto fail;
	}
	struct json_object *req = mcp_exec_request(a, timeout_ms(srv->cfg, a->timeout_ms), 0);
	int io[3] = { null, out[1], errp[1] };
	int r = control_send(j->conn, req, io, 3);
	json_object_put(req);
	if (r < 0) {
		err_sys(err, "session '%s': send", srv->session);
		goto fail;
	}
	close(out[1]);
	close(errp[1]);
	j->pipe[0] = out[0];
	j->pipe[1] = errp[0];
	for (int i = 0; i < 2; i++)
		fcntl(j->pipe[i], F_SETFL, O_NONBLOCK);
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	return -1;
}

void mcp_exec_start(struct mcp_server *srv, struct json_object *id, struct json_object *progress,
		    const struct mcp_args *a)
{
	struct sbx_err err = { 0 };
	char why[300];

	if (mcp_user_check(srv->cfg, a->user, why, sizeof(why)) < 0)
		return mcp_tool_error(srv, id, "%s", why);
	struct mcp_job *j = mcp_job_new(srv, MCP_JOB_EXEC, id, progress);
	if (!j)
		return mcp_tool_error(srv, id, "too many calls running at once (%d)", MCP_MAX_JOBS);
	if (send_exec(srv, j, a, &err) < 0) {
		mcp_tool_error(srv, id, "sbxrun could not run the command: %s", err.msg);
		mcp_job_end(j);
	}
}

int mcp_exec_pollfds(struct mcp_job *j, struct pollfd *p)
{
	p[0] = (struct pollfd){ j->conn, POLLIN, 0 };
	p[1] = (struct pollfd){ j->pipe[0], POLLIN, 0 };
	p[2] = (struct pollfd){ j->pipe[1], POLLIN, 0 };
	return 3;
}

/* Returns 0 while the pipe may give more. */
static int drain(struct mcp_job *j, int i)
{
	char buf[65536];

	while (j->pipe[i] >= 0) {
		ssize_t n = read(j->pipe[i], buf, sizeof(buf));
		if (n > 0) {
			mcp_out_add(&j->out[i], buf, (size_t)n);
			continue;
		}
		if (n < 0 && (errno == EINTR))
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		close(j->pipe[i]);
		j->pipe[i] = -1;
	}
	return 1;
}

/* The tail of the text result: the outcome's sentence where a limit ended
 * the command, and the exit status. */
static char *summary(const char *out, const char *errs, const struct sbx_outcome *o)
{
	char tail[1300], sentence[1200];
	int code = outcome_status(o);

	outcome_sentence(o, sentence, sizeof(sentence));
	if (o->reason != SBX_END_EXIT && o->reason != SBX_END_SIGNAL && o->reason != SBX_END_ERROR)
		snprintf(tail, sizeof(tail), "[%s; exit code %d]", sentence, code);
	else if (o->signal)
		snprintf(tail, sizeof(tail), "[killed by signal %d; exit code %d]", o->signal, code);
	else
		snprintf(tail, sizeof(tail), "[exit code %d]", code);
	return xasprintf("%s%s%s%s%s%s", out, *out && out[strlen(out) - 1] != '\n' ? "\n" : "",
			 *errs ? "[stderr]\n" : "", errs, *errs && errs[strlen(errs) - 1] != '\n' ? "\n" : "", tail);
}

/* The session's reply is the outcome's JSON form: an error of sbxrun's own
 * (125) is a tool error; a command that could not start (126, 127) is the
 * command's own failure, its message on stderr. */
static void finish(struct mcp_server *srv, struct mcp_job *j, struct json_object *reply)
{
	struct sbx_outcome o;

	if (outcome_from_json(reply, &o) < 0)
		return mcp_tool_error(srv, j->id, "sbxrun could not run the command: the session's reply cannot be read");
	if (o.reason == SBX_END_ERROR && outcome_status(&o) == 125)
		return mcp_tool_error(srv, j->id, "sbxrun could not run the command: %s%s%s", o.message,
				      o.hint[0] ? "; hint: " : "", o.hint);
	if (o.reason == SBX_END_ERROR) {
		mcp_out_add(&j->out[1], o.message, strlen(o.message));
		mcp_out_add(&j->out[1], "\n", 1);
	}
	struct json_object *sc = json_object_new_object();
	_cleanup_free_ char *out = mcp_out_text(&j->out[0]);
	_cleanup_free_ char *errs = mcp_out_text(&j->out[1]);
	outcome_to_json(&o, sc);
	json_object_object_add(sc, "stdout", json_object_new_string(out));
	json_object_object_add(sc, "stderr", json_object_new_string(errs));
	json_object_object_add(sc, "truncated", json_object_new_boolean(j->out[0].dropped || j->out[1].dropped));
	_cleanup_free_ char *text = summary(out, errs, &o);
	mcp_reply(srv, j->id, mcp_tool_text(text, 0, sc));
}

void mcp_exec_handle(struct mcp_server *srv, struct mcp_job *j, const struct pollfd *p)
{
	struct json_object *reply = NULL, *v;

	if (p->fd == j->pipe[0] || p->fd == j->pipe[1]) {
		drain(j, p->fd == j->pipe[0] ? 0 : 1);
		return;
	}
	int r = control_recv(j->conn, &reply, NULL, NULL, 0);
	if (r == 0 && json_object_object_get_ex(reply, "event", &v)) {
		json_object_put(reply);
		return;
	}
	if (r != 0) {
		mcp_tool_error(srv, j->id, "sbxrun could not run the command: session '%s' ended while it ran",
			       srv->session);
		return mcp_job_end(j);
	}
	/* the command's pid namespace is gone: its pipes end soon */
	for (int tries = 0; tries < 100 && !(drain(j, 0) & drain(j, 1)); tries++) {
		struct pollfd q[2] = { { j->pipe[0], POLLIN, 0 }, { j->pipe[1], POLLIN, 0 } };
		poll(q, 2, 20);
	}
	finish(srv, j, reply);
	json_object_put(reply);
	mcp_job_end(j);
}
