/* mcp_term.c - interactive processes of `sbxrun mcp`: exec with a
 * session_name starts a named process on its own terminal in the sandbox
 * (the session hands over the terminal's master); feed_chars types into it.
 * Its output is kept between calls in a bounded buffer (the newest bytes
 * win) and each call returns what arrived until its yield time is up or the
 * process ends. The process lives until it exits or the server ends. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "mcp/mcp_job.h"
#include "mcp/mcp_server.h"
#include "session/control.h"
#include "session/session_client.h"

#define YIELD_MAX_MS 120000

static struct mcp_term *term_find(struct mcp_server *srv, const char *name)
{
	for (size_t i = 0; i < MCP_MAX_TERMS; i++)
		if (srv->terms[i].used && !strcmp(srv->terms[i].name, name))
			return &srv->terms[i];
	return NULL;
}

static int name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 64)
		return 0;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return 0;
	return 1;
}

void mcp_term_close(struct mcp_term *t)
{
	if (t->conn >= 0)
		close(t->conn);
	if (t->master >= 0)
		close(t->master);
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

static void term_add(struct mcp_term *t, const char *p, size_t n)
{
	if (n >= MCP_OUTPUT_CAP) {
		t->dropped += t->len + n - MCP_OUTPUT_CAP;
		p += n - MCP_OUTPUT_CAP;
		n = MCP_OUTPUT_CAP;
		t->len = 0;
	} else if (t->len + n > MCP_OUTPUT_CAP) {
		size_t cut = t->len + n - MCP_OUTPUT_CAP;
		memmove(t->buf, t->buf + cut, t->len - cut);
		t->len -= cut;
		t->dropped += cut;
	}
	if (!t->buf)
		t->buf = xmalloc(MCP_OUTPUT_CAP);
	memcpy(t->buf + t->len, p, n);
	t->len += n;
}

static int term_start(struct mcp_server *srv, struct mcp_term *t, const struct mcp_args *a, struct sbx_err *err)
{
	int64_t tmo = a->timeout_ms > 0 ? a->timeout_ms : 0; /* interactive: no per-command limit unless asked */

	if (tmo && srv->cfg->timeout_ms && (uint64_t)tmo > srv->cfg->timeout_ms)
		tmo = (int64_t)srv->cfg->timeout_ms;
	int conn = session_connect(srv->session, err);
	if (conn < 0)
		return -1;
	struct json_object *req = mcp_exec_request(a, tmo, 1);
	int r = control_send(conn, req, NULL, 0);
	json_object_put(req);
	if (r < 0) {
		close(conn);
		return err_sys(err, "session '%s': send", srv->session);
	}
	*t = (struct mcp_term){ .used = 1, .conn = conn, .master = -1, .started_ms = now_ms() };
	snprintf(t->name, sizeof(t->name), "%s", a->session_name);
	return 0;
}

static void wait_output(struct mcp_server *srv, struct json_object *id, struct mcp_term *t, int64_t yield)
{
	struct mcp_job *j = mcp_job_new(srv, MCP_JOB_TERM, id, NULL);

	if (!j)
		return mcp_tool_error(srv, id, "too many calls running at once (%d)", MCP_MAX_JOBS);
	j->term = t;
	t->busy = 1;
	j->deadline_ms = j->start_ms + (uint64_t)(yield > YIELD_MAX_MS ? YIELD_MAX_MS : yield);
	mcp_term_check(srv, now_ms());
}

void mcp_term_exec(struct mcp_server *srv, struct json_object *id, const struct mcp_args *a)
{
	struct sbx_err err = { 0 };
	char why[300];
	struct mcp_term *t = term_find(srv, a->session_name);

	if (!name_ok(a->session_name))
		return mcp_tool_error(srv, id, "argument 'session_name': 1 to 64 printable characters");
	if (mcp_user_check(srv->cfg, a->user, why, sizeof(why)) < 0)
		return mcp_tool_error(srv, id, "%s", why);
	if (t && t->busy)
		return mcp_tool_error(srv, id, "'%s' is busy with another call", a->session_name);
	if (t && t->exited) {
		mcp_term_close(t);
		t = NULL;
	}
	if (!t) {
		for (size_t i = 0; !t && i < MCP_MAX_TERMS; i++)
			t = srv->terms[i].used ? NULL : &srv->terms[i];
		if (!t)
			return mcp_tool_error(srv, id, "too many interactive processes (%d): end one first", MCP_MAX_TERMS);
		if (term_start(srv, t, a, &err) < 0)
			return mcp_tool_error(srv, id, "sbxrun could not start '%s': %s", a->session_name, err.msg);
	}
	wait_output(srv, id, t, a->yield_ms >= 0 ? a->yield_ms : 2000);
}

/* Writes all of s to the terminal, waiting up to 2 s for room. */
static int term_write(struct mcp_term *t, const char *s, size_t n)
{
	uint64_t until = now_ms() + 2000;

	while (n > 0) {
		ssize_t w = write(t->master, s, n);
		if (w > 0) {
			s += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		struct pollfd p = { t->master, POLLOUT, 0 };
		uint64_t now = now_ms();
		if (now >= until || poll(&p, 1, (int)(until - now)) <= 0)
			return -1;
	}
	return 0;
}

void mcp_term_feed(struct mcp_server *srv, struct json_object *id, const struct mcp_args *a)
{
	struct mcp_term *t = term_find(srv, a->session_name);

	if (!t)
		return mcp_tool_error(srv, id, "no interactive process named '%s' (start one with exec and "
				      "session_name)", a->session_name);
	if (t->busy)
		return mcp_tool_error(srv, id, "'%s' is busy with another call", a->session_name);
	if (!t->exited && a->chars[0]) {
		if (t->master < 0)
			return mcp_tool_error(srv, id, "'%s' has no terminal yet: try again", a->session_name);
		if (term_write(t, a->chars, strlen(a->chars)) < 0)
			return mcp_tool_error(srv, id, "'%s' does not take input (its terminal is full or closed)",
					      a->session_name);
	}
	wait_output(srv, id, t, t->exited ? 0 : a->yield_ms >= 0 ? a->yield_ms : 1000);
}

int mcp_term_pollfds(struct mcp_term *t, struct pollfd *p)
{
	p[0] = (struct pollfd){ t->conn, POLLIN, 0 };
	p[1] = (struct pollfd){ t->master, POLLIN, 0 };
	return 2;
}

static void read_master(struct mcp_term *t)
{
	char buf[16384];

	for (;;) {
		ssize_t n = read(t->master, buf, sizeof(buf));
		if (n > 0) {
			term_add(t, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		close(t->master); /* EIO: the terminal's last user is gone */
		t->master = -1;
		return;
	}
}

static void on_status(struct mcp_term *t, struct json_object *o)
{
	struct json_object *v;
	t->exited = 1;
	t->exit_code = o && json_object_object_get_ex(o, "exit_code", &v) ? json_object_get_int(v) : 125;
	t->signal = o && json_object_object_get_ex(o, "signal", &v) ? json_object_get_int(v) : 0;
	snprintf(t->reason, sizeof(t->reason), "%s",
		 o && json_object_object_get_ex(o, "reason", &v) ? json_object_get_string(v) : "error");
	if (o && json_object_object_get_ex(o, "error", &v)) {
		const char *e = json_object_get_string(v);
		term_add(t, e, strlen(e));
		term_add(t, "\n", 1);
	}
	close(t->conn);
	t->conn = -1;
}

void mcp_term_handle(struct mcp_server *srv, struct mcp_term *t, const struct pollfd *p)
{
	struct json_object *o = NULL, *v;
	int fds[4];
	size_t n = 0;

	(void)srv;
	/* A slot whose fd an earlier slot of this wake-up closed (the status
	 * handler reads the terminal to its end) is stale: read as the
	 * connection, the terminal's hang-up would replace the exit status with
	 * a lost connection's 125. */
	if (p->fd < 0 || (p->fd != t->master && p->fd != t->conn))
		return;
	if (p->fd == t->master) {
		read_master(t);
		return;
	}
	int r = control_recv(t->conn, &o, fds, &n, 4);
	if (r == 0 && json_object_object_get_ex(o, "event", &v)) {
		if (n == 1 && t->master < 0) {
			t->master = fds[0];
			fcntl(t->master, F_SETFL, O_NONBLOCK);
			n = 0;
		}
	} else {
		if (t->master >= 0)
			read_master(t);
		on_status(t, r == 0 ? o : NULL);
	}
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	if (o)
		json_object_put(o);
}

static void term_finish(struct mcp_server *srv, struct mcp_job *j)
{
	struct mcp_term *t = j->term;
	struct mcp_out o = { .data = t->buf, .len = t->len };
	_cleanup_free_ char *out = mcp_out_text(&o);
	char head[80] = "", tail[200];
	struct json_object *sc = json_object_new_object();

	if (t->dropped)
		snprintf(head, sizeof(head), "[... %llu earlier bytes dropped ...]\n", (unsigned long long)t->dropped);
	if (!t->exited)
		snprintf(tail, sizeof(tail), "[%s is still running: send input with feed_chars]", t->name);
	else if (t->signal)
		snprintf(tail, sizeof(tail), "[%s was killed by signal %d]", t->name, t->signal);
	else
		snprintf(tail, sizeof(tail), "[%s exited with code %d]", t->name, t->exit_code);
	_cleanup_free_ char *text = xasprintf("%s%s%s%s", head, out, *out && out[strlen(out) - 1] != '\n' ? "\n" : "", tail);
	json_object_object_add(sc, "exit_code", t->exited ? json_object_new_int(t->exit_code) : NULL);
	json_object_object_add(sc, "signal", json_object_new_int(t->signal));
	json_object_object_add(sc, "reason", json_object_new_string(!t->exited ? "running" : t->reason));
	json_object_object_add(sc, "duration_ms", json_object_new_int64((int64_t)(now_ms() - j->start_ms)));
	json_object_object_add(sc, "stdout", json_object_new_string(out));
	json_object_object_add(sc, "stderr", json_object_new_string(""));
	json_object_object_add(sc, "truncated", json_object_new_boolean(t->dropped != 0));
	json_object_object_add(sc, "session_name", json_object_new_string(t->name));
	t->len = 0;
	t->dropped = 0;
	mcp_reply(srv, j->id, mcp_tool_text(text, 0, sc));
	mcp_job_end(j);
}

void mcp_term_check(struct mcp_server *srv, uint64_t now)
{
	for (size_t i = 0; i < MCP_MAX_JOBS; i++) {
		struct mcp_job *j = &srv->jobs[i];
		if (j->used && j->kind == MCP_JOB_TERM &&
		    (now >= j->deadline_ms || (j->term->exited && j->term->master < 0)))
			term_finish(srv, j);
	}
}
