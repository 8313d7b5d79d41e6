/* cli.h - command-line parsing driven by the option table. */
#ifndef SBX_CLI_H
#define SBX_CLI_H

#include <stdio.h>

#include "base/config.h"

/* Parses the options of a sandbox subcommand (cmd: one enum sbx_cmdmask bit),
 * then builds cfg: defaults < profile chain < command line, and checks it.
 * *rest is the index of the first operand. Returns 1 when --help was shown. */
int cli_sandbox_config(int argc, char **argv, unsigned cmd, const char *usage,
		       struct sbx_config *cfg, int *rest, struct sbx_err *err);
/* The same, parsed again as if "-p PROFILE" came first (a session's own
 * profile, or MCP's 'agent', where the command line named none): cfg is
 * freed and rebuilt; *rest stays the index into argv. */
int cli_sandbox_config_as(int argc, char **argv, unsigned cmd, const char *usage,
			  const char *profile, struct sbx_config *cfg, int *rest,
			  struct sbx_err *err);
/* Options of a subcommand, from the table, for --help. */
void cli_print_options(FILE *f, unsigned cmd);
/* Handles -v/-q/-h for subcommands without table options (image, session...);
 * returns 1 if help was shown, -1 on an unknown option, else 0; *rest as above.
 * extra: getopt_long-style long options of that subcommand ({NULL} ended). */
int cli_simple(int argc, char **argv, const char *usage, int *rest, struct sbx_err *err);

#endif
