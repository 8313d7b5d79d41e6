/* pty.h - the sandbox's terminal: a pseudo-terminal from the sandbox's own
 * devpts, its master relayed by the host side to the caller's terminal. */
#ifndef SBX_PTY_H
#define SBX_PTY_H

#include <poll.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <termios.h>

#include "base/err.h"

/* Sandbox side (init): opens /dev/ptmx and its peer, sets the size. */
int pty_open(const struct winsize *ws, int *master, int *slave, struct sbx_err *err);
/* Command child: makes slave its controlling terminal and its stdio. */
int pty_make_controlling(int slave, struct sbx_err *err);

/* Host side: relays the caller's stdin/stdout to the master. */
struct sbx_pty_relay {
	int master;
	int in_open;      /* still reading the caller's stdin */
	int out_open;     /* the master still gives output */
	char buf[4096];   /* stdin bytes not yet written to the master */
	size_t len, off;
	int raw;          /* the caller's terminal was put in raw mode */
	struct termios saved;
};

void pty_relay_start(struct sbx_pty_relay *r, int master);
/* Fills up to 2 pollfds; returns how many. */
int pty_relay_pollfds(const struct sbx_pty_relay *r, struct pollfd *p);
void pty_relay_handle(struct sbx_pty_relay *r, const struct pollfd *p, int n);
void pty_relay_winch(const struct sbx_pty_relay *r);
/* After the sandbox ended: copies what output is left, restores the
 * caller's terminal, closes the master. */
void pty_relay_end(struct sbx_pty_relay *r);

#endif
