/* init.h - pid 1 of the sandbox and the command it starts. */
#ifndef SBX_INIT_H
#define SBX_INIT_H

#include "sandbox/plan.h"

/* Runs as pid 1 after the filesystem is ready: starts the command, reaps
 * orphans, forwards signals that come from outside, reports how the command
 * ended over sync and exits with its status. Never returns. */
__attribute__((noreturn)) void init_run(const struct sbx_plan *plan, int sync);

#endif
