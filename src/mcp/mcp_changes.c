/* mcp_changes.c - the project tools. When the server's sandbox works on
 * the user's checkout (`sbxrun mcp --project DIR`: DIR under an overlay,
 * never written), an agent lists what it changed there (list_changes) and
 * reads it as a diff (diff_changes). Applying the changes to DIR is the
 * user's decision (`sbxrun changes apply`), never a tool's.
 *
 * Each call walks the change set as it is now (undo/project.h), which the
 * sandbox may still be writing: the walk runs in a child of the server
 * (dead with it: PR_SET_PDEATHSIG) that sends the whole result back on a
 * pipe, and is killed at the deadline (the profile's timeout), so the
 * server's loop never waits on it. What is listed is the model apply
 * reads (changeset.h): each entry's kind, type, the mode apply gives, a
 * symlink's target and its verdict (changeset_check); deletions first and
 * never cut. The text is bounded: the diff stops at MCP_OUTPUT_CAP. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/util.h"
#include "mcp/mcp_job.h"
#include "mcp/mcp_proto.h"
#include "mcp/mcp_server.h"
#include "session/session_client.h"
#include "undo/csdiff.h"
#include "undo/csname.h"
#include "undo/project.h"

#define LIST_MAX 1000                 /* entries listed past the deletions; the counts cover all */
#define RESULT_MAX (64u << 20)        /* the child's answer, JSON (every deletion is listed) */
#define WALK_DEADLINE_MS 60000        /* when the profile sets no timeout */

/* A name as the agent (and through it the user) sees it: no raw control,
 * bidirectional or format character (csname_show; changeset_unescape
 * reads it back, as diff_changes does with the paths it is given). */
static char *shown(const char *name)
{
	return name ? csname_show(name) : NULL;
}

static struct json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static struct json_object *entry_json(const struct cs_entry *e, unsigned um)
{
	struct json_object *o = json_object_new_object();
	_cleanup_free_ char *path = shown(e->path), *target = shown(e->target);
	char mode[8] = "";

	if (e->kind != CS_DELETED && e->type != CS_SYMLINK && e->type != CS_OTHER)
		snprintf(mode, sizeof(mode), "%04o", changeset_applied_mode(e, um));
	json_object_object_add(o, "kind", json_object_new_string(changeset_kind_name(e->kind)));
	json_object_object_add(o, "type", json_object_new_string(changeset_type_name(e->type)));
	json_object_object_add(o, "size", json_object_new_int64((int64_t)e->size));
	json_object_object_add(o, "mode", str_or_null(mode[0] ? mode : NULL));
	json_object_object_add(o, "target", str_or_null(target));
	json_object_object_add(o, "conflict", str_or_null(e->why && e->conflict ? e->why : NULL));
	json_object_object_add(o, "skipped", str_or_null(e->why && !e->conflict ? e->why : NULL));
	json_object_object_add(o, "path", json_object_new_string(path));
	return o;
}

/* One line of the text: "changed file 0644: a", "added symlink: l -> t",
 * then the verdict when apply would not write it. */
static void entry_line(struct mcp_out *out, const struct cs_entry *e, unsigned um)
{
	_cleanup_free_ char *path = shown(e->path), *target = shown(e->target);
	char mode[8] = "";

	if (e->kind != CS_DELETED && e->type != CS_SYMLINK && e->type != CS_OTHER)
		snprintf(mode, sizeof(mode), " %04o", changeset_applied_mode(e, um));
	_cleanup_free_ char *why = e->why ? xasprintf(" (%s%s)", e->conflict ? "conflict: " : "never applied: ",
						      e->why) : xstrdup("");
	_cleanup_free_ char *l = xasprintf("%s %s%s: %s%s%s%s\n", changeset_kind_name(e->kind),
					   changeset_type_name(e->type), mode, path, target ? " -> " : "",
					   target ? target : "", why);
	mcp_out_add(out, l, strlen(l));
}

/* The listing: every deletion first, then the other entries up to
 * LIST_MAX, both in path order. */
static struct json_object *list_result(struct changeset *cs, size_t nbad)
{
	struct json_object *st = json_object_new_object(), *list = json_object_new_array();
	struct mcp_out out = { .cap = MCP_OUTPUT_CAP };
	mode_t um = umask(022);
	size_t listed = 0;

	umask(um);
	_cleanup_free_ char *head = xasprintf("%zu added, %zu changed, %zu deleted in the project%s\n",
					      cs->added, cs->changed, cs->deleted,
					      nbad ? "; apply would not write the entries marked" : "");
	mcp_out_add(&out, head, strlen(head));
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < cs->n; i++) {
			const struct cs_entry *e = &cs->e[i];
			if ((e->kind == CS_DELETED) != (pass == 0) || (pass && listed >= LIST_MAX))
				continue;
			listed += pass;
			entry_line(&out, e, um);
			json_object_array_add(list, entry_json(e, um));
		}
	size_t more = cs->n - cs->deleted - listed;
	if (more) {
		_cleanup_free_ char *l = xasprintf("... and %zu more\n", more);
		mcp_out_add(&out, l, strlen(l));
	}
	json_object_object_add(st, "id", json_object_new_string(cs->id));
	json_object_object_add(st, "added", json_object_new_int64((int64_t)cs->added));
	json_object_object_add(st, "changed", json_object_new_int64((int64_t)cs->changed));
	json_object_object_add(st, "deleted", json_object_new_int64((int64_t)cs->deleted));
	json_object_object_add(st, "not_applied", json_object_new_int64((int64_t)nbad));
	json_object_object_add(st, "entries", list);
	json_object_object_add(st, "truncated", json_object_new_boolean(more > 0));
	_cleanup_free_ char *text = mcp_out_text(&out);
	mcp_out_free(&out);
	return mcp_tool_text(text, 0, st);
}

/* The diff's stream keeps what fits under the cap, then fails: the diff
 * stops there rather than go on for nothing. */
static ssize_t out_write(void *cookie, const char *buf, size_t size)
{
	struct mcp_out *o = cookie;

	mcp_out_add(o, buf, size);
	return o->dropped ? -1 : (ssize_t)size;
}

static struct json_object *diff_result(struct changeset *cs, const struct mcp_args *a, struct sbx_err *err)
{
	struct mcp_out out = { .cap = MCP_OUTPUT_CAP };
	size_t n = 0;

	while (a->cmd && a->cmd[n])
		n++;
	/* a path as list_changes showed it (escaped), or as it is */
	_cleanup_strv_ char **paths = xcalloc(n + 1, sizeof(*paths));
	for (size_t i = 0; i < n; i++)
		if (!(paths[i] = changeset_unescape(a->cmd[i])))
			paths[i] = xstrdup(a->cmd[i]);
	FILE *f = fopencookie(&out, "w", (cookie_io_functions_t){ .write = out_write });
	if (!f)
		return err_sys(err, "a stream"), NULL;
	int r = changeset_diff(cs, paths, n, f, err);
	fclose(f);
	if (r < 0 && !out.dropped) {
		mcp_out_free(&out);
		return NULL;
	}
	_cleanup_free_ char *text = out.len ? mcp_out_text(&out) : xstrdup("no changes");
	if (out.dropped) { /* not counted: the diff stopped there */
		free(text);
		out.dropped = 0;
		_cleanup_free_ char *kept = mcp_out_text(&out);
		text = xasprintf("%s\n[... the diff goes on past %u KiB: 'sbxrun changes diff %s' shows it whole ...]\n",
				 kept, MCP_OUTPUT_CAP >> 10, cs->id);
	}
	mcp_out_free(&out);
	return mcp_tool_text(text, 0, NULL);
}

/* The walk and its rendering (in the child): the result, or NULL with err. */
static struct json_object *walk(const char *cid, const struct mcp_args *a, struct sbx_err *err)
{
	struct changeset cs;
	size_t nbad = 0;
	struct json_object *r = NULL;

	if (project_load(cid, &cs, err) == 0) {
		_cleanup_close_ int dir = open(cs.project, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dir < 0)
			err_sys(err, "open the project '%s'", cs.project);
		else if (a)
			r = diff_result(&cs, a, err);
		else if (changeset_check(&cs, dir, &nbad, err) == 0)
			r = list_result(&cs, nbad);
	}
	changeset_free(&cs);
	return r;
}

/* The child: dies with the server, holds none of its fds (the watchdog's
 * pipe above all: a child left would keep the session up), sends the
 * result (or the error as a tool error) and exits. */
static __attribute__((noreturn)) void walk_child(const char *tool, const char *cid, const struct mcp_args *a,
						  pid_t server, int report)
{
	struct sbx_err err = { 0 };
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != server)
		_exit(1);
	dup2(null, 0); /* stdout is the protocol's: nothing else may reach it */
	dup2(null, 1);
	if (report > 3)
		syscall(SYS_close_range, 3, report - 1, 0);
	syscall(SYS_close_range, report + 1, ~0U, 0);
	struct json_object *r = walk(cid, a, &err);
	if (!r) {
		_cleanup_free_ char *msg = xasprintf("%s: %s", tool, err.msg);
		r = mcp_tool_text(msg, 1, NULL);
	}
	size_t len;
	const char *s = json_object_to_json_string_length(r, JSON_C_TO_STRING_PLAIN, &len);
	_exit(write_all(report, s, len) < 0 ? 1 : 0);
}

static void walk_start(struct mcp_server *srv, struct json_object *id, const char *tool,
		       const struct mcp_args *a)
{
	_cleanup_free_ char *cid = srv->session ? session_info_string(srv->session, "changes") : NULL;
	int p[2];

	if (!cid)
		return mcp_tool_error(srv, id, "%s: this sandbox works on no project: the user starts the server "
				      "with 'sbxrun mcp --project DIR' for that", tool);
	struct mcp_job *j = mcp_job_new(srv, MCP_JOB_WALK, id, NULL);
	if (!j)
		return mcp_tool_error(srv, id, "too many calls running at once (%d)", MCP_MAX_JOBS);
	pid_t server = getpid();
	if (pipe2(p, O_CLOEXEC) < 0 || fcntl(p[0], F_SETFL, O_NONBLOCK) < 0 || (j->pid = fork()) < 0) {
		mcp_tool_error(srv, id, "%s: %s", tool, strerror(errno));
		return mcp_job_end(j);
	}
	if (j->pid == 0) {
		close(p[0]);
		walk_child(tool, cid, a, server, p[1]);
	}
	close(p[1]);
	j->pipe[0] = p[0];
	j->out[0].cap = RESULT_MAX;
	j->what = xstrdup(tool);
	j->deadline_ms = j->start_ms + (srv->cfg->timeout_ms ? srv->cfg->timeout_ms : WALK_DEADLINE_MS);
}

void mcp_list_changes(struct mcp_server *srv, struct json_object *id)
{
	walk_start(srv, id, "list_changes", NULL);
}

void mcp_diff_changes(struct mcp_server *srv, struct json_object *id, const struct mcp_args *a)
{
	walk_start(srv, id, "diff_changes", a);
}

/* The child's answer as it comes; at its end, sent on. */
void mcp_walk_handle(struct mcp_server *srv, struct mcp_job *j)
{
	char buf[65536];
	ssize_t n = read(j->pipe[0], buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0)
		return mcp_out_add(&j->out[0], buf, (size_t)n);
	struct json_object *r = NULL;
	if (j->out[0].len && !j->out[0].dropped) {
		struct json_tokener *tok = json_tokener_new();
		r = json_tokener_parse_ex(tok, j->out[0].data, (int)j->out[0].len);
		json_tokener_free(tok);
	}
	if (r)
		mcp_reply(srv, j->id, r);
	else if (j->out[0].dropped)
		mcp_tool_error(srv, j->id, "%s: the answer is larger than %u MiB", j->what, RESULT_MAX >> 20);
	else
		mcp_tool_error(srv, j->id, "%s: the walk of the change set ended unexpectedly", j->what);
	mcp_job_end(j); /* reaps the child */
}

/* Walks past their deadline: killed, and said so. */
void mcp_walk_check(struct mcp_server *srv, uint64_t now)
{
	for (size_t i = 0; i < MCP_MAX_JOBS; i++) {
		struct mcp_job *j = &srv->jobs[i];
		if (!j->used || j->kind != MCP_JOB_WALK || now < j->deadline_ms)
			continue;
		char d[32];
		format_duration(j->deadline_ms - j->start_ms, d, sizeof(d));
		mcp_tool_error(srv, j->id, "%s: the walk of the change set did not end within its deadline of %s "
			       "(the profile's timeout): it was stopped; 'sbxrun changes show' walks it without one",
			       j->what, d);
		mcp_job_end(j);
	}
}
