/* changes_cmd.c - `sbxrun changes ls|show|diff|export|apply|discard|prune`: the
 * change sets `run --project DIR` keeps (src/undo/). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/policy.h"
#include "base/profile.h"
#include "base/util.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "undo/apply.h"
#include "undo/changeset.h"
#include "undo/csdiff.h"
#include "undo/csname.h"
#include "undo/cspatch.h"
#include "undo/project.h"
#include "undo/snapshot.h"
#include "undo/undostore.h"

void changes_report_print(const struct apply_report *rep)
{
	for (size_t i = 0; i < rep->n; i++)
		fprintf(stderr, "sbxrun: %s\n", rep->lines[i]);
}

void changes_kept_print(const struct changeset *cs)
{
	if (sbx_log_level > SBX_LOG_QUIET)
		fprintf(stderr, "sbxrun: changes %s: %zu added, %zu changed, %zu deleted (sbxrun changes show %s)\n",
			cs->id, cs->added, cs->changed, cs->deleted, cs->id);
}

static void age(int64_t start, char *buf, size_t size)
{
	int64_t now = (int64_t)time(NULL);
	if (now <= start)
		snprintf(buf, size, "0s");
	else
		format_duration((uint64_t)(now - start) * 1000, buf, size);
}

/* When the set began: its manifest's start, else its id's time. */
static int64_t started(const struct changeset *cs, const char *id)
{
	return cs->start_s ? cs->start_s : undostore_id_time(id);
}

/* Why a set cannot be read, on one line (a name in it is the sandbox's). */
static char *damage(const struct sbx_err *e)
{
	_cleanup_free_ char *m = e->errnum && !e->plain ? xasprintf("%s: %s", e->msg, strerror(e->errnum))
							 : xstrdup(e->msg);
	return csname_show(m);
}

/* One row of ls: a set that loaded, or (bad) one that did not, listed
 * with its id all the same, so that it can be discarded or pruned. */
static void ls_row(const char *id, const struct changeset *cs, const struct sbx_err *bad)
{
	char a[32], s[32], n[3][24];
	size_t v[3] = { cs->added, cs->changed, cs->deleted };

	for (int i = 0; i < 3; i++)
		snprintf(n[i], sizeof(n[i]), bad ? "-" : "%zu", v[i]);
	age(started(cs, id), a, sizeof(a));
	format_size_human(undostore_bytes(cs->dir), s, sizeof(s));
	_cleanup_free_ char *proj = csname_show(cs->project ? cs->project : "-");
	_cleanup_free_ char *why = bad ? damage(bad) : NULL;
	_cleanup_free_ char *live = !cs->live ? xstrdup("")
		: cs->session ? xasprintf(" (live: session %s)", cs->session) : xstrdup(" (live: its run goes on)");
	_cleanup_free_ char *dmg = why ? xasprintf(" (damaged: %s)", why) : xstrdup("");
	printf("%-22s %-8s %7s %7s %7s %9s  %s%s%s\n", id, a, n[0], n[1], n[2], s, proj, live, dmg);
}

static int changes_ls(struct sbx_err *err)
{
	_cleanup_strv_ char **ids = NULL;

	if (changeset_list(&ids, err) < 0)
		return -1;
	printf("%-22s %-8s %7s %7s %7s %9s  %s\n", "ID", "AGE", "ADDED", "CHANGED", "DELETED", "SIZE", "PROJECT");
	for (char **id = ids; *id; id++) {
		struct changeset cs;
		struct sbx_err e2;
		int bad = project_load(*id, &cs, &e2) < 0;
		if (cs.dir)
			ls_row(*id, &cs, bad ? &e2 : NULL);
		else
			log_warn("%s", e2.msg);
		changeset_free(&cs);
	}
	return 0;
}

/* Each entry's verdict against the host now, as apply would find it; a
 * project that is gone or another directory is said, not fatal, for a
 * set that is only looked at. */
static void verdicts(struct changeset *cs)
{
	struct sbx_err e2;
	size_t nbad;

	if (changeset_verdicts(cs, &nbad, &e2) < 0)
		log_warn("%s; shown without the verdicts apply would give", e2.msg);
}

static int changes_show(struct changeset *cs, bool all, struct sbx_err *err)
{
	struct cs_render o = { .umask_bits = changeset_umask(), .all = all };

	verdicts(cs);
	return changeset_show(cs, &o, stdout, err);
}

/* On a terminal every byte of the sandbox's goes through an escaping
 * stream (`cat -v`); to a pipe or a file the diff is the files' own bytes,
 * as git writes them. */
static int changes_diff(struct changeset *cs, char *const *paths, size_t npaths, struct sbx_err *err)
{
	struct cs_render o = { .umask_bits = changeset_umask() };
	FILE *out = isatty(STDOUT_FILENO) ? csname_escaping(stdout) : stdout;

	if (!out)
		return err_sys(err, "changes diff: an escaping stream");
	verdicts(cs);
	int r = changeset_render_diff(cs, paths, npaths, &o, out, err);
	if (out != stdout && fclose(out) != 0 && r == 0)
		r = err_sys(err, "write the diff");
	return r;
}

static int changes_export(struct changeset *cs, const char *file, char *const *paths, size_t npaths,
			  struct sbx_err *err)
{
	if (!file)
		return err_set(err, 0, "changes export: --patch FILE is required");
	verdicts(cs);
	if (changeset_export_patch(cs, paths, npaths, changeset_umask(), file, err) < 0)
		return -1;
	_cleanup_free_ char *q = csname_show(file);
	fprintf(stderr, "sbxrun: changes %s: written to %s as a patch (git apply %s)\n", cs->id, q, q);
	return 0;
}

static int changes_apply(struct changeset *cs, char *const *paths, size_t npaths,
			 const struct cli_args *a, struct sbx_err *err)
{
	struct apply_report rep = { 0 };
	struct sbx_err e2;
	unsigned flags = (a->v[SBX_K_FORCE_REST] ? APPLY_FORCE_REST : 0) |
			 (a->v[SBX_K_EXACT_MODES] ? APPLY_EXACT_MODES : 0);
	int r = apply_changeset(cs, paths, npaths, flags, &rep, err);

	changes_report_print(&rep);
	if (r == 0) {
		fprintf(stderr, "sbxrun: changes %s: %zu applied to %s%s\n", cs->id, rep.applied,
			cs->project, rep.conflicts || rep.skipped ? " (the rest left out, above)" : "");
		/* all of it applied: the set is done */
		if (!npaths && !rep.conflicts && !rep.skipped && changeset_remove_later(cs, &e2) < 0)
			log_warn("change set %s: %s", cs->id, e2.msg);
	}
	apply_report_free(&rep);
	return r;
}

/* [limits] changes_max of the profile (and the policy's ceiling): the one
 * cap over change sets and snapshots. */
int changes_max(const char *profile, uint64_t *max, struct sbx_err *err)
{
	struct sbx_policy pol;
	struct sbx_config cfg;

	if (policy_load(&pol, err) < 0)
		return -1;
	config_init(&cfg);
	int r = profile_load(&cfg, profile ? profile : "default", err) < 0 ||
		policy_apply(&pol, &cfg, err) < 0 || config_check(&cfg, err) < 0 ? -1 : 0;
	*max = cfg.changes_max;
	policy_free(&pol);
	config_free(&cfg);
	return r;
}

static int changes_prune(const struct cli_args *a, struct sbx_err *err)
{
	_cleanup_strv_ char **ids = NULL;
	uint64_t older = 0, max = 0, used = 0;
	size_t n = 0;
	bool all = a->v[SBX_K_CHANGES_ALL] != NULL;

	if (a->v[SBX_K_CHANGES_OLDER] && parse_duration_ms(a->v[SBX_K_CHANGES_OLDER], &older, err) < 0)
		return -1;
	if (all && older)
		return err_set(err, 0, "changes prune: --all or --older, not both");
	/* what a snapshot killed half way left goes first */
	struct sbx_err e3;
	if (snapshot_sweep(&n, &e3) < 0)
		log_warn("%s", e3.msg);
	/* and what a removal after an apply left (changeset_remove_later) */
	changeset_sweep();
	n = 0;
	if (!all && !older && (changes_max(a->v[SBX_K_PROFILE], &max, err) < 0 ||
			       undostore_usage(&used, err) < 0))
		return -1;
	if (changeset_list(&ids, err) < 0)
		return -1;
	for (char **id = ids; *id; id++) {
		struct changeset cs;
		struct sbx_err e2;
		/* one a sandbox still writes is never pruned */
		if ((project_load(*id, &cs, &e2) < 0 && !cs.dir) || cs.live) {
			changeset_free(&cs);
			continue;
		}
		/* a damaged one too (changes ls marks it): by its id's time */
		int64_t ago = (int64_t)time(NULL) - started(&cs, *id);
		bool go = all || (older && ago >= 0 && (uint64_t)ago * 1000 >= older) ||
			  (!all && !older && max && used > max);
		uint64_t bytes = go ? undostore_bytes(cs.dir) : 0;
		if (go && changeset_remove(&cs, &e2) == 0) {
			n++;
			used = used > bytes ? used - bytes : 0;
		} else if (go) {
			log_warn("change set %s: %s", *id, e2.msg);
		}
		changeset_free(&cs);
	}
	printf("changes prune: %zu change set%s removed\n", n, n == 1 ? "" : "s");
	return 0;
}

int cmd_changes(int argc, char **argv, struct sbx_err *err)
{
	const struct sbx_command *verb;
	struct cli_args a;
	struct changeset cs;
	int r = cli_verb(argc, argv, "changes", NULL, &verb, err);

	if (r != 0)
		return r < 0 ? -1 : 0;
	r = cli_parse(argc - 1, argv + 1, verb->mask, NULL, &a, err);
	if (r != 0)
		return r < 0 ? -1 : 0;
	int nops = argc - 1 - a.rest;
	char *const *ops = argv + 1 + a.rest;
	bool takes_id = verb->mask & (SBX_CMD_CHANGES_SHOW | SBX_CMD_CHANGES_DIFF | SBX_CMD_CHANGES_EXPORT |
				      SBX_CMD_CHANGES_APPLY | SBX_CMD_CHANGES_DISCARD);
	bool takes_paths = verb->mask & (SBX_CMD_CHANGES_DIFF | SBX_CMD_CHANGES_EXPORT | SBX_CMD_CHANGES_APPLY);
	if (takes_id && nops < 1)
		return err_set(err, 0, "changes %s: no change set id given (see 'sbxrun changes ls')", verb->name);
	if (nops > (takes_id ? (takes_paths ? INT32_MAX : 1) : 0))
		return err_set(err, 0, "changes %s: unexpected argument '%s'", verb->name, ops[takes_id ? 1 : 0]);
	if (verb->mask == SBX_CMD_CHANGES_LS)
		return changes_ls(err);
	if (verb->mask == SBX_CMD_CHANGES_PRUNE)
		return changes_prune(&a, err);
	if (project_load(ops[0], &cs, err) < 0 && (!cs.dir || verb->mask != SBX_CMD_CHANGES_DISCARD)) {
		changeset_free(&cs);
		return -1;
	}
	if (cs.live && (verb->mask & (SBX_CMD_CHANGES_APPLY | SBX_CMD_CHANGES_DISCARD))) {
		r = cs.session ? err_set(err, 0, "change set %s: the session '%s' still writes it; stop it first "
					 "('sbxrun session stop %s')", cs.id, cs.session, cs.session)
			       : err_set(err, 0, "change set %s: its run has not ended", cs.id);
		changeset_free(&cs);
		return r;
	}
	if (cs.live)
		log_info("change set %s: %s still writes it; this is what it holds now", cs.id,
			 cs.session ? cs.session : "its run");
	switch (verb->mask) {
	case SBX_CMD_CHANGES_SHOW: r = changes_show(&cs, a.v[SBX_K_SHOW_ALL] != NULL, err); break;
	case SBX_CMD_CHANGES_DIFF: r = changes_diff(&cs, ops + 1, (size_t)nops - 1, err); break;
	case SBX_CMD_CHANGES_EXPORT:
		r = changes_export(&cs, a.v[SBX_K_PATCH], ops + 1, (size_t)nops - 1, err);
		break;
	case SBX_CMD_CHANGES_APPLY:
		r = changes_apply(&cs, ops + 1, (size_t)nops - 1, &a, err);
		break;
	default:
		r = changeset_remove(&cs, err);
		if (r == 0)
			fprintf(stderr, "sbxrun: changes %s: discarded\n", cs.id);
	}
	changeset_free(&cs);
	return r;
}
