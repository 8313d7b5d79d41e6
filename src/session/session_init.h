/* session_init.h - a session's pid 1: starts each command it is sent. */
#ifndef SBX_SESSION_INIT_H
#define SBX_SESSION_INIT_H

#include "sandbox/sandbox.h"

/* Serves requests from the session supervisor on sync until it goes away
 * or a SIGTERM comes from outside. Never returns. */
__attribute__((noreturn)) void session_init_loop(const struct sbx_plan *plan, int sync, int sfd);

#endif
