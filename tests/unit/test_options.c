/* test_options.c - the command and option tables: every command's --help
 * lists every entry that is its, names are unique within a command, the
 * parser of the table-driven commands names a bad option, -v has one
 * meaning, and a message that says it all prints without an errno. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/config.h"
#include "base/log.h"
#include "cmd/cli.h"
#include "unit.h"

/* Runs fn with stdout (or stderr) going to a buffer; returns it (free it). */
static char *capture(int fd, void (*fn)(void *), void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *tmp = tmpfile();
	int saved = dup(fd);

	fflush(fd == 1 ? stdout : stderr);
	dup2(fileno(tmp), fd);
	fn(arg);
	fflush(fd == 1 ? stdout : stderr);
	dup2(saved, fd);
	close(saved);
	rewind(tmp);
	FILE *mem = open_memstream(&buf, &len);
	for (int c; (c = fgetc(tmp)) != EOF;)
		fputc(c, mem);
	fclose(mem);
	fclose(tmp);
	return buf;
}

static void help_of(void *arg)
{
	cli_help(stdout, arg, NULL);
}

static int is_verb_of(const struct sbx_command *v, const struct sbx_command *g)
{
	return v->group && !g->group && !strcmp(v->group, g->name);
}

/* Every option of c (its own and the global ones) appears, with its help. */
static void check_lists_options(const char *text, const struct sbx_command *c)
{
	for (size_t i = 0; i < sbx_options_count; i++) {
		const struct sbx_option *o = &sbx_options[i];
		char want[128];
		if (!o->lname || !(o->cmds & c->mask))
			continue;
		snprintf(want, sizeof(want), "--%s%s%s", o->lname, o->metavar ? " " : "",
			 o->metavar ? o->metavar : "");
		CHECK_CONTAINS(text, want);
		CHECK_CONTAINS(text, o->help);
	}
}

static void test_help_lists_everything(void)
{
	for (size_t i = 0; i < sbx_commands_count; i++) {
		const struct sbx_command *c = &sbx_commands[i];
		char *text = capture(1, help_of, (void *)c);
		char want[128];
		snprintf(want, sizeof(want), "usage: sbxrun %s%s%s", c->group ? c->group : "",
			 c->group ? " " : "", c->name);
		CHECK_CONTAINS(text, want);
		CHECK_CONTAINS(text, c->summary);
		check_lists_options(text, c);
		for (size_t k = 0; k < sbx_commands_count; k++) {
			const struct sbx_command *v = &sbx_commands[k];
			if (!is_verb_of(v, c))
				continue;
			snprintf(want, sizeof(want), "\n  %s", v->name); /* the verb at a line's start */
			CHECK_CONTAINS(text, want);
			CHECK_CONTAINS(text, v->summary);
			check_lists_options(text, v);
		}
		free(text);
	}
	char *top = capture(1, help_of, NULL);
	for (size_t i = 0; i < sbx_commands_count; i++)
		if (!sbx_commands[i].group)
			CHECK_CONTAINS(top, sbx_commands[i].summary);
	CHECK_CONTAINS(top, "--version");
	CHECK_CONTAINS(top, "--trace");
	free(top);
	char *img = capture(1, help_of, (void *)options_command_named(NULL, "image"));
	CHECK_CONTAINS(img, "\n  export [OPTIONS] SESSION|IMAGE|--snapshot SNAP -o FILE");
	free(img);
}

/* Names unique within a command; every bit an option uses is a command's;
 * a sandbox command has no option that is not a field of its config. */
static void test_table_shape(void)
{
	sbx_cmds known = SBX_CMD_MAIN;
	for (size_t i = 0; i < sbx_commands_count; i++) {
		sbx_cmds m = sbx_commands[i].mask;
		CHECK((m & (m - 1)) == 0);     /* one bit, or 0 for a group */
		CHECK(!(known & m) || m == 0); /* never twice */
		known |= m;
		CHECK(sbx_commands[i].group || !m || options_command(m) == &sbx_commands[i]);
		CHECK(!sbx_commands[i].group || options_command_named(NULL, sbx_commands[i].group));
	}
	for (size_t i = 0; i < sbx_options_count; i++) {
		const struct sbx_option *o = &sbx_options[i];
		CHECK(o->cmds == SBX_CMD_ALL || (o->cmds & ~known) == 0);
		CHECK(!(o->flags & SBX_OPT_LOCAL) || !o->section);
		CHECK(!(o->flags & SBX_OPT_LOCAL) || o->cmds == SBX_CMD_ALL ||
		      !(o->cmds & (SBX_CMD_SANDBOX | SBX_CMD_DOWNLOAD | SBX_CMD_MCP | SBX_CMD_PROXY |
				   SBX_CMD_PROFILE_EXPORT)));
		CHECK(o->help && o->help[0] && !strchr(o->help, '\n'));
		for (size_t k = i + 1; k < sbx_options_count; k++) {
			const struct sbx_option *p = &sbx_options[k];
			if (!o->lname || !p->lname || !(o->cmds & p->cmds))
				continue;
			CHECK(strcmp(o->lname, p->lname) != 0);
			CHECK(!o->sname || o->sname != p->sname);
		}
	}
	/* `cache ls|du|prune|fill` have the bits kept for them */
	CHECK((known & SBX_CMD_CACHE) == SBX_CMD_CACHE);
}

static void test_bad_options(void)
{
	struct cli_args a;
	struct sbx_err err;

	for (size_t i = 0; i < sbx_commands_count; i++) {
		const struct sbx_command *c = &sbx_commands[i];
		char *argv[] = { (char *)c->name, "--no-such-option", "x", NULL };
		char want[128];
		if (!c->mask)
			continue;
		CHECK(cli_parse(3, argv, c->mask, NULL, &a, &err) < 0);
		CHECK_CONTAINS(err.msg, "unknown option: '--no-such-option'");
		snprintf(want, sizeof(want), "(see 'sbxrun %s%s%s --help')", c->group ? c->group : "",
			 c->group ? " " : "", c->name);
		CHECK_CONTAINS(err.msg, want);
	}
	char *fmt[] = { "export", "img", "-o", "f.tar", "--format", "zip", NULL };
	CHECK(cli_parse(6, fmt, SBX_CMD_IMAGE_EXPORT, NULL, &a, &err) < 0);
	CHECK_STR(err.msg, "--format: invalid value 'zip' (one of: tar, oci, docker)");
	char *noval[] = { "export", "img", "-o", NULL };
	CHECK(cli_parse(3, noval, SBX_CMD_IMAGE_EXPORT, NULL, &a, &err) < 0);
	CHECK_CONTAINS(err.msg, "option needs a value: '-o'");
	char *shortbad[] = { "rm", "-x", "sp", NULL };
	CHECK(cli_parse(3, shortbad, SBX_CMD_SESSION_RM, NULL, &a, &err) < 0);
	CHECK_CONTAINS(err.msg, "unknown option: '-x' (see 'sbxrun session rm --help')");
	/* options after the operand, for the store's verbs */
	char *imp[] = { "import", "f.tar", "--name", "n1", NULL };
	CHECK(cli_parse(4, imp, SBX_CMD_IMAGE_IMPORT, NULL, &a, &err) == 0);
	CHECK_STR(a.v[SBX_K_NAME], "n1");
	CHECK(a.rest == 3 && !strcmp(imp[a.rest], "f.tar"));
	char *rm[] = { "rm", "sp", "-f", NULL };
	CHECK(cli_parse(3, rm, SBX_CMD_SESSION_RM, NULL, &a, &err) == 0);
	CHECK(a.v[SBX_K_FORCE] != NULL);
	/* cp stops at its first operand: a host path may begin with '-' */
	char *cp[] = { "cp", "s:x", "-f", NULL };
	CHECK(cli_parse(3, cp, SBX_CMD_CP, NULL, &a, &err) == 0 && a.rest == 1);
	/* a group's verb */
	const struct sbx_command *verb = NULL;
	char *grp[] = { "image", "frob", NULL };
	CHECK(cli_verb(2, grp, "image", NULL, &verb, &err) < 0);
	CHECK_CONTAINS(err.msg, "unknown command 'frob' (build, import, ls, rm, inspect, export;");
	char *grp_ok[] = { "image", "export", NULL };
	CHECK(cli_verb(2, grp_ok, "image", NULL, &verb, &err) == 0 && verb->mask == SBX_CMD_IMAGE_EXPORT);
}

/* -v is --verbose however often given; the step trace is --trace. */
static void test_verbose(void)
{
	struct cli_args a;
	struct sbx_err err;
	char *vv[] = { "sbxrun", "-v", "-v", "-vv", "run", NULL };
	sbx_log_level = SBX_LOG_NORMAL;
	CHECK(cli_parse(5, vv, SBX_CMD_MAIN, NULL, &a, &err) == 0);
	CHECK(sbx_log_level == SBX_LOG_VERBOSE);
	CHECK(a.rest == 4);
	char *tr[] = { "ls", "--trace", NULL };
	CHECK(cli_parse(2, tr, SBX_CMD_IMAGE_LS, NULL, &a, &err) == 0);
	CHECK(sbx_log_level == SBX_LOG_TRACE);
	char *q[] = { "sbxrun", "-q", "doctor", NULL };
	CHECK(cli_parse(3, q, SBX_CMD_MAIN, NULL, &a, &err) == 0);
	CHECK(sbx_log_level == SBX_LOG_QUIET);
	sbx_log_level = SBX_LOG_NORMAL;
}

static void print_err(void *arg)
{
	err_print(arg);
}

static void test_plain_errors(void)
{
	struct sbx_err err;

	err_plain(&err, EBUSY, "session 'sp' is running");
	CHECK(err.errnum == EBUSY); /* still there for callers that branch on it */
	char *out = capture(2, print_err, &err);
	CHECK_STR(out, "sbxrun: error: session 'sp' is running\n");
	free(out);
	err_wrap(&err, "context");
	out = capture(2, print_err, &err);
	CHECK_STR(out, "sbxrun: error: context: session 'sp' is running\n");
	free(out);
	/* where the errno is the information, it stays */
	errno = ENOENT;
	err_sys(&err, "open '/x'");
	out = capture(2, print_err, &err);
	CHECK_STR(out, "sbxrun: error: open '/x': No such file or directory\n");
	free(out);
}

/* Every row can be shown (profile show, doctor, the policy's caps): a row
 * of no config field (SBX_OPT_LOCAL) reads nothing of the config (under
 * ASan an enum of export's read past a table; fuzz_policy found it). */
static void test_format_every_row(void)
{
	struct sbx_config cfg;
	char buf[512];

	config_init(&cfg);
	for (size_t i = 0; i < sbx_options_count; i++) {
		const struct sbx_option *o = &sbx_options[i];
		if (config_list(&cfg, o))
			continue;
		config_format(&cfg, o, buf, sizeof(buf));
		if (o->flags & SBX_OPT_LOCAL)
			CHECK(buf[0] == '\0');
	}
	config_free(&cfg);
}

int main(void)
{
	test_format_every_row();
	test_help_lists_everything();
	test_table_shape();
	test_bad_options();
	test_verbose();
	test_plain_errors();
	return unit_done("test_options");
}
