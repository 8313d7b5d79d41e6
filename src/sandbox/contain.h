/* contain.h - the one containment list: every step the sandbox's processes
 * take between the host side's GO and the command's exec, in order
 * (contain.c). Each process walks the rows marked for it. */
#ifndef SBX_CONTAIN_H
#define SBX_CONTAIN_H

#include <stddef.h>

#include "sandbox/mounts.h"
#include "sandbox/nethelper.h"
#include "sandbox/plan.h"

/* Who walks a row; a row may be walked by several. */
enum contain_who {
	CONTAIN_CHILD = 1 << 0,    /* the first process, from GO to pid 1 (child.c) */
	CONTAIN_NS_MAKER = 1 << 1, /* a session's pid 1, once set up (session_init.c) */
	CONTAIN_AHEAD = 1 << 2,    /* a session's command init, made ahead (session_init.c) */
	CONTAIN_INIT = 1 << 3,     /* a run's pid 1, before it starts the command (init.c) */
	CONTAIN_COMMAND = 1 << 4,  /* the command, from its init's clone to exec (init.c) */
	CONTAIN_LL_CHILD = 1 << 5, /* the landlock tier's first process: no namespace (child.c) */
};

/* What the walker carries from step to step. */
struct contain {
	const struct sbx_plan *plan;
	int fd;             /* the one inherited fd kept: the child's sync socket, the
			     * made-ahead init's channel, the command's report pipe */
	int slave;          /* the command: its terminal's peer, or -1 */
	const int *signals; /* the command: those its init handled, back to default */
	size_t nsignals;
	int code;           /* after a failure: the exit status (125; exec's 126, 127) */
	struct sbx_mount_src ms; /* the child: host sources, opened before its identity */
	int go_fd;          /* the child: an fd the host side sent with GO (a root
			     * caller's --project DIR, idmapped), or -1 */
	struct nethelper net;    /* the child: the network namespace's helper */
};

/* Walks the rows marked for who, in order; -1 with err (and c->code) at
 * the first that fails. Some steps end the process themselves when the
 * host side is gone (exit 125, nothing to report to); exec does not
 * return on success. */
int contain_walk(struct contain *c, enum contain_who who, struct sbx_err *err);

#endif
