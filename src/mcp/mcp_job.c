/* mcp_job.c - what every tool of the MCP server shares: a message or a
 * result sent to the client, a tool error, and the table of calls still
 * running (jobs), answered when they end. The loop (mcp_cmd.c) and the
 * tools (mcp_exec.c, mcp_term.c, mcp_files.c) all use these; none of
 * them calls back into the loop. */
#define _GNU_SOURCE
#include "mcp/mcp_job.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

void mcp_send(struct mcp_server *srv, struct json_object *msg)
{
	size_t len;
	const char *text = json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	_cleanup_free_ char *line = xmalloc(len + 1);

	memcpy(line, text, len);
	line[len] = '\n';
	if (write_all(1, line, len + 1) < 0)
		srv->quit = 1; /* the client is gone */
	json_object_put(msg);
}

void mcp_reply(struct mcp_server *srv, struct json_object *id, struct json_object *result)
{
	mcp_send(srv, mcp_result(id, result));
}

void mcp_tool_error(struct mcp_server *srv, struct json_object *id, const char *fmt, ...)
{
	char msg[1200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	mcp_reply(srv, id, mcp_tool_text(msg, 1, NULL));
}

struct mcp_job *mcp_job_new(struct mcp_server *srv, enum mcp_job_kind kind, struct json_object *id,
			    struct json_object *progress)
{
	for (size_t i = 0; i < MCP_MAX_JOBS; i++) {
		struct mcp_job *j = &srv->jobs[i];
		if (j->used)
			continue;
		memset(j, 0, sizeof(*j));
		*j = (struct mcp_job){ .used = 1, .kind = kind, .id = json_object_get(id),
				       .progress = json_object_get(progress), .conn = -1, .pipe = { -1, -1 },
				       .start_ms = now_ms(), .pid = -1 };
		j->next_progress_ms = j->start_ms + 1000;
		return j;
	}
	return NULL;
}

void mcp_job_end(struct mcp_job *j)
{
	if (j->conn >= 0)
		close(j->conn);
	for (int i = 0; i < 2; i++) {
		if (j->pipe[i] >= 0)
			close(j->pipe[i]);
		mcp_out_free(&j->out[i]);
	}
	if (j->pid > 0) {
		kill(j->pid, SIGKILL);
		waitpid(j->pid, NULL, 0);
	}
	if (j->term)
		j->term->busy = 0;
	json_object_put(j->id);
	json_object_put(j->progress);
	free(j->what);
	free(j->dest_dir);
	memset(j, 0, sizeof(*j));
}
