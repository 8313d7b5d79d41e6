/* session_exec.h - the session supervisor's loop and its commands. */
#ifndef SBX_SESSION_EXEC_H
#define SBX_SESSION_EXEC_H

#include <signal.h>
#include <stdint.h>

#include "net/dnsstub.h"
#include "net/proxy.h"
#include "sandbox/liverules.h"
#include "sandbox/sandbox.h"
#include "sandbox/watch.h"

#define SBX_SESSION_MAX_CMDS 32
#define SBX_CAPTURE_MAX (1u << 20)

struct sbx_buf {
	char *data;
	size_t len;
};

/* One command running in the session. */
struct sbx_session_cmd {
	int used;
	pid_t pid;         /* its init, our child (CLONE_PARENT), by its pid on the host */
	int pidfd;
	int sync;          /* from its init: pty, exec failure, exit */
	int client;        /* the control connection that asked for it */
	int capture[2];    /* stdout, stderr pipes when the client sent no fds */
	struct sbx_buf out[2];
	struct sbx_watch watch; /* its deadline, its end (exited: everything it ran is gone) */
};

struct sbx_session {
	const struct sbx_config *cfg;
	const char *name;
	const char *dir;
	struct sbx_plan plan;
	struct sbx_sandbox sb;
	struct sbx_proxy *px;  /* packages egress, or NULL */
	struct sbx_liverules live; /* px's rules read again: policy.ini, $SBXRUN_POLICY, the profile */
	struct sbx_dnsstub *dns; /* egress none|packages: the DNS stub, or NULL */
	int listen;
	int stopping;
	/* The next command's init, made ahead by the session's init: a request
	 * goes straight to it on chan. asked: one is on its way. */
	struct { int chan, pidfd; pid_t pid; int asked; } ahead;
	int init_gone;         /* the init's end of sb.sync is closed */
	uint64_t started, last_active;
	uint64_t timeout_cap_ms; /* the policy's [limits] timeout, 0: none */
	struct sbx_watch limits; /* the disk quota and memory its commands share */
	struct sbx_session_cmd cmds[SBX_SESSION_MAX_CMDS];
};

/* Serves until stopped, idle or past its lifetime; returns the exit code. */
int session_serve(struct sbx_session *s, const sigset_t *set);

#endif
