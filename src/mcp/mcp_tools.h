/* mcp_tools.h - the tools `sbxrun mcp` offers, as tools/list describes them. */
#ifndef SBX_MCP_TOOLS_H
#define SBX_MCP_TOOLS_H

#include <json-c/json.h>

/* The result of tools/list (a new object). */
struct json_object *mcp_tools_list(void);

#endif
