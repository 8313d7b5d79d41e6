/* main.c - dispatches subcommands and turns the final error into exit 125. */
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "base/log.h"
#include "cmd/commands.h"

#ifndef SBX_VERSION
#define SBX_VERSION "0.1"
#endif

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv, struct sbx_err *err);
	const char *summary;
} commands[] = {
	{ "run", cmd_run, "run one command in a fresh sandbox" },
	{ "shell", cmd_shell, "interactive login shell in a fresh sandbox" },
	{ "session", cmd_session, "long-lived sandboxes that several commands share" },
	{ "download", cmd_download, "fetch a URL on the host side into a session's workspace" },
	{ "cp", cmd_cp, "copy files between the host and a session (SESSION:PATH)" },
	{ "image", cmd_image, "build, import, list, inspect and remove rootfs images" },
	{ "profile", cmd_profile, "list profiles, show one fully resolved, export one" },
	{ "mcp", cmd_mcp, "MCP server on stdin/stdout: an AI agent's tools in one sandbox" },
	{ "proxy", cmd_proxy, "a profile's egress proxy on a TCP address (a pod's sidecar)" },
	{ "doctor", cmd_doctor, "which kernel features this machine offers and what falls back" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: sbxrun [-v|-q] COMMAND [ARGS...]\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nRun 'sbxrun COMMAND --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
	struct sbx_err err = { 0 };
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			sbx_log_level = sbx_log_level >= SBX_LOG_VERBOSE ? SBX_LOG_TRACE : SBX_LOG_VERBOSE;
		else if (!strcmp(argv[i], "-vv"))
			sbx_log_level = SBX_LOG_TRACE;
		else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet"))
			sbx_log_level = SBX_LOG_QUIET;
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--version")) {
			printf("sbxrun %s\n", SBX_VERSION);
			return 0;
		} else {
			err_set(&err, 0, "unknown option '%s' (see 'sbxrun --help')", argv[i]);
			err_print(&err);
			return 125;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 125;
	}
	for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++) {
		if (strcmp(argv[i], commands[c].name) != 0)
			continue;
		int r = commands[c].fn(argc - i, argv + i, &err);
		if (r < 0) {
			err_print(&err);
			return 125;
		}
		return r;
	}
	err_set(&err, 0, "unknown command '%s' (see 'sbxrun --help')", argv[i]);
	err_print(&err);
	return 125;
}
