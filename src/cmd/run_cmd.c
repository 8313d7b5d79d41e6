/* run_cmd.c - `sbxrun run [options] [--] CMD [ARG...]`. */
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/syncmsg.h"
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

static void report(const struct sbx_config *cfg, const struct sbx_result *res)
{
	char when[32];

	if (res->message[0])
		fprintf(stderr, "sbxrun: error: %s\n", res->message);
	if (res->timed_out) {
		format_duration(cfg->timeout_ms, when, sizeof(when));
		fprintf(stderr, "sbxrun: timeout: the command ran longer than %s and was killed\n", when);
	} else if (strcmp(res->reason, "oom") == 0) {
		char m[32];
		const char *mech = res->mechanism[SBX_K_MEMORY];
		format_size(cfg->memory, m, sizeof(m));
		fprintf(stderr, "sbxrun: out of memory%s: the sandbox reached its memory limit (%s) and was killed\n",
			mech && strcmp(mech, "rlimit+accounting") == 0 ? " (accounted by sbxrun, no cgroup)" : "", m);
	} else if (strcmp(res->reason, "disk") == 0) {
		char q[32];
		format_size(cfg->disk, q, sizeof(q));
		fprintf(stderr, "sbxrun: disk quota: the sandbox wrote more than %s on disk and was killed\n", q);
	} else if (strcmp(res->reason, "pids") == 0) {
		fprintf(stderr, "sbxrun: the sandbox reached its process limit (--pids)\n");
	} else if (res->kind == SBX_EXIT_SIGNAL) {
		log_verbose("the command was killed by signal %d", res->code);
	}
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
		report(&cfg, &res);
		if (record_write(&cfg, &plan, &res, err) < 0)
			r = -1;
	}
	sandbox_plan_free(&plan);
	config_free(&cfg);
	log_trace("host: done");
	return r < 0 ? -1 : res.exit_status;
}

int cmd_run(int argc, char **argv, struct sbx_err *err)
{
	return run_sandbox(argc, argv, SBX_CMD_RUN, err);
}

int cmd_shell(int argc, char **argv, struct sbx_err *err)
{
	return run_sandbox(argc, argv, SBX_CMD_SHELL, err);
}
