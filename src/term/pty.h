/* pty.h - the sandbox's terminal: a pseudo-terminal from the sandbox's own
 * devpts, its master relayed by the host side to the caller's terminal;
 * without one, the sandbox's output through a filter when it goes to the
 * caller's terminal; and the caller's terminal settings, put back on exit. */
#ifndef SBX_PTY_H
#define SBX_PTY_H

#include <poll.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <termios.h>

#include "base/err.h"
#include "term/termfilter.h"

/* Sandbox side (init): opens /dev/ptmx and its peer, sets the size. */
int pty_open(const struct winsize *ws, int *master, int *slave, struct sbx_err *err);
/* Command child: makes slave its controlling terminal and its stdio. */
int pty_make_controlling(int slave, struct sbx_err *err);

/* Without -t: one of the sandbox's output streams (stdout, stderr, or both
 * when they are the same terminal) comes through a pipe. */
struct sbx_pty_out {
	int rd;       /* the pipe's read end, -1 once closed */
	int wr;       /* its write end, until the sandbox has it */
	int fds;      /* which of the caller's fds 1 and 2 it stands for (bits) */
	int saved[3]; /* while diverted: the caller's own fd 1 and 2 */
	struct sbx_termfilter tf;
};

/* Host side: relays the caller's stdin/stdout to the master (-t), or the
 * sandbox's output pipes to the caller's terminal (no -t). */
struct sbx_pty_relay {
	int master;
	int asking;       /* a question is on the caller's terminal: stdin answers it */
	char keys[8];     /* the keys that answer it */
	char answer;      /* the key that answered it, until pty_relay_answer */
	int in_open;      /* still reading the caller's stdin */
	int out_open;     /* the master still gives output */
	char buf[4096];   /* stdin bytes not yet written to the master */
	size_t len, off;
	int raw;          /* the caller's terminal was put in raw mode */
	struct termios saved;
	int filter;       /* filter what goes to a terminal (not --raw-tty) */
	int filter_master;
	struct sbx_termfilter tf; /* the master's output */
	int nout;
	struct sbx_pty_out out[2];
};

/* raw_tty: --raw-tty, nothing is filtered. */
void pty_relay_init(struct sbx_pty_relay *r, int raw_tty);
void pty_relay_start(struct sbx_pty_relay *r, int master);
/* No -t: where the caller's fd 1 or 2 is a terminal (and filtering is on),
 * a pipe stands in for it: io[1], io[2] become the pipes' write ends, for
 * the sandbox. Then pty_relay_close_writers once the sandbox has them. */
int pty_relay_pipes(struct sbx_pty_relay *r, int io[3], struct sbx_err *err);
void pty_relay_close_writers(struct sbx_pty_relay *r);
/* The same, for a sandbox that inherits its stdio: the caller's fds 1 and 2
 * themselves are the pipes until pty_relay_undivert (after the clone). */
int pty_relay_divert(struct sbx_pty_relay *r, struct sbx_err *err);
void pty_relay_undivert(struct sbx_pty_relay *r);
/* Fills up to 2 pollfds; returns how many. */
int pty_relay_pollfds(const struct sbx_pty_relay *r, struct pollfd *p);
void pty_relay_handle(struct sbx_pty_relay *r, const struct pollfd *p, int n);
void pty_relay_winch(const struct sbx_pty_relay *r);
/* Questions on the caller's terminal (the proxy's ask, docs/egress.md):
 * whether one can be asked (-t, the caller's stdin and stderr terminals);
 * ask writes line on its own line of the caller's stderr, through the
 * terminal filter, and the caller's next key among keys is the answer:
 * read from the caller's terminal, never given to the sandbox (what the
 * caller types meanwhile is dropped), and nothing of the sandbox's can
 * answer it. pty_relay_answer returns that key once (0: none yet);
 * cancel takes the question back, saying why. */
int pty_relay_can_ask(const struct sbx_pty_relay *r);
void pty_relay_ask(struct sbx_pty_relay *r, const char *line, const char *keys);
char pty_relay_answer(struct sbx_pty_relay *r);
void pty_relay_cancel(struct sbx_pty_relay *r, const char *why);
/* After the sandbox ended: copies what output is left, restores the
 * caller's terminal, closes the master and the pipes. */
void pty_relay_end(struct sbx_pty_relay *r);

/* Saves the settings of whichever of the caller's fds 0-2 is a terminal,
 * once, before the sandbox (which may hold that terminal as its stdin) can
 * change them; pty_term_restore puts them back, and runs at exit too. */
void pty_term_save(void);
void pty_term_restore(void);

#endif
