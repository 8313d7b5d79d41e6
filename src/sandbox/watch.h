/* watch.h - the one command watcher: the command's deadline, the disk
 * quota's walk and the memory sum (limits sbxrun enforces itself), the
 * cgroup's OOM and pids counters, and the messages from the command's init,
 * folded into how the command ended (base/outcome.h). A plain run's
 * supervisor (supervise.c) uses one for the whole sandbox; a session's
 * supervisor (session_exec.c) one per command, and one more for the
 * session's disk and memory, which its commands share. */
#ifndef SBX_WATCH_H
#define SBX_WATCH_H

#include <stdint.h>
#include <sys/types.h>

#include "base/outcome.h"
#include "base/syncmsg.h"
#include "sandbox/memacct.h"
#include "sandbox/sandbox.h"

struct sbx_watch {
	const struct sbx_plan *plan;
	int whole;                /* the command is the whole sandbox (a run) */
	uint64_t start, deadline; /* deadline 0: none */
	uint64_t disk_at, mem_at; /* the next quota walk and memory sum, 0: none */
	uint64_t oom0, pids0;     /* the cgroup's counters when the command started */
	struct sbx_memacct acct;
	int exited;               /* its init reported the command's end */
	struct sbx_outcome out;
};

/* Starts watching now: timeout_ms 0 is none; limits: also walk the disk
 * quota and sum the memory (where sbxrun enforces them), as for a run or a
 * whole session; whole: the cgroup is the command's alone. */
void watch_start(struct sbx_watch *w, const struct sbx_plan *plan, uint64_t timeout_ms, int limits,
		 int whole);
/* Milliseconds until watch_tick has something to do, -1: nothing. */
int watch_poll_ms(const struct sbx_watch *w, uint64_t now);
/* The deadline, the quota walk and the memory sum over roots (the
 * processes whose trees are the sandbox's): the reason to kill for now
 * (recorded), or SBX_END_NONE. */
enum sbx_end watch_tick(struct sbx_watch *w, const pid_t *roots, size_t nroots, uint64_t now);
/* A kill decided by another watcher (a session's disk or memory). */
void watch_killed(struct sbx_watch *w, enum sbx_end why, const struct sbx_watch *by);
/* A message from the command's init: EXIT, EXEC_FAILED or ERROR. */
void watch_msg(struct sbx_watch *w, const struct sbx_msg *m);
/* After the command's init ended: how and status are its siginfo's
 * si_code and si_status from waitid (how -1: unknown, a session's command
 * init is not the supervisor's child). Fills out. */
void watch_finish(struct sbx_watch *w, int how, int status, struct sbx_outcome *out);
void watch_free(struct sbx_watch *w);

#endif
