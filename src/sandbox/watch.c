/* watch.c - the one command watcher (watch.h): what ends a command besides
 * the command itself, and how it ended, told once for runs and sessions. */
#define _GNU_SOURCE
#include "sandbox/watch.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "base/log.h"
#include "base/util.h"
#include "sandbox/diskuse.h"
#include "sandbox/limits.h"

void watch_start(struct sbx_watch *w, const struct sbx_plan *plan, uint64_t timeout_ms, int limits,
		 int whole)
{
	struct sbx_limits_outcome c;

	memset(w, 0, sizeof(*w));
	w->plan = plan;
	w->whole = whole;
	w->start = now_ms();
	w->deadline = timeout_ms ? w->start + timeout_ms : 0;
	w->out.limit = timeout_ms;
	if (limits && plan->disk &&
	    ((plan->storage == SBX_STORAGE_DISK && plan->run_dir) || plan->project.upper_fd >= 0))
		w->disk_at = w->start + 50;
	if (limits && limits_memory_accounted(&plan->lim) && plan->lim.memory)
		w->mem_at = w->start + MEMACCT_FIRST_MS;
	memacct_init(&w->acct, plan->lim.memory);
	if (!whole && limits_outcome(&plan->lim, &c) == 0) {
		w->oom0 = c.oom_kills;
		w->pids0 = c.pids_refused;
	}
}

int watch_poll_ms(const struct sbx_watch *w, uint64_t now)
{
	uint64_t at = UINT64_MAX;
	/* not once the command has ended: its init is ending all else */
	const uint64_t when[] = { w->out.reason ? 0 : w->deadline, w->disk_at, w->mem_at };

	for (size_t i = 0; i < ARRAY_SIZE(when) && !w->exited; i++)
		if (when[i] && when[i] < at)
			at = when[i];
	if (at == UINT64_MAX)
		return -1;
	return at <= now ? 0 : (int)(at - now > 86400000 ? 86400000 : at - now);
}

static enum sbx_end kill_for(struct sbx_watch *w, enum sbx_end why)
{
	if (w->out.reason)
		return SBX_END_NONE;
	w->out.reason = why;
	if (why == SBX_END_DISK)
		w->out.limit = w->plan->disk;
	if (why == SBX_END_OOM) {
		w->out.limit = w->plan->lim.memory;
		w->out.accounted = limits_memory_accounted(&w->plan->lim);
	}
	return why;
}

/* One layer's walk within what is left of the quota; 1 when over. */
static int walk_layer(const struct sbx_plan *plan, int dirfd, uint64_t *used)
{
	struct sbx_diskuse du;

	if (diskuse_check(dirfd, plan->host_uid, plan->host_gid, plan->disk - *used, &du)) {
		if (du.errnum)
			log_warn("disk quota: cannot %s: %s; the sandbox is ended", du.what, strerror(du.errnum));
		return 1;
	}
	*used += du.bytes;
	return 0;
}

/* storage = disk: sbxrun's own walk of the writable layer, again after 20
 * times what it cost, sooner the closer the quota is; with --project, the
 * project's layer (on disk whatever storage is) within what is left. */
static int over_quota(struct sbx_watch *w, uint64_t now)
{
	const struct sbx_plan *plan = w->plan;
	uint64_t used = 0;

	if ((plan->storage == SBX_STORAGE_DISK && plan->run_dir &&
	     walk_layer(plan, plan->run_lock, &used)) ||
	    (plan->project.upper_fd >= 0 && walk_layer(plan, plan->project.upper_fd, &used))) {
		w->disk_at = 0;
		return 1;
	}
	uint64_t t = now_ms();
	w->disk_at = t + diskuse_next_ms(t - now, used, plan->disk);
	return 0;
}

/* Memory on the rlimit fallback: sbxrun's own sum, again by what the
 * sample cost and how close the limit is. */
static int over_memory(struct sbx_watch *w, const pid_t *roots, size_t nroots, uint64_t now)
{
	uint64_t next;

	if (memacct_check(&w->acct, roots, nroots, &next)) {
		w->mem_at = now + MEMACCT_FIRST_MS;
		return 1;
	}
	w->mem_at = now + next;
	return 0;
}

enum sbx_end watch_tick(struct sbx_watch *w, const pid_t *roots, size_t nroots, uint64_t now)
{
	if (w->exited)
		return SBX_END_NONE;
	if (w->deadline && now >= w->deadline && !w->out.reason)
		return kill_for(w, SBX_END_TIMEOUT);
	if (w->disk_at && now >= w->disk_at && over_quota(w, now))
		return kill_for(w, SBX_END_DISK);
	if (w->mem_at && now >= w->mem_at && over_memory(w, roots, nroots, now)) {
		if (w->whole)
			w->mem_at = 0;
		return kill_for(w, SBX_END_OOM);
	}
	return SBX_END_NONE;
}

void watch_killed(struct sbx_watch *w, enum sbx_end why, const struct sbx_watch *by)
{
	if (w->out.reason || w->exited)
		return;
	w->out.reason = why;
	w->out.limit = by->out.limit;
	w->out.accounted = by->out.accounted;
}

void watch_msg(struct sbx_watch *w, const struct sbx_msg *m)
{
	struct sbx_outcome *o = &w->out;

	if (m->type == SBX_MSG_EXIT) {
		w->exited = 1;
		o->signal = m->kind == SBX_EXIT_SIGNAL ? m->code : 0;
		o->code = m->kind == SBX_EXIT_CODE ? m->code : 0;
		o->peak_memory = (uint64_t)(m->peak_kb > 0 ? m->peak_kb : 0) * 1024;
	} else if (m->type == SBX_MSG_ERROR && !o->reason) {
		msg_error_outcome(m, o);
	} else if (m->type == SBX_MSG_EXEC_FAILED && !o->reason) {
		/* 126/127: the command's own failure; 125: its set-up's */
		struct sbx_msg e = *m;
		if (m->code != 125)
			e.errnum = 0;
		e.origin = SBX_ORIGIN_COMMAND;
		msg_error_outcome(&e, o);
		o->code = m->code;
	}
}

/* The cgroup's counters: an OOM kill while the command ran, or a fork the
 * pids controller refused when the command failed. */
static void read_counters(struct sbx_watch *w, struct sbx_outcome *o)
{
	struct sbx_limits_outcome c;

	if (limits_outcome(&w->plan->lim, &c) < 0)
		return;
	if (w->whole && c.peak_memory)
		o->peak_memory = c.peak_memory;
	if (o->reason == SBX_END_TIMEOUT || o->reason == SBX_END_DISK || o->reason == SBX_END_ERROR ||
	    (o->reason == SBX_END_OOM && o->accounted))
		return;
	if (c.oom_kills > w->oom0) {
		o->reason = SBX_END_OOM;
		o->limit = w->plan->lim.memory;
		o->accounted = 0;
	} else if (c.pids_refused > w->pids0 && outcome_status(o) != 0) {
		o->reason = SBX_END_PIDS;
		o->limit = 0;
	}
}

void watch_finish(struct sbx_watch *w, int how, int status, struct sbx_outcome *out)
{
	struct sbx_outcome *o = &w->out;

	if (w->exited && !o->reason)
		o->reason = o->signal ? SBX_END_SIGNAL : SBX_END_EXIT;
	if (!w->exited && o->reason != SBX_END_ERROR) {
		/* init ended without a word: killed (by us, or by memory.oom.group,
		 * which takes init too), or it crashed */
		o->signal = how == CLD_EXITED ? 0 : how > 0 ? status : SIGKILL;
		o->code = how == CLD_EXITED ? status : 0;
	}
	if (o->reason != SBX_END_TIMEOUT)
		o->limit = o->reason == SBX_END_OOM || o->reason == SBX_END_DISK ? o->limit : 0;
	read_counters(w, o);
	if (!o->reason)
		o->signal = 0;
	if (!o->reason)
		outcome_error(o, SBX_ORIGIN_INIT, "the %s init ended unexpectedly", w->whole ? "sandbox's" : "command's");
	if (w->whole && w->acct.peak > o->peak_memory)
		o->peak_memory = w->acct.peak;
	o->duration_ms = now_ms() - w->start;
	*out = *o;
}

void watch_free(struct sbx_watch *w)
{
	memacct_free(&w->acct);
}
