/* run_cmd.c - `sbxrun run [options] [--] CMD [ARG...]`. */
#include <stdio.h>

#include "base/log.h"
#include "base/outcome.h"
#include "base/util.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "sandbox/record.h"
#include "sandbox/sandbox.h"
#include "session/session_client.h"

static const char usage[] =
	"usage: sbxrun run [options] [--] CMD [ARG...]\n"
	"Runs one command in a fresh sandbox made from an image; exits with its status\n"
	"(128+N if signal N killed it, 124 on timeout, 125 if sbxrun failed,\n"
	"126 if the command cannot run, 127 if it was not found).\n";

static void report(const struct sbx_result *res)
{
	char text[1600];

	outcome_render(&res->out, text, sizeof(text));
	fputs(text, stderr);
	if (res->out.reason == SBX_END_SIGNAL)
		log_verbose("the command was killed by signal %d", res->out.signal);
}

static const char shell_usage[] =
	"usage: sbxrun shell [options]\n"
	"Opens an interactive login shell in a fresh sandbox, on a terminal of its\n"
	"own when stdin is a terminal; otherwise the shell reads commands from stdin.\n";

/* run and shell differ only in where the command comes from. */
static int run_sandbox(int argc, char **argv, unsigned cmd, struct sbx_err *err)
{
	struct sbx_config cfg;
	struct sbx_plan plan;
	struct sbx_result res;
	int rest, r;

	r = cli_sandbox_config(argc, argv, cmd, cmd == SBX_CMD_RUN ? usage : shell_usage, &cfg,
			       &rest, err);
	if (r != 0) {
		config_free(&cfg);
		return r < 0 ? -1 : 0;
	}
	if (cmd == SBX_CMD_RUN && rest >= argc) {
		config_free(&cfg);
		return err_set(err, 0, "run: no command given (usage: sbxrun run [options] [--] CMD [ARG...])");
	}
	if (cmd == SBX_CMD_SHELL && rest < argc) {
		config_free(&cfg);
		return err_set(err, 0, "shell: unexpected argument '%s' (use 'sbxrun run' for a command)",
			       argv[rest]);
	}
	if (cfg.session) {
		log_trace("config and profile read");
		r = session_client_run(&cfg, cmd == SBX_CMD_RUN ? argv + rest : NULL, err);
		config_free(&cfg);
		return r;
	}
	log_trace("config and profile read");
	r = sandbox_plan(&cfg, cmd == SBX_CMD_RUN ? argv + rest : NULL, &plan, err);
	if (r == 0)
		r = sandbox_run(&plan, &res, err);
	if (r == 0) {
		report(&res);
		if (record_write(&cfg, &plan, &res, err) < 0)
			r = -1;
	}
	sandbox_plan_free(&plan);
	config_free(&cfg);
	log_trace("host: done");
	return r < 0 ? -1 : outcome_status(&res.out);
}

int cmd_run(int argc, char **argv, struct sbx_err *err)
{
	return run_sandbox(argc, argv, SBX_CMD_RUN, err);
}

int cmd_shell(int argc, char **argv, struct sbx_err *err)
{
	return run_sandbox(argc, argv, SBX_CMD_SHELL, err);
}
