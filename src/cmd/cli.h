/* cli.h - command-line parsing driven by the option table. */
#ifndef SBX_CLI_H
#define SBX_CLI_H

#include <stdio.h>

#include "base/config.h"

/* Parses the options of a sandbox subcommand (cmd: one enum sbx_cmdmask bit),
 * then builds cfg: defaults < profile chain < command line, and checks it.
 * *rest is the index of the first operand. Returns 1 when --help was shown. */
int cli_sandbox_config(int argc, char **argv, sbx_cmds cmd, const char *usage,
		       struct sbx_config *cfg, int *rest, struct sbx_err *err);
/* The same, parsed again as if "-p PROFILE" came first (a session's own
 * profile, or MCP's 'agent', where the command line named none): cfg is
 * freed and rebuilt; *rest stays the index into argv. */
int cli_sandbox_config_as(int argc, char **argv, sbx_cmds cmd, const char *usage,
			  const char *profile, struct sbx_config *cfg, int *rest,
			  struct sbx_err *err);
/* Options of a subcommand, from the table, for --help. */
void cli_print_options(FILE *f, sbx_cmds cmd);
/* --help of command c (NULL: sbxrun itself) from the tables: its usage line
 * and summary, about's text after its own usage lines, then its options, or
 * for a group its verbs and each verb's options. */
void cli_help(FILE *f, const struct sbx_command *c, const char *about);

/* What the command line gave a command that reads its options itself: the
 * value by key ("" for a flag, the last one given), NULL when absent. */
struct cli_args {
	const char *v[SBX_K__COUNT];
	int rest; /* index of the first operand in argv */
};
/* Parses the options of cmd (one enum sbx_cmdmask bit; argv[0] is the
 * command's name). -v, -q and --trace act at once; enum values are checked.
 * Returns 1 when --help (shown, with about) or --version was asked for, -1
 * on a bad option (err names it), else 0. */
int cli_parse(int argc, char **argv, sbx_cmds cmd, const char *about, struct cli_args *a,
	      struct sbx_err *err);
/* The verb of group (`image`, `session`, `profile`) in argv[1]: *verb is
 * its table entry. Returns 1 when the group's --help was shown, -1 with err
 * on a missing or unknown verb, else 0. */
int cli_verb(int argc, char **argv, const char *group, const char *about,
	     const struct sbx_command **verb, struct sbx_err *err);

#endif
