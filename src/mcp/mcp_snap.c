/* mcp_snap.c - the snapshot tools: an agent keeps its sandbox's file system
 * (snapshot), lists what it kept (list_snapshots) and rolls the sandbox back
 * to one (restore). Each runs sbxrun's own `session snapshot` and `session
 * restore` (undo/, through the command) in a child, as the user would. An
 * agent sees and restores only the snapshots this server took: the user's
 * other snapshots, of other sessions, may hold what this sandbox must not
 * read. snapshot and restore run as a child with a deadline (the
 * profile's timeout, else SNAP_DEADLINE_MS), as the change set's walks
 * do: the server keeps answering meanwhile, and past the deadline the
 * child is killed (a pause it held undoes itself: snapshot_pause.h) and
 * the call answered with a tool error naming it. One snapshot or restore
 * at a time; its output is bounded. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "mcp/mcp_job.h"
#include "mcp/mcp_server.h"
#include "undo/snapshot.h"

#define SNAP_OUT_CAP 8192
#define SNAP_DEADLINE_MS 600000 /* when the profile sets no timeout */

/* Runs /proc/self/exe with argv; its stdout and stderr together, at most
 * SNAP_OUT_CAP bytes, in *out. Returns its exit status, -1 if not run. */
static int run_self(const char *const *argv, char **out)
{
	int p[2];
	size_t len = 0;
	char *buf = xmalloc(SNAP_OUT_CAP + 1);

	*out = buf;
	buf[0] = '\0';
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t parent = getpid(), pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		/* the server's children die with it (a snapshot left to run
		 * without its client would hold the session) */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent || null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
			_exit(127);
		execv("/proc/self/exe", (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	for (ssize_t n; pid > 0 && (n = read(p[0], buf + len, SNAP_OUT_CAP - len)) != 0;) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		len += (size_t)n;
		if (len == SNAP_OUT_CAP) { /* the rest is drained, not kept */
			char sink[4096];
			while (read(p[0], sink, sizeof(sink)) > 0)
				;
			break;
		}
	}
	close(p[0]);
	buf[len] = '\0';
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* /proc/self/exe with argv, started: its stdout and stderr on *out (the
 * read end, non-blocking). The child's pid, or -1. */
static pid_t spawn_self(const char *const *argv, int *out)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t parent = getpid(), pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent || null < 0 || dup2(null, 0) < 0 ||
		    dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
			_exit(127);
		execv("/proc/self/exe", (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	if (pid < 0 || fcntl(p[0], F_SETFL, O_NONBLOCK) < 0) {
		close(p[0]);
		if (pid > 0)
			kill(pid, SIGKILL), waitpid(pid, NULL, 0);
		return -1;
	}
	*out = p[0];
	return pid;
}

static int busy(const struct mcp_server *srv)
{
	for (size_t i = 0; i < MCP_MAX_JOBS; i++)
		if (srv->jobs[i].used && srv->jobs[i].kind == MCP_JOB_SNAP)
			return 1;
	return 0;
}

/* A snapshot or restore as a job of the server's: answered by
 * mcp_snap_handle when the child ends, or mcp_snap_check at its deadline. */
static void snap_start(struct mcp_server *srv, struct json_object *id, const char *tool, const char *const *argv,
		       const char *name)
{
	if (busy(srv))
		return mcp_tool_error(srv, id, "%s: a snapshot or restore of this sandbox is running; call again when "
				      "it has answered", tool);
	struct mcp_job *j = mcp_job_new(srv, MCP_JOB_SNAP, id, NULL);
	if (!j)
		return mcp_tool_error(srv, id, "too many calls running at once (%d)", MCP_MAX_JOBS);
	if ((j->pid = spawn_self(argv, &j->pipe[0])) < 0) {
		mcp_tool_error(srv, id, "%s: %s", tool, strerror(errno));
		return mcp_job_end(j);
	}
	j->out[0].cap = SNAP_OUT_CAP;
	j->what = xstrdup(tool);
	j->dest_dir = name ? xstrdup(name) : NULL; /* restore: the snapshot's name */
	j->deadline_ms = j->start_ms + (srv->cfg->timeout_ms ? srv->cfg->timeout_ms : SNAP_DEADLINE_MS);
}

void mcp_snap_handle(struct mcp_server *srv, struct mcp_job *j)
{
	char buf[4096];
	ssize_t n = read(j->pipe[0], buf, sizeof(buf));
	int st = 0;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0)
		return mcp_out_add(&j->out[0], buf, (size_t)n);
	pid_t pid = j->pid;
	j->pid = 0; /* reaped here, not killed */
	int status = waitpid(pid, &st, 0) < 0 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	const char *out = j->out[0].data ? j->out[0].data : "";
	if (!strcmp(j->what, "snapshot")) {
		_cleanup_free_ char *name = xasprintf("%.*s", (int)strcspn(out, "\n"), out); /* it prints the snapshot's name */
		if (status != 0 || !name[0]) {
			mcp_tool_error(srv, j->id, "snapshot: %s", out[0] ? out : "sbxrun could not take it");
		} else {
			srv->snaps[srv->nsnaps++] = xstrdup(name);
			_cleanup_free_ char *text = xasprintf("snapshot '%s' taken: the sandbox's files as they are now "
							      "(running processes are not kept); restore it with the "
							      "restore tool", name);
			mcp_reply(srv, j->id, mcp_tool_text(text, 0, NULL));
		}
	} else if (status != 0) {
		mcp_tool_error(srv, j->id, "restore: %s", out[0] ? out : "sbxrun could not restore it");
	} else {
		_cleanup_free_ char *text = xasprintf("the sandbox's files are back to snapshot '%s'; every "
						      "process in it was ended (interactive ones too)", j->dest_dir);
		mcp_reply(srv, j->id, mcp_tool_text(text, 0, NULL));
	}
	mcp_job_end(j);
}

void mcp_snap_check(struct mcp_server *srv, uint64_t now)
{
	for (size_t i = 0; i < MCP_MAX_JOBS; i++) {
		struct mcp_job *j = &srv->jobs[i];
		if (!j->used || j->kind != MCP_JOB_SNAP || now < j->deadline_ms)
			continue;
		char d[32];
		format_duration(j->deadline_ms - j->start_ms, d, sizeof(d));
		mcp_tool_error(srv, j->id, "%s: did not end within its deadline of %s (the profile's timeout): it was "
			       "stopped, the sandbox left as it was%s", j->what, d,
			       strcmp(j->what, "snapshot") ? " or partly restored" : " and no snapshot kept");
		mcp_job_end(j); /* kills the child */
	}
}

static int taken_here(const struct mcp_server *srv, const char *name)
{
	for (size_t i = 0; i < srv->nsnaps; i++)
		if (!strcmp(srv->snaps[i], name))
			return 1;
	return 0;
}

void mcp_snapshot(struct mcp_server *srv, struct json_object *id, const struct mcp_args *a)
{
	if (srv->nsnaps >= MCP_MAX_SNAPS)
		return mcp_tool_error(srv, id, "snapshot: this conversation has taken %d snapshots, "
				      "the most it may keep", MCP_MAX_SNAPS);
	/* the rule the command holds ('-v' would reach it as an option) */
	struct sbx_err e;
	if (a->path && snapshot_check_name(a->path, &e) < 0)
		return mcp_tool_error(srv, id, "snapshot: %s", e.msg);
	const char *argv[] = { "sbxrun", "-q", "session", "snapshot", srv->session, a->path, NULL };
	snap_start(srv, id, "snapshot", argv, NULL);
}

void mcp_restore(struct mcp_server *srv, struct json_object *id, const struct mcp_args *a)
{
	if (!taken_here(srv, a->path))
		return mcp_tool_error(srv, id, "restore: no snapshot '%s' was taken in this conversation "
				      "(list_snapshots names them)", a->path);
	const char *argv[] = { "sbxrun", "-q", "session", "restore", srv->session, a->path, NULL };
	snap_start(srv, id, "restore", argv, a->path);
}

void mcp_list_snapshots(struct mcp_server *srv, struct json_object *id)
{
	struct json_object *list = json_object_new_array(), *st = json_object_new_object();
	char *text = xstrdup(srv->nsnaps ? "" : "no snapshots taken in this conversation");

	for (size_t i = 0; i < srv->nsnaps; i++) {
		char *t = xasprintf("%s%s%s", text, i ? "\n" : "", srv->snaps[i]);
		free(text);
		text = t;
		json_object_array_add(list, json_object_new_string(srv->snaps[i]));
	}
	json_object_object_add(st, "snapshots", list);
	mcp_reply(srv, id, mcp_tool_text(text, 0, st));
	free(text);
}

void mcp_snapshots_end(struct mcp_server *srv)
{
	/* a session of the server's own is gone: its snapshots go too, the
	 * newest first (an older one may lie under it) */
	for (size_t i = srv->nsnaps; i-- > 0;) {
		_cleanup_free_ char *out = NULL;
		const char *argv[] = { "sbxrun", "-q", "session", "snapshot-rm", srv->snaps[i], NULL };
		if (srv->owned && run_self(argv, &out) != 0)
			log_warn("mcp: snapshot '%s' is kept: %s", srv->snaps[i], out);
		free(srv->snaps[i]);
	}
	srv->nsnaps = 0;
}
