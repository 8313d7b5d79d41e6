/* run_cmd.c - `sbxrun run [options] [--] CMD [ARG...]`. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/outcome.h"
#include "base/util.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/wscopy.h"
#include "sandbox/record.h"
#include "sandbox/sandbox.h"
#include "session/session_client.h"
#include "undo/apply.h"
#include "undo/changeset.h"
#include "undo/project.h"

static const char usage[] =
	"usage: sbxrun run [options] [--] CMD [ARG...]\n"
	"Runs one command in a fresh sandbox made from an image; exits with its status\n"
	"(128+N if signal N killed it, 124 on timeout, 125 if sbxrun failed,\n"
	"126 if the command cannot run, 127 if it was not found).\n"
	"--copy brings host files in first; --out DIR takes the workspace out after.\n";

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

/* --copy: the workspace is filled before the command starts; it is kept
 * open for --out and the hint. */
struct ws_state {
	const struct sbx_config *cfg;
	int wsfd;
};

static int ws_hook(void *arg, int wsfd, struct sbx_err *err)
{
	struct ws_state *st = arg;

	if (wscopy_in(st->cfg, wsfd, err) < 0)
		return -1;
	st->wsfd = fcntl(wsfd, F_DUPFD_CLOEXEC, 3);
	return st->wsfd < 0 ? err_sys(err, "keep the workspace open") : 0;
}

/* The signals that end a copy out (kept blocked since supervise). */
static void stop_signals(sigset_t *stop)
{
	sigemptyset(stop);
	sigaddset(stop, SIGINT);
	sigaddset(stop, SIGTERM);
	sigaddset(stop, SIGHUP);
}

/* run/shell --session: --copy into its workspace, the command, --out. */
static int run_in_session(const struct sbx_config *cfg, char *const *argv, struct sbx_err *err)
{
	_cleanup_close_ int rootfd = -1, wsfd = -1;
	_cleanup_free_ char *ws = NULL;
	uint64_t disk = 0, image = 0;
	sigset_t stop;

	if (cfg->copies.n || cfg->out_dir) {
		session_sizes(cfg->session, &disk, &image);
		if (wscopy_check(cfg, disk, 0, err) < 0 ||
		    (wsfd = wscopy_session_open(cfg->session, &rootfd, &ws, err)) < 0 ||
		    wscopy_in(cfg, wsfd, err) < 0)
			return -1;
	}
	int status = session_client_run(cfg, argv, err);
	struct sbx_err e2;
	if (status > 0 && argv && sbx_log_level > SBX_LOG_QUIET &&
	    (wsfd >= 0 || (wsfd = wscopy_session_open(cfg->session, &rootfd, &ws, &e2)) >= 0))
		wscopy_hint(cfg, argv, cfg->workdir ? cfg->workdir : ws, wsfd, rootfd);
	stop_signals(&stop);
	if (status >= 0 && cfg->out_dir && wscopy_out(cfg, wsfd, cfg->session, &stop, err) < 0)
		return -1;
	return status;
}

/* After the command: what it changed is kept (one line says so), applied
 * (--apply) or thrown away (--discard); nothing changed: nothing kept. */
static int project_end(const struct sbx_config *cfg, struct sbx_plan *plan, struct changeset *cs,
		       struct sbx_err *err)
{
	struct sbx_err e2;

	if (changeset_capture(cs, err) < 0)
		return err_wrap(err, "change set %s (kept as the run left it)", cs->id);
	plan->project.id = cs->id;
	plan->project.added = cs->added;
	plan->project.changed = cs->changed;
	plan->project.deleted = cs->deleted;
	plan->project.fate = "kept";
	if (cs->n == 0 || cfg->project_discard) {
		plan->project.fate = cs->n ? "discarded" : "empty";
		if (changeset_remove(cs, &e2) < 0)
			log_warn("change set %s: %s", cs->id, e2.msg);
		if (sbx_log_level > SBX_LOG_QUIET)
			fprintf(stderr, cs->n ? "sbxrun: changes %s: discarded (--discard)\n"
					      : "sbxrun: changes: none, the project is as it was\n", cs->id);
		return 0;
	}
	changes_kept_print(cs);
	if (!cfg->project_apply)
		return 0;
	struct apply_report rep = { 0 };
	int r = apply_changeset(cs, NULL, 0, cfg->project_exact_modes ? APPLY_EXACT_MODES : 0, &rep, err);
	changes_report_print(&rep);
	apply_report_free(&rep);
	if (r < 0)
		return err_wrap(err, "--apply: change set %s kept", cs->id);
	plan->project.fate = "applied";
	if (changeset_remove_later(cs, &e2) < 0)
		log_warn("change set %s: %s", cs->id, e2.msg);
	return 0;
}

/* A fresh sandbox: --copy and --out checked before it is made. */
static int run_fresh(struct sbx_config *cfg, char *const *argv, struct sbx_err *err)
{
	struct sbx_plan plan;
	struct sbx_result res;
	struct ws_state st = { cfg, -1 };
	sigset_t stop;

	struct changeset cs = { 0 };
	/* --project: the change set first, its layer in cfg for the plan */
	if (cfg->project && project_prepare(cfg, NULL, &cs, err) < 0) {
		changeset_free(&cs);
		return -1;
	}
	int r = sandbox_plan(cfg, argv, &plan, err);
	if (r == 0 && (cfg->copies.n || cfg->out_dir)) {
		r = wscopy_check(cfg, cfg->disk, plan.ws_seed, err);
		plan.ws_hook = ws_hook;
		plan.ws_hook_arg = &st;
	}
	if (r == 0)
		r = sandbox_run(&plan, &res, err);
	int ran = r == 0;
	if (r == 0) {
		report(&res);
		if (cs.id && project_end(cfg, &plan, &cs, err) < 0)
			r = -1;
		if (outcome_status(&res.out) != 0 && argv && !cs.id)
			wscopy_hint(cfg, argv, plan.workdir, st.wsfd, plan.img.rootfs_fd);
		if (r == 0 && record_write(cfg, &plan, &res, err) < 0)
			r = -1;
		stop_signals(&stop);
		if (r == 0 && cfg->out_dir && wscopy_out(cfg, st.wsfd, NULL, &stop, err) < 0)
			r = -1;
	}
	if (st.wsfd >= 0)
		close(st.wsfd);
	if (cs.id && !ran) {
		struct sbx_err e2;
		changeset_remove(&cs, &e2); /* the sandbox was never made: nothing ran */
	}
	changeset_free(&cs);
	sandbox_plan_free(&plan);
	log_trace("host: done");
	return r < 0 ? -1 : outcome_status(&res.out);
}

/* run and shell differ only in where the command comes from. */
static int run_sandbox(int argc, char **argv, sbx_cmds cmd, struct sbx_err *err)
{
	struct sbx_config cfg;
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
	log_trace("config and profile read");
	char *const *command = cmd == SBX_CMD_RUN ? argv + rest : NULL;
	r = cfg.session ? run_in_session(&cfg, command, err) : run_fresh(&cfg, command, err);
	config_free(&cfg);
	return r;
}

int cmd_run(int argc, char **argv, struct sbx_err *err)
{
	return run_sandbox(argc, argv, SBX_CMD_RUN, err);
}

int cmd_shell(int argc, char **argv, struct sbx_err *err)
{
	return run_sandbox(argc, argv, SBX_CMD_SHELL, err);
}
