/* mcp_server.h - the state of one `sbxrun mcp` server, shared by its
 * files: mcp_server.c (the loop, methods, the session's life), mcp_job.c
 * (replies and the running calls, mcp_job.h), mcp_exec.c
 * (commands), mcp_term.c (interactive processes on a terminal) and
 * mcp_files.c (download, open_image, read_file, write_file). */
#ifndef SBX_MCP_SERVER_H
#define SBX_MCP_SERVER_H

#include <poll.h>
#include <sys/types.h>

#include "base/config.h"
#include "mcp/mcp_proto.h"

#define MCP_MAX_JOBS 32
#define MCP_MAX_TERMS 16
#define MCP_MAX_SNAPS 32
#define MCP_MAX_ASKED 16
#define MCP_MAX_POLL (2 + 3 * MCP_MAX_JOBS + 2 * MCP_MAX_TERMS)

/* A named interactive process on its own terminal in the sandbox. */
struct mcp_term {
	int used;
	char name[65];
	int conn;             /* control connection; closing it kills the process */
	int master;           /* the terminal, -1 until the session hands it over */
	char *buf;            /* output not yet returned, the newest MCP_OUTPUT_CAP bytes */
	size_t len;
	uint64_t dropped;
	int exited, exit_code, signal;
	char reason[16];
	uint64_t started_ms;
	int busy;             /* a call is collecting its output */
};

enum mcp_job_kind { MCP_JOB_EXEC, MCP_JOB_TERM, MCP_JOB_DOWNLOAD, MCP_JOB_WALK, MCP_JOB_SNAP };

/* A tools/call still running: answered when it ends. */
struct mcp_job {
	int used;
	enum mcp_job_kind kind;
	struct json_object *id, *progress; /* owned references */
	uint64_t start_ms, next_progress_ms, deadline_ms;
	int conn;             /* exec: control connection */
	int pipe[2];          /* exec: stdout, stderr; download, walk: the child's report in [0] */
	struct mcp_out out[2];  /* exec: stdout, stderr; walk: the child's answer in [0] */
	struct mcp_term *term;
	pid_t pid;            /* download, walk: the child */
	char *what;           /* download: the result's text; walk: the tool's name */
	char *dest_dir;       /* download: the destination's directory inside; restore: the snapshot */
	long long oom_before; /* exec: the cgroup's OOM kills when it started */
};

/* The host-side download (download_run, cmd/download.c), which the
 * command passes down: the server offers it as a tool. */
typedef int (*mcp_download_fn)(const struct sbx_config *cfg, const char *url, const char *dest,
			       struct sbx_err *err);

struct mcp_server {
	struct sbx_config *cfg;
	mcp_download_fn download;
	char *session;        /* the session's name once there is one */
	int owned;            /* started by us: stopped when we end */
	char *workspace;      /* inside the sandbox, "" if none */
	int watchdog;         /* its end tells the watchdog we are gone */
	int quit;
	struct mcp_job jobs[MCP_MAX_JOBS];
	struct mcp_term terms[MCP_MAX_TERMS];
	char *snaps[MCP_MAX_SNAPS]; /* the snapshots taken through this server */
	size_t nsnaps;
	/* [network] ask through the client (mcp_ask.c) */
	int elicit;           /* the client declared the elicitation capability */
	uint64_t next_ask_ms; /* when the session's held connections are looked at next */
	long long ask_seq;
	/* what is asked: id the elicitation's ("" once answered or dismissed),
	 * upto the newest held connection to entry that it covers */
	struct { char entry[300]; char id[64]; uint64_t upto; } asked[MCP_MAX_ASKED];
	size_t nasked;
};

/* mcp_server.c: serves stdin/stdout until the client goes away. */
int mcp_serve(struct sbx_config *cfg, mcp_download_fn download, struct sbx_err *err);

/* mcp_ask.c: held connections asked of the client's user (elicitation),
 * never approved by a tool call */
void mcp_ask_initialize(struct mcp_server *srv, struct json_object *params);
void mcp_ask_check(struct mcp_server *srv, uint64_t now);
int mcp_ask_timeout(const struct mcp_server *srv, uint64_t now);
void mcp_ask_response(struct mcp_server *srv, const struct mcp_msg *m);
void mcp_network_requests(struct mcp_server *srv, struct json_object *id);
/* mcp_exec.c */
void mcp_exec_start(struct mcp_server *srv, struct json_object *id, struct json_object *progress,
		    const struct mcp_args *a);
int mcp_exec_pollfds(struct mcp_job *job, struct pollfd *p);
void mcp_exec_handle(struct mcp_server *srv, struct mcp_job *job, const struct pollfd *p);
/* 0, or -1 with why when a user other than the sandbox's is asked for. */
int mcp_user_check(const struct sbx_config *cfg, const char *user, char *why, size_t size);
/* OOM kills counted in the session's memory cgroup (-1: unknown). */
long long mcp_oom_kills(const struct mcp_server *srv);
/* The session control request for a (tty: terminal) command. */
struct json_object *mcp_exec_request(const struct mcp_args *a, int64_t timeout_ms, int tty);

/* mcp_snap.c: the snapshot tools, and the snapshots of a session of the
 * server's own removed after it */
void mcp_snapshot(struct mcp_server *srv, struct json_object *id, const struct mcp_args *a);
void mcp_restore(struct mcp_server *srv, struct json_object *id, const struct mcp_args *a);
void mcp_list_snapshots(struct mcp_server *srv, struct json_object *id);
void mcp_snapshots_end(struct mcp_server *srv);
/* A snapshot's or restore's child: its output as it comes, the answer at
 * its end; and those past their deadline killed and answered. */
void mcp_snap_handle(struct mcp_server *srv, struct mcp_job *job);
void mcp_snap_check(struct mcp_server *srv, uint64_t now);

/* mcp_changes.c: the project tools (sbxrun mcp --project DIR), each a
 * walk of the change set in a child, answered when it ends */
void mcp_list_changes(struct mcp_server *srv, struct json_object *id);
void mcp_diff_changes(struct mcp_server *srv, struct json_object *id, const struct mcp_args *a);
void mcp_walk_handle(struct mcp_server *srv, struct mcp_job *job);
/* Kills the walks past their deadline, with a tool error naming it. */
void mcp_walk_check(struct mcp_server *srv, uint64_t now);

/* mcp_term.c */
void mcp_term_exec(struct mcp_server *srv, struct json_object *id, const struct mcp_args *a);
void mcp_term_feed(struct mcp_server *srv, struct json_object *id, const struct mcp_args *a);
int mcp_term_pollfds(struct mcp_term *t, struct pollfd *p);
void mcp_term_handle(struct mcp_server *srv, struct mcp_term *t, const struct pollfd *p);
/* Answers calls whose time is up or whose process ended. */
void mcp_term_check(struct mcp_server *srv, uint64_t now);
void mcp_term_close(struct mcp_term *t);

/* mcp_files.c */
void mcp_download_start(struct mcp_server *srv, struct json_object *id, const struct mcp_args *a);
void mcp_download_handle(struct mcp_server *srv, struct mcp_job *job);
/* Ends a download before its time, with its temporary file. */
void mcp_download_cancel(struct mcp_server *srv, struct mcp_job *job);
void mcp_open_image(struct mcp_server *srv, struct json_object *id, const struct mcp_args *a);
void mcp_read_file(struct mcp_server *srv, struct json_object *id, const struct mcp_args *a);
void mcp_write_file(struct mcp_server *srv, struct json_object *id, const struct mcp_args *a);

#endif
