/* main.c - dispatches subcommands and turns the final error into exit 125. */
#include <stdio.h>
#include <string.h>

#include "base/apparmor.h"
#include "base/err.h"
#include "base/log.h"
#include "cmd/cli.h"
#include "cmd/commands.h"

/* The function of each top-level command of the table (src/base/options.c). */
static const struct {
	const char *name;
	int (*fn)(int argc, char **argv, struct sbx_err *err);
} commands[] = {
	{ "run", cmd_run },
	{ "shell", cmd_shell },
	{ "session", cmd_session },
	{ "download", cmd_download },
	{ "cp", cmd_cp },
	{ "image", cmd_image },
	{ "profile", cmd_profile },
	{ "mcp", cmd_mcp },
	{ "proxy", cmd_proxy },
	{ "doctor", cmd_doctor },
	{ "cache", cmd_cache },
	{ "changes", cmd_changes },
	{ "net", cmd_net },
};

static int dispatch(int argc, char **argv, struct sbx_err *err)
{
	struct cli_args a;
	int r = cli_parse(argc, argv, SBX_CMD_MAIN, NULL, &a, err);

	if (r != 0)
		return r < 0 ? -1 : 0;
	if (a.rest >= argc) {
		cli_help(stderr, NULL, NULL);
		return 125;
	}
	for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++)
		if (strcmp(argv[a.rest], commands[c].name) == 0)
			return commands[c].fn(argc - a.rest, argv + a.rest, err);
	return err_set(err, 0, "unknown command '%s' (see 'sbxrun --help')", argv[a.rest]);
}

int main(int argc, char **argv)
{
	struct sbx_err err = { 0 };
	/* under the package's AppArmor profile: into the label that may make
	 * user namespaces, by a secure exec (src/base/apparmor.c) */
	int r = aa_enter(argv, &err) < 0 ? -1 : dispatch(argc, argv, &err);

	if (r < 0) {
		err_print(&err);
		return 125;
	}
	return r;
}
