/* mcp_job.h - replies to the MCP client and the calls still running,
 * shared by the server's loop and its tools (mcp_job.c). */
#ifndef SBX_MCP_JOB_H
#define SBX_MCP_JOB_H

#include <stdint.h>

#include "mcp/mcp_server.h"

void mcp_send(struct mcp_server *srv, struct json_object *msg);
void mcp_reply(struct mcp_server *srv, struct json_object *id, struct json_object *result);
/* A tool error result (isError) with a formatted message. */
void mcp_tool_error(struct mcp_server *srv, struct json_object *id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A free slot of srv->jobs for a call answered later, or NULL. */
struct mcp_job *mcp_job_new(struct mcp_server *srv, enum mcp_job_kind kind, struct json_object *id,
			    struct json_object *progress);
void mcp_job_end(struct mcp_job *job);

#endif
