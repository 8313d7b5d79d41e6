/* mcp_cmd.c - `sbxrun mcp`: the command's front end. It reads the
 * configuration (the session's profile, or 'agent') and hands it to the
 * MCP server (mcp_server.c), with the host-side download the server offers
 * as a tool. */
#define _GNU_SOURCE
#include <string.h>

#include "base/util.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/download.h"
#include "mcp/mcp_server.h"
#include "session/session_client.h"

static const char usage[] =
	"usage: sbxrun mcp [--profile NAME] [--image NAME] [--session NAME]\n"
	"Serves the Model Context Protocol on stdin/stdout (JSON-RPC, one message per\n"
	"line) for an AI agent: tools exec, feed_chars, download, open_image,\n"
	"read_file and write_file, all in one sandbox. The sandbox is a session\n"
	"started on first use and stopped when the client goes away; --session\n"
	"attaches to a running session instead and leaves it running. The default\n"
	"profile is 'agent'.\n";

/* Like download: the profile a session was started with applies unless
 * one is given; without --session the default profile is 'agent'. */
static int mcp_config(int argc, char **argv, struct sbx_config *cfg, int *rest, struct sbx_err *err)
{
	int r = cli_sandbox_config(argc, argv, SBX_CMD_MCP, usage, cfg, rest, err);
	if (r != 0 || strcmp(cfg->origin[SBX_K_PROFILE], "default") != 0)
		return r;
	_cleanup_free_ char *prof = cfg->session ? session_profile(cfg->session) : xstrdup("agent");
	if (!prof)
		return 0;
	return cli_sandbox_config_as(argc, argv, SBX_CMD_MCP, usage, prof, cfg, rest, err);
}

int cmd_mcp(int argc, char **argv, struct sbx_err *err)
{
	struct sbx_config cfg;
	int rest, r = mcp_config(argc, argv, &cfg, &rest, err);

	if (r == 0 && rest != argc)
		r = err_set(err, 0, "mcp: unexpected argument '%s' (see 'sbxrun mcp --help')", argv[rest]);
	if (r == 0)
		r = mcp_serve(&cfg, download_run, err);
	config_free(&cfg);
	return r < 0 ? -1 : 0;
}
