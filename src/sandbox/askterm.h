/* askterm.h - [network] ask on the caller's terminal: for an interactive
 * `run -t` or `shell`, a request the proxy holds is one question on the
 * caller's stderr, answered by one key on the caller's terminal (pty.c's
 * relay reads it; the sandbox can neither see nor type it): the answer is
 * the live rule the question showed (docs/egress.md, "Asking"). */
#ifndef SBX_ASKTERM_H
#define SBX_ASKTERM_H

#include <stdint.h>

#include "net/proxy.h"
#include "term/pty.h"

/* Where the held requests are and where an answer goes: the proxy itself
 * (a one-shot run; askterm_proxy) or a session's, through its control
 * socket (session_client.c). */
typedef void (*askterm_seen_fn)(void *arg, uint64_t id, const char *host, int port, uint64_t waited_ms,
			       uint64_t left_ms);
struct askterm_source {
	void (*each)(void *ctx, askterm_seen_fn fn, void *arg);
	int (*decide)(void *ctx, const char *entry, enum proxy_rule kind, const char *who, struct sbx_err *err);
	void *ctx;
};

struct sbx_askterm {
	const char *profile; /* the sandbox's profile, for "always" (NULL: none) */
	char entry[300];     /* the question on the terminal now, HOST:PORT ("": none) */
	char *always;        /* the profile's path, when "always" was offered */
};

/* After each turn of the supervisor's loop: the answer given applied, a
 * question no longer held taken back, the next held request asked. */
void askterm_step(struct sbx_askterm *a, const struct askterm_source *src, struct sbx_pty_relay *relay);
/* The proxy in this process as a source. */
struct askterm_source askterm_proxy(struct sbx_proxy *px);
void askterm_free(struct sbx_askterm *a);

#endif
