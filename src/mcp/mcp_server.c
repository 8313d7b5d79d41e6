/* mcp_server.c - the MCP server behind `sbxrun mcp`: a Model Context
 * Protocol server on stdin and stdout for an AI agent. One server is one
 * sandbox: a session started on the first tool call and stopped when the
 * client goes away (or attached with --session and left running). This
 * file holds the event loop, the JSON-RPC methods and the session's life;
 * the tools are in mcp_exec.c, mcp_term.c and mcp_files.c, the replies and
 * running calls they share in mcp_job.c. Only protocol messages go to
 * stdout. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "mcp/mcp_job.h"
#include "mcp/mcp_server.h"
#include "mcp/mcp_tools.h"
#include "session/session.h"
#include "session/session_client.h"
#include "undo/project.h"

static int session_running(const char *name)
{
	_cleanup_free_ char *dir = NULL;
	struct sbx_err err;
	return session_dir(name, &dir, &err) == 0 && session_alive(dir);
}

/* A process of its own that stops our session should we end without doing
 * it (SIGKILL): it waits for the end of a pipe only we hold. */
static void start_watchdog(struct mcp_server *srv)
{
	int p[2];

	if (srv->watchdog >= 0 || pipe2(p, O_CLOEXEC) < 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		char c;
		struct sbx_err err;
		setsid();
		if (fork() != 0)
			_exit(0);
		for (int i = 0; i < 3; i++)
			dup2(null, i); /* the client waits for our stdio to close */
		close(p[1]);
		if (p[0] > 3)
			syscall(SYS_close_range, 3, p[0] - 1, 0);
		syscall(SYS_close_range, p[0] + 1, ~0U, 0);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		if (session_running(srv->session))
			session_stop(srv->session, &err);
		_exit(0);
	}
	close(p[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	srv->watchdog = p[1];
}

static int session_ensure(struct mcp_server *srv, struct sbx_err *err)
{
	int rootfd;

	if (!srv->session || !session_running(srv->session)) {
		if (srv->session && !srv->owned)
			return err_set(err, 0, "session '%s' is not running", srv->session);
		if (!srv->session)
			srv->session = xasprintf("mcp-%d", (int)getpid());
		log_info("mcp: starting session '%s'", srv->session);
		/* --project: a new change set for each start of it */
		free(srv->cfg->project_set.id), free(srv->cfg->project_set.path), free(srv->cfg->project_set.layer);
		memset(&srv->cfg->project_set, 0, sizeof(srv->cfg->project_set));
		if ((srv->cfg->project ? project_session_start(srv->cfg, srv->session, err)
				       : session_start(srv->cfg, srv->session, err)) < 0)
			return -1;
		srv->owned = 1;
		start_watchdog(srv);
		free(srv->workspace);
		srv->workspace = NULL;
	}
	if (!srv->workspace) {
		if (session_root(srv->session, &rootfd, &srv->workspace, err) < 0)
			return -1;
		close(rootfd);
	}
	return 0;
}

static void initialize(struct mcp_server *srv, struct json_object *id, struct json_object *params)
{
	struct json_object *v = NULL, *r = json_object_new_object(), *caps = json_object_new_object(),
			   *tools = json_object_new_object(), *info = json_object_new_object();
	const char *want = params && json_object_object_get_ex(params, "protocolVersion", &v) &&
				   json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;

	mcp_ask_initialize(srv, params);
	json_object_object_add(r, "protocolVersion", json_object_new_string(mcp_negotiate(want)));
	json_object_object_add(tools, "listChanged", json_object_new_boolean(0));
	json_object_object_add(caps, "tools", tools);
	json_object_object_add(r, "capabilities", caps);
	json_object_object_add(info, "name", json_object_new_string("sbxrun"));
	json_object_object_add(info, "version", json_object_new_string(SBX_VERSION));
	json_object_object_add(r, "serverInfo", info);
	json_object_object_add(r, "instructions", json_object_new_string(
		"The tools run in one Linux sandbox (Debian) on the user's machine that keeps its files "
		"and installed packages for this conversation. Its network access is what the user's "
		"profile allows (by default package registries only: apt, pip, npm); the download tool "
		"fetches files from the hosts the profile names. The host's own files are out of reach."));
	mcp_reply(srv, id, r);
}

static void call_tool(struct mcp_server *srv, struct json_object *id, struct json_object *params)
{
	struct json_object *name = NULL, *args = NULL, *meta, *progress = NULL;
	struct mcp_args a;
	struct sbx_err err = { 0 };
	char why[300];

	if (!params || !json_object_object_get_ex(params, "name", &name) || !json_object_is_type(name, json_type_string))
		return mcp_send(srv, mcp_error(id, MCP_INVALID_PARAMS, "params.name: the tool's name is missing"));
	json_object_object_get_ex(params, "arguments", &args);
	if (json_object_object_get_ex(params, "_meta", &meta) && json_object_is_type(meta, json_type_object))
		json_object_object_get_ex(meta, "progressToken", &progress);
	const char *tool = json_object_get_string(name);
	int r = mcp_args_decode(tool, args, &a, why, sizeof(why));
	if (r == -2)
		return mcp_tool_error(srv, id, "%s (the tools are exec, feed_chars, download, open_image, read_file, "
				      "write_file, snapshot, list_snapshots, restore, list_changes, diff_changes, network_requests)", why);
	if (r < 0) {
		mcp_args_free(&a);
		return mcp_send(srv, mcp_error(id, MCP_INVALID_PARAMS, why));
	}
	if (!strcmp(tool, "network_requests"))
		mcp_network_requests(srv, id);
	else if (strcmp(tool, "feed_chars") && session_ensure(srv, &err) < 0)
		mcp_tool_error(srv, id, "sbxrun could not start the sandbox: %s", err.msg);
	else if (!strcmp(tool, "exec") && a.session_name)
		mcp_term_exec(srv, id, &a);
	else if (!strcmp(tool, "exec"))
		mcp_exec_start(srv, id, progress, &a);
	else if (!strcmp(tool, "feed_chars"))
		mcp_term_feed(srv, id, &a);
	else if (!strcmp(tool, "download"))
		mcp_download_start(srv, id, &a);
	else if (!strcmp(tool, "open_image"))
		mcp_open_image(srv, id, &a);
	else if (!strcmp(tool, "read_file"))
		mcp_read_file(srv, id, &a);
	else if (!strcmp(tool, "snapshot"))
		mcp_snapshot(srv, id, &a);
	else if (!strcmp(tool, "restore"))
		mcp_restore(srv, id, &a);
	else if (!strcmp(tool, "list_snapshots"))
		mcp_list_snapshots(srv, id);
	else if (!strcmp(tool, "list_changes"))
		mcp_list_changes(srv, id);
	else if (!strcmp(tool, "diff_changes"))
		mcp_diff_changes(srv, id, &a);
	else
		mcp_write_file(srv, id, &a);
	mcp_args_free(&a);
}

static void cancel(struct mcp_server *srv, struct json_object *params)
{
	struct json_object *rid;

	if (!params || !json_object_object_get_ex(params, "requestId", &rid))
		return;
	for (size_t i = 0; i < MCP_MAX_JOBS; i++) {
		struct mcp_job *j = &srv->jobs[i];
		if (j->used && json_object_equal(j->id, rid)) {
			log_info("mcp: request cancelled: the command is killed");
			if (j->kind == MCP_JOB_DOWNLOAD)
				mcp_download_cancel(srv, j);
			mcp_job_end(j); /* closing its connection kills the command */
		}
	}
}

static void on_line(void *arg, const char *line, size_t len, int too_long)
{
	struct mcp_server *srv = arg;
	struct mcp_msg m;

	if (too_long)
		return mcp_send(srv, mcp_error(NULL, MCP_PARSE_ERROR, "parse error: message longer than 8 MiB"));
	mcp_parse(line, len, &m);
	if (m.kind == MCP_INVALID)
		mcp_send(srv, mcp_error(m.id, m.code, m.why));
	else if (m.kind == MCP_NOTIFICATION && !strcmp(m.method, "notifications/cancelled"))
		cancel(srv, m.params);
	else if (m.kind == MCP_RESPONSE)
		mcp_ask_response(srv, &m); /* to an elicitation of ours */
	else if (m.kind != MCP_REQUEST)
		; /* other notifications: nothing to do */
	else if (!strcmp(m.method, "initialize"))
		initialize(srv, m.id, m.params);
	else if (!strcmp(m.method, "ping"))
		mcp_reply(srv, m.id, NULL);
	else if (!strcmp(m.method, "tools/list"))
		mcp_reply(srv, m.id, mcp_tools_list());
	else if (!strcmp(m.method, "tools/call"))
		call_tool(srv, m.id, m.params);
	else
		mcp_send(srv, mcp_error(m.id, MCP_METHOD_NOT_FOUND, "method not found"));
	mcp_msg_free(&m);
}

/* What a polled fd belongs to. */
struct slot { struct mcp_job *job; struct mcp_term *term; };

static int build_poll(struct mcp_server *srv, int in, int sfd, struct pollfd *p, struct slot *map)
{
	int n = 0;

	p[n++] = (struct pollfd){ in, POLLIN, 0 };
	p[n++] = (struct pollfd){ sfd, POLLIN, 0 };
	for (size_t i = 0; i < MCP_MAX_JOBS; i++) {
		struct mcp_job *j = &srv->jobs[i];
		int k = !j->used ? 0 : j->kind == MCP_JOB_EXEC ? mcp_exec_pollfds(j, p + n)
		       : j->kind == MCP_JOB_DOWNLOAD || j->kind == MCP_JOB_WALK || j->kind == MCP_JOB_SNAP
			       ? (p[n] = (struct pollfd){ j->pipe[0], POLLIN, 0 }, 1) : 0;
		for (int x = 0; x < k; x++)
			map[n + x] = (struct slot){ j, NULL };
		n += k;
	}
	for (size_t i = 0; i < MCP_MAX_TERMS; i++) {
		int k = srv->terms[i].used ? mcp_term_pollfds(&srv->terms[i], p + n) : 0;
		for (int x = 0; x < k; x++)
			map[n + x] = (struct slot){ NULL, &srv->terms[i] };
		n += k;
	}
	return n;
}

static int next_timeout(const struct mcp_server *srv, uint64_t now)
{
	uint64_t t = UINT64_MAX;

	for (size_t i = 0; i < MCP_MAX_JOBS; i++) {
		const struct mcp_job *j = &srv->jobs[i];
		if (j->used && j->deadline_ms && j->deadline_ms < t)
			t = j->deadline_ms;
		if (j->used && j->progress && j->next_progress_ms < t)
			t = j->next_progress_ms;
	}
	int ask = mcp_ask_timeout(srv, now);
	int ms = t == UINT64_MAX ? -1 : t <= now ? 0 : (int)(t - now);
	return ask >= 0 && (ms < 0 || ask < ms) ? ask : ms;
}

static void send_progress(struct mcp_server *srv, uint64_t now)
{
	for (size_t i = 0; i < MCP_MAX_JOBS; i++) {
		struct mcp_job *j = &srv->jobs[i];
		if (!j->used || !j->progress || now < j->next_progress_ms)
			continue;
		uint64_t secs = (now - j->start_ms) / 1000;
		struct json_object *p = json_object_new_object();
		json_object_object_add(p, "progressToken", json_object_get(j->progress));
		json_object_object_add(p, "progress", json_object_new_int64((int64_t)secs));
		json_object_object_add(p, "message", json_object_new_string_len("still running", 13));
		mcp_send(srv, mcp_notification("notifications/progress", p));
		j->next_progress_ms = j->start_ms + (secs + 1) * 1000;
	}
}

static void read_input(struct mcp_server *srv, struct mcp_reader *rd, int *in)
{
	char buf[65536];
	ssize_t n = read(*in, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		log_info("mcp: the client closed stdin");
		*in = -1;
		srv->quit = 1;
		return;
	}
	mcp_reader_feed(rd, buf, (size_t)n, on_line, srv);
}

static void dispatch(struct mcp_server *srv, struct pollfd *p, struct slot *map, int n)
{
	for (int i = 2; i < n; i++) {
		if (!p[i].revents)
			continue;
		struct mcp_job *j = map[i].job;
		if (map[i].term)
			mcp_term_handle(srv, map[i].term, &p[i]);
		else if (j->used && j->kind == MCP_JOB_EXEC)
			mcp_exec_handle(srv, j, &p[i]);
		else if (j->used && j->kind == MCP_JOB_DOWNLOAD)
			mcp_download_handle(srv, j);
		else if (j->used && j->kind == MCP_JOB_WALK)
			mcp_walk_handle(srv, j);
		else if (j->used && j->kind == MCP_JOB_SNAP)
			mcp_snap_handle(srv, j);
	}
}

static void serve(struct mcp_server *srv, int sfd)
{
	struct mcp_reader rd = { 0 };
	struct pollfd p[MCP_MAX_POLL];
	struct slot map[MCP_MAX_POLL];
	int in = 0;

	while (!srv->quit) {
		int n = build_poll(srv, in, sfd, p, map);
		if (poll(p, (nfds_t)n, next_timeout(srv, now_ms())) < 0 && errno != EINTR)
			break;
		struct signalfd_siginfo si;
		if ((p[1].revents & POLLIN) && read(sfd, &si, sizeof(si)) == sizeof(si)) {
			log_info("mcp: signal %d: ending", (int)si.ssi_signo);
			srv->quit = 1;
		}
		/* before new input: it may end and reuse the slots polled here */
		if (!srv->quit)
			dispatch(srv, p, map, n);
		if (!srv->quit && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			read_input(srv, &rd, &in);
		send_progress(srv, now_ms());
		mcp_term_check(srv, now_ms());
		mcp_walk_check(srv, now_ms());
		mcp_snap_check(srv, now_ms());
		mcp_ask_check(srv, now_ms());
	}
	mcp_reader_free(&rd);
}

static void shutdown_all(struct mcp_server *srv)
{
	struct sbx_err err = { 0 };

	for (size_t i = 0; i < MCP_MAX_JOBS; i++) {
		if (srv->jobs[i].used && srv->jobs[i].kind == MCP_JOB_DOWNLOAD)
			mcp_download_cancel(srv, &srv->jobs[i]);
		if (srv->jobs[i].used)
			mcp_job_end(&srv->jobs[i]);
	}
	for (size_t i = 0; i < MCP_MAX_TERMS; i++)
		if (srv->terms[i].used)
			mcp_term_close(&srv->terms[i]);
	if (srv->owned && session_stop(srv->session, &err) < 0)
		log_warn("mcp: %s", err.msg);
	mcp_snapshots_end(srv);
}

int mcp_serve(struct sbx_config *cfg, mcp_download_fn download, struct sbx_err *err)
{
	struct mcp_server srv = { .cfg = cfg, .watchdog = -1, .download = download };
	sigset_t set;

	if (cfg->session) {
		srv.session = xstrdup(cfg->session);
		if (session_ensure(&srv, err) < 0) {
			free(srv.session);
			return -1;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	_cleanup_close_ int sfd = signalfd(-1, &set, SFD_CLOEXEC);
	serve(&srv, sfd);
	shutdown_all(&srv);
	free(srv.session);
	free(srv.workspace);
	if (srv.watchdog >= 0)
		close(srv.watchdog);
	return 0;
}
