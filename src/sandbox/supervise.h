/* supervise.h - the host side's loop while a sandbox runs: signals, the
 * watcher (sandbox/watch.h), messages from init, the end of pid 1. */
#ifndef SBX_SUPERVISE_H
#define SBX_SUPERVISE_H

#include <signal.h>
#include <sys/types.h>

#include "sandbox/sandbox.h"

/* Blocks the signals the loop forwards (before clone, so none is lost). */
void supervise_block_signals(sigset_t *set);
struct sbx_proxy;
struct sbx_dnsstub;
struct sbx_pty_relay;
/* px and dns may be NULL (no packages egress, full egress). relay: set up
 * by the caller (pty_relay_init, and pty_relay_divert without -t); the
 * terminal's master joins it here; it is ended on every way out, and the
 * caller's terminal settings are put back (pty_term_restore). */
int supervise(const struct sbx_plan *plan, pid_t pid, int pidfd, int sync, const sigset_t *set,
	      struct sbx_proxy *px, struct sbx_dnsstub *dns, struct sbx_pty_relay *relay,
	      struct sbx_outcome *out, struct sbx_err *err);
/* Kills the sandbox's pid 1 (and so its whole pid namespace) and reaps it. */
void supervise_kill(pid_t pid, int pidfd);

#endif
