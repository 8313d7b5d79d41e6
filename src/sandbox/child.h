/* child.h - the sandbox's first process, from clone to pid 1 (child.c). */
#ifndef SBX_CHILD_H
#define SBX_CHILD_H

#include "sandbox/plan.h"

/* In the cloned child: waits for GO on sync, sets the sandbox up, sends
 * READY (or its error) and becomes pid 1. Never returns. */
__attribute__((noreturn)) void child_main(const struct sbx_plan *plan, int sync);
/* The same for the landlock tier (plan->ll): a plain child, no namespace;
 * it restricts itself to the domain and becomes the sandbox's init. */
__attribute__((noreturn)) void child_landlock_main(const struct sbx_plan *plan, int sync);

#endif
