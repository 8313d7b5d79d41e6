/* child.c - the sandbox's first process, inside its new namespaces, from
 * the host side's GO to pid 1: it walks its rows of the containment list
 * (contain.c: identity, cgroup namespace, network namespace, file system,
 * READY, non-dumpable), reports the first failure to the host side and
 * runs init (init.c). */
#define _GNU_SOURCE
#include "sandbox/child.h"

#include <unistd.h>

#include "base/syncmsg.h"
#include "sandbox/contain.h"
#include "sandbox/init.h"

void child_main(const struct sbx_plan *plan, int sync)
{
	struct sbx_err err = { 0 };
	struct contain c = { .plan = plan, .fd = sync, .slave = -1, .go_fd = -1 };

	if (contain_walk(&c, CONTAIN_CHILD, &err) < 0) {
		msg_send_error(sync, &err, SBX_ORIGIN_SETUP);
		_exit(125);
	}
	init_run(plan, sync);
}

void child_landlock_main(const struct sbx_plan *plan, int sync)
{
	struct sbx_err err = { 0 };
	struct contain c = { .plan = plan, .fd = sync, .slave = -1, .go_fd = -1 };

	if (contain_walk(&c, CONTAIN_LL_CHILD, &err) < 0) {
		msg_send_error(sync, &err, SBX_ORIGIN_SETUP);
		_exit(125);
	}
	init_run(plan, sync);
}
