/* session_askterm.h - [network] ask on the terminal of a session's client
 * (`session exec -t`, `shell --session`): what the session's proxy holds is
 * asked on the client's terminal as a one-shot run asks it
 * (sandbox/askterm.h), and the answer goes back through the session's
 * control socket as `sbxrun net allow|deny` sends it (docs/egress.md,
 * "Asking"). */
#ifndef SBX_SESSION_ASKTERM_H
#define SBX_SESSION_ASKTERM_H

#include <stdbool.h>
#include <stdint.h>

#include "sandbox/askterm.h"
#include "term/pty.h"

struct session_askterm {
	bool on;               /* the session asks, and this client has a terminal */
	const char *name;      /* the session */
	uint64_t next_ms;      /* when its held requests are read again */
	char *profile;         /* the session's profile, for "always" */
	struct sbx_askterm term;
};

/* on: the client relays a terminal. Reads whether the session asks. */
void session_askterm_init(struct session_askterm *a, const char *name, bool tty);
/* The poll timeout the client's loop may wait at most (-1: forever). */
int session_askterm_wait_ms(const struct session_askterm *a);
/* After each turn of the client's loop: an answer sent, the held requests
 * read again when their time came, the question shown or taken back. */
void session_askterm_step(struct session_askterm *a, struct sbx_pty_relay *relay);
void session_askterm_free(struct session_askterm *a);

#endif
