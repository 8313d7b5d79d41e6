/* cli.c - getopt_long over the option table; the table also writes --help. */
#define _GNU_SOURCE
#include "cmd/cli.h"

#include <getopt.h>
#include <string.h>

#include "base/log.h"
#include "base/policy.h"
#include "base/profile.h"
#include "base/util.h"

enum { OPT_HELP = 'h', OPT_VERBOSE = 'v', OPT_QUIET = 'q', OPT_TABLE_BASE = 1000 };

static const struct option global_long[] = {
	{ "help", no_argument, NULL, OPT_HELP },
	{ "verbose", no_argument, NULL, OPT_VERBOSE },
	{ "quiet", no_argument, NULL, OPT_QUIET },
};

static void build_getopt(unsigned cmd, struct option *lo, char *so)
{
	size_t n = 0, s = 0;

	so[s++] = '+'; /* stop at the command: its own options are its own */
	so[s++] = ':';
	for (size_t i = 0; i < ARRAY_SIZE(global_long); i++)
		lo[n++] = global_long[i];
	strcpy(so + s, "hvq");
	s += 3;
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

static const struct sbx_option *by_short(int c, unsigned cmd)
{
	for (size_t i = 0; i < sbx_options_count; i++)
		if (sbx_options[i].sname == c && (sbx_options[i].cmds & cmd))
			return &sbx_options[i];
	return NULL;
}

void cli_print_options(FILE *f, unsigned cmd)
{
	fprintf(f, "\nOptions:\n");
	for (size_t i = 0; i < sbx_options_count; i++) {
		const struct sbx_option *o = &sbx_options[i];
		char left[64];
		if (!o->lname || !(o->cmds & cmd))
			continue;
		snprintf(left, sizeof(left), "%s%c%s--%s%s%s", o->sname ? "-" : "",
			 o->sname ? o->sname : ' ', o->sname ? ", " : " ", o->lname,
			 o->metavar ? " " : "", o->metavar ? o->metavar : "");
		fprintf(f, "  %-30s %s\n", o->sname ? left : left + 2, o->help);
	}
	fprintf(f, "  %-30s %s\n  %-30s %s\n  %-30s %s\n", "-v, --verbose", "say more on stderr",
		"-q, --quiet", "say only errors", "-h, --help", "show this help");
}

struct pair { const struct sbx_option *opt; const char *value; };

static int collect(int argc, char **argv, unsigned cmd, struct pair *pairs, size_t *npairs,
		   int *rest, struct sbx_err *err)
{
	struct option lo[64];
	char so[128];
	int c;

	build_getopt(cmd, lo, so);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		const struct sbx_option *o = NULL;
		if (c == OPT_HELP)
			return 1;
		if (c == OPT_VERBOSE) {
			sbx_log_level = sbx_log_level >= SBX_LOG_VERBOSE ? SBX_LOG_TRACE : SBX_LOG_VERBOSE;
			continue;
		}
		if (c == OPT_QUIET) {
			sbx_log_level = SBX_LOG_QUIET;
			continue;
		}
		if (c == '?' || c == ':')
			return err_set(err, 0, "%s: '%s' (see 'sbxrun %s --help')",
				       c == ':' ? "option needs a value" : "unknown option",
				       argv[optind - 1], argv[0]);
		o = c >= OPT_TABLE_BASE ? &sbx_options[c - OPT_TABLE_BASE] : by_short(c, cmd);
		if (!o)
			return err_set(err, 0, "unknown option '-%c'", c);
		pairs[(*npairs)++] = (struct pair){ o, optarg ? optarg : "" };
	}
	*rest = optind;
	return 0;
}

int cli_sandbox_config(int argc, char **argv, unsigned cmd, const char *usage,
		       struct sbx_config *cfg, int *rest, struct sbx_err *err)
{
	_cleanup_free_ struct pair *pairs = xcalloc((size_t)argc + 1, sizeof(*pairs));
	size_t n = 0;
	const char *profile = NULL;
	int r;

	config_init(cfg);
	r = collect(argc, argv, cmd, pairs, &n, rest, err);
	if (r == 1) {
		printf("%s", usage);
		cli_print_options(stdout, cmd);
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
		if (config_set(cfg, o, pairs[i].value, "command line", 1, err) < 0)
			return err_wrap(err, "--%s", o->lname);
	}
	if (!profile)
		config_set(cfg, options_by_key(SBX_K_PROFILE), "default", "default", 0, err);
	/* the proxy alone serves the image's sets when no list is given; as
	 * defaults, a policy that does not cover them drops them */
	size_t nsets = cmd == SBX_CMD_PROXY && cfg->allow.n == 0 ? SBX_SET__COUNT : 0;
	for (size_t i = 0; i < nsets; i++)
		config_set(cfg, options_by_key(SBX_K_ALLOW), sbx_host_sets[i], "default", 0, err);
	if (policy_enforce(cfg, err) < 0)
		return -1;
	return config_check(cfg, err);
}

int cli_simple(int argc, char **argv, const char *usage, int *rest, struct sbx_err *err)
{
	struct pair pairs[1];
	size_t n = 0;
	int r = collect(argc, argv, 0, pairs, &n, rest, err);
	if (r == 1)
		printf("%s", usage);
	return r;
}

int cli_sandbox_config_as(int argc, char **argv, unsigned cmd, const char *usage,
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
