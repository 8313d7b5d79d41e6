/* cli.c - getopt_long over the option table; the table also writes --help. */
#define _GNU_SOURCE
#include "cmd/cli.h"

#include <getopt.h>
#include <string.h>

#include "base/log.h"
#include "base/policy.h"
#include "base/profile.h"
#include "base/util.h"

#ifndef SBX_VERSION
#define SBX_VERSION "0.1"
#endif

enum { OPT_TABLE_BASE = 1000 };

/* Verbs whose options may follow their operands (`image import FILE --name
 * N`); the others stop at the first operand: it is a command to run, a URL,
 * or a path that may begin with '-'. */
#define CLI_PERMUTE (SBX_CMD_SESSION_LS | SBX_CMD_SESSION_STOP | SBX_CMD_SESSION_RM | \
		     SBX_CMD_IMAGE_BUILD | SBX_CMD_IMAGE_IMPORT | SBX_CMD_IMAGE_LS | \
		     SBX_CMD_IMAGE_RM | SBX_CMD_IMAGE_INSPECT | SBX_CMD_IMAGE_EXPORT | \
		     SBX_CMD_PROFILE_LS | SBX_CMD_PROFILE_SHOW | SBX_CMD_DOCTOR)

static void build_getopt(sbx_cmds cmd, struct option *lo, char *so)
{
	size_t n = 0, s = 0;

	if (!(cmd & CLI_PERMUTE))
		so[s++] = '+';
	so[s++] = ':';
	for (size_t i = 0; i < sbx_options_count; i++) {
		const struct sbx_option *o = &sbx_options[i];
		if (!o->lname || !(o->cmds & cmd))
			continue;
		int has = o->kind == SBX_ARG_NONE ? no_argument : required_argument;
		lo[n++] = (struct option){ o->lname, has, NULL, OPT_TABLE_BASE + (int)i };
		if (o->sname) {
			so[s++] = o->sname;
			if (has)
				so[s++] = ':';
		}
	}
	lo[n] = (struct option){ 0 };
	so[s] = '\0';
}

static const struct sbx_option *by_short(int c, sbx_cmds cmd)
{
	for (size_t i = 0; i < sbx_options_count; i++)
		if (sbx_options[i].sname == c && (sbx_options[i].cmds & cmd))
			return &sbx_options[i];
	return NULL;
}

/* "image export" for the command of mask cmd; "sbxrun" for the main one. */
static void command_name(sbx_cmds cmd, char *buf, size_t size)
{
	const struct sbx_command *c = options_command(cmd);

	if (!c || cmd == SBX_CMD_MAIN)
		snprintf(buf, size, "sbxrun");
	else
		snprintf(buf, size, "sbxrun %s%s%s", c->group ? c->group : "", c->group ? " " : "",
			 c->name);
}

static void option_line(FILE *f, const struct sbx_option *o)
{
	char left[64];

	snprintf(left, sizeof(left), "%s%c%s--%s%s%s", o->sname ? "-" : "",
		 o->sname ? o->sname : ' ', o->sname ? ", " : " ", o->lname,
		 o->metavar ? " " : "", o->metavar ? o->metavar : "");
	fprintf(f, "  %-30s %s\n", o->sname ? left : left + 2, o->help);
}

/* Options of cmd: its own (which not every command takes), then, with
 * global, the ones every command takes. */
static void print_options(FILE *f, sbx_cmds cmd, int global)
{
	for (int pass = 0; pass < 1 + global; pass++)
		for (size_t i = 0; i < sbx_options_count; i++) {
			const struct sbx_option *o = &sbx_options[i];
			if (o->lname && (o->cmds & cmd) && (o->cmds == SBX_CMD_ALL) == pass)
				option_line(f, o);
		}
}

/* Whether cmd has options that not every command takes. */
static int own_options(sbx_cmds cmd)
{
	for (size_t i = 0; i < sbx_options_count; i++)
		if (sbx_options[i].lname && (sbx_options[i].cmds & cmd) && sbx_options[i].cmds != SBX_CMD_ALL)
			return 1;
	return 0;
}

void cli_print_options(FILE *f, sbx_cmds cmd)
{
	fprintf(f, "\nOptions:\n");
	print_options(f, cmd, 1);
}

/* A command's own text after its usage lines (run_cmd.c's and the like
 * begin with theirs; the table's usage line replaces them). */
static const char *prose(const char *about)
{
	while (about && (!strncmp(about, "usage:", 6) || about[0] == ' ')) {
		const char *nl = strchr(about, '\n');
		about = nl ? nl + 1 : NULL;
	}
	return about;
}

static void verbs_help(FILE *f, const struct sbx_command *g)
{
	fprintf(f, "\nCommands:\n");
	for (size_t i = 0; i < sbx_commands_count; i++) {
		const struct sbx_command *v = &sbx_commands[i];
		char left[128];
		if (!v->group || strcmp(v->group, g->name))
			continue;
		snprintf(left, sizeof(left), "%s%s%s", v->name, v->operands[0] ? " " : "", v->operands);
		if (strlen(left) > 30)
			fprintf(f, "  %s\n  %-30s %s\n", left, "", v->summary);
		else
			fprintf(f, "  %-30s %s\n", left, v->summary);
	}
	for (size_t i = 0; i < sbx_commands_count; i++) {
		const struct sbx_command *v = &sbx_commands[i];
		if (!v->group || strcmp(v->group, g->name) || !own_options(v->mask))
			continue;
		fprintf(f, "\nOptions of %s %s:\n", g->name, v->name);
		print_options(f, v->mask, 0);
	}
}

void cli_help(FILE *f, const struct sbx_command *c, const char *about)
{
	if (!c) { /* sbxrun itself */
		fprintf(f, "usage: sbxrun [OPTIONS] COMMAND [ARGS...]\n\nCommands:\n");
		for (size_t i = 0; i < sbx_commands_count; i++)
			if (!sbx_commands[i].group)
				fprintf(f, "  %-10s %s\n", sbx_commands[i].name, sbx_commands[i].summary);
		cli_print_options(f, SBX_CMD_MAIN);
		fprintf(f, "\nRun 'sbxrun COMMAND --help' for a command's options.\n");
		return;
	}
	fprintf(f, "usage: sbxrun %s%s%s%s%s\n%s\n", c->group ? c->group : "", c->group ? " " : "",
		c->name, c->operands[0] ? " " : "", c->operands, c->summary);
	if ((about = prose(about)) && about[0])
		fprintf(f, "\n%s", about);
	if (!c->mask) {
		verbs_help(f, c);
		fprintf(f, "\nOptions of every command:\n");
		for (size_t i = 0; i < sbx_options_count; i++)
			if (sbx_options[i].cmds == SBX_CMD_ALL)
				option_line(f, &sbx_options[i]);
		fprintf(f, "\nRun 'sbxrun %s COMMAND --help' for one command.\n", c->name);
		return;
	}
	cli_print_options(f, c->mask);
}

/* The global options act at once; 1: --help was asked for, 2: --version
 * (shown), 0: done, -1: not a global option. */
static int global_option(const struct sbx_option *o)
{
	switch (o->key) {
	case SBX_K_HELP:
		return 1;
	case SBX_K_VERSION:
		printf("sbxrun %s\n", SBX_VERSION);
		return 2;
	case SBX_K_VERBOSE:
		if (sbx_log_level < SBX_LOG_VERBOSE)
			sbx_log_level = SBX_LOG_VERBOSE;
		return 0;
	case SBX_K_TRACE:
		sbx_log_level = SBX_LOG_TRACE;
		return 0;
	case SBX_K_QUIET:
		sbx_log_level = SBX_LOG_QUIET;
		return 0;
	default:
		return -1;
	}
}

/* The option getopt_long stopped at, as the user wrote it. */
static const char *bad_option(char **argv, char *buf, size_t size)
{
	const char *arg = argv[optind - 1];

	if (optopt >= OPT_TABLE_BASE)
		snprintf(buf, size, "--%s", sbx_options[optopt - OPT_TABLE_BASE].lname);
	else if (optopt > 0 && arg[0] == '-' && arg[1] != '-')
		snprintf(buf, size, "-%c", optopt);
	else
		snprintf(buf, size, "%s", arg);
	return buf;
}

struct pair { const struct sbx_option *opt; const char *value; };

static int collect(int argc, char **argv, sbx_cmds cmd, struct pair *pairs, size_t *npairs,
		   int *rest, struct sbx_err *err)
{
	_cleanup_free_ struct option *lo = xcalloc(sbx_options_count + 1, sizeof(*lo));
	char so[3 * 26 * 2 + 4], name[64], bad[128];
	int c;

	build_getopt(cmd, lo, so);
	command_name(cmd, name, sizeof(name));
	optind = 0; /* 0, not 1: glibc then starts afresh, in this call's mode (+ or not) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		const struct sbx_option *o = NULL;
		if (c == '?' || c == ':')
			return err_set(err, 0, "%s: '%s' (see '%s --help')",
				       c == ':' ? "option needs a value" : "unknown option",
				       bad_option(argv, bad, sizeof(bad)), name);
		o = c >= OPT_TABLE_BASE ? &sbx_options[c - OPT_TABLE_BASE] : by_short(c, cmd);
		if (!o)
			return err_set(err, 0, "unknown option '-%c' (see '%s --help')", c, name);
		int g = global_option(o);
		if (g > 0)
			return g;
		if (g == 0)
			continue;
		pairs[(*npairs)++] = (struct pair){ o, optarg ? optarg : "" };
	}
	*rest = optind;
	return 0;
}

/* A value of an enum option the command reads itself, checked here. */
static int check_choice(const struct sbx_option *o, const char *v, struct sbx_err *err)
{
	char list[256] = "";

	for (size_t i = 0; o->choices && o->choices[i]; i++) {
		if (!strcmp(v, o->choices[i]))
			return 0;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
			 o->choices[i]);
	}
	return err_set(err, 0, "--%s: invalid value '%s' (one of: %s)", o->lname, v, list);
}

int cli_parse(int argc, char **argv, sbx_cmds cmd, const char *about, struct cli_args *a,
	      struct sbx_err *err)
{
	_cleanup_free_ struct pair *pairs = xcalloc((size_t)argc + 1, sizeof(*pairs));
	size_t n = 0;

	memset(a, 0, sizeof(*a));
	int r = collect(argc, argv, cmd, pairs, &n, &a->rest, err);
	if (r == 1)
		cli_help(stdout, cmd == SBX_CMD_MAIN ? NULL : options_command(cmd), about);
	if (r != 0)
		return r > 0 ? 1 : -1;
	for (size_t i = 0; i < n; i++) {
		const struct sbx_option *o = pairs[i].opt;
		if (o->kind == SBX_ARG_ENUM && check_choice(o, pairs[i].value, err) < 0)
			return -1;
		a->v[o->key] = pairs[i].value;
	}
	return 0;
}

int cli_verb(int argc, char **argv, const char *group, const char *about,
	     const struct sbx_command **verb, struct sbx_err *err)
{
	const struct sbx_command *g = options_command_named(NULL, group);
	char list[256] = "";

	for (size_t i = 0; i < sbx_commands_count; i++)
		if (sbx_commands[i].group && !strcmp(sbx_commands[i].group, group))
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 list[0] ? ", " : "", sbx_commands[i].name);
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		cli_help(stdout, g, about);
		return 1;
	}
	if (argc < 2)
		return err_set(err, 0, "%s: which command? (%s; see 'sbxrun %s --help')", group, list, group);
	*verb = options_command_named(group, argv[1]);
	if (!*verb)
		return err_set(err, 0, "%s: unknown command '%s' (%s; see 'sbxrun %s --help')", group,
			       argv[1], list, group);
	return 0;
}

int cli_sandbox_config(int argc, char **argv, sbx_cmds cmd, const char *usage,
		       struct sbx_config *cfg, int *rest, struct sbx_err *err)
{
	_cleanup_free_ struct pair *pairs = xcalloc((size_t)argc + 1, sizeof(*pairs));
	size_t n = 0;
	const char *profile = NULL;
	int r;

	config_init(cfg);
	r = collect(argc, argv, cmd, pairs, &n, rest, err);
	if (r > 0) {
		cli_help(stdout, options_command(cmd), usage);
		return 1;
	}
	if (r < 0)
		return -1;
	int in_session = 0;
	for (size_t i = 0; i < n; i++) {
		if (pairs[i].opt->key == SBX_K_PROFILE)
			profile = pairs[i].value;
		in_session |= pairs[i].opt->key == SBX_K_SESSION;
	}
	/* A command in a session runs with the session's settings and only
	 * what its command line says (session_client.c): no profile is read. */
	in_session &= (cmd & (SBX_CMD_RUN | SBX_CMD_SHELL)) != 0;
	if (!in_session && profile_load(cfg, profile ? profile : "default", err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct sbx_option *o = pairs[i].opt;
		if (o->flags & SBX_OPT_LOCAL)
			continue; /* none of a sandbox command's: the table's unit test checks */
		if (config_set(cfg, o, pairs[i].value, "command line", 1, err) < 0)
			return err_wrap(err, "--%s", o->lname);
	}
	if (!profile)
		config_set(cfg, options_by_key(SBX_K_PROFILE), "default", "default", 0, err);
	const sbx_cmds runs_proxy = SBX_CMD_PROXY | SBX_CMD_RUN | SBX_CMD_SHELL | SBX_CMD_SESSION_START |
				    SBX_CMD_MCP;
	if ((cmd & runs_proxy) && !in_session)
		config_proxy_defaults(cfg, cmd == SBX_CMD_PROXY);
	if (policy_enforce(cfg, err) < 0)
		return -1;
	return config_check(cfg, err);
}

int cli_sandbox_config_as(int argc, char **argv, sbx_cmds cmd, const char *usage,
			  const char *profile, struct sbx_config *cfg, int *rest,
			  struct sbx_err *err)
{
	_cleanup_free_ char **av = xcalloc((size_t)argc + 3, sizeof(char *));

	av[0] = argv[0];
	av[1] = "-p";
	av[2] = (char *)profile;
	memcpy(av + 3, argv + 1, (size_t)(argc - 1) * sizeof(char *));
	config_free(cfg);
	int r = cli_sandbox_config(argc + 2, av, cmd, usage, cfg, rest, err);
	*rest -= 2;
	return r;
}
