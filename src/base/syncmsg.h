/* syncmsg.h - messages between the host side and the sandbox over the sync
 * socket (SOCK_SEQPACKET): one struct per message, fds by SCM_RIGHTS. The
 * sandbox reports its first failure this way, so the user sees one message. */
#ifndef SBX_SYNCMSG_H
#define SBX_SYNCMSG_H

#include <stddef.h>
#include <sys/types.h>

#include "base/err.h"
#include "base/outcome.h"

enum sbx_msg_type {
	SBX_MSG_GO = 1,      /* host → child: maps written, carry on */
	SBX_MSG_ERROR,       /* child → host: setup failed (errnum, text) */
	SBX_MSG_READY,       /* child → host: namespace and root fds attached */
	SBX_MSG_EXEC_FAILED, /* init → host: the command could not start (code 126/127) */
	SBX_MSG_EXIT,        /* init → host: how the command ended */
	SBX_MSG_PTY,         /* init → host: the terminal's master fd */
	SBX_MSG_PROXY,       /* child → host: the egress proxy's listening socket */
	SBX_MSG_DNS,         /* child → host: the DNS stub's UDP socket */
	SBX_MSG_FUSE,        /* child → host: /dev/fuse fd, user and mount ns fds */
	SBX_MSG_PREPARED,    /* session init → host: a command's init made ahead (channel, pidfd) */
	SBX_MSG_UNUSABLE,    /* child → host: its namespaces were made, but no mount in them (errnum) */
};

enum sbx_exit_kind { SBX_EXIT_CODE = 1, SBX_EXIT_SIGNAL };

struct sbx_msg {
	int type;
	int errnum;
	int kind; /* SBX_MSG_EXIT: enum sbx_exit_kind */
	int code; /* exit code, signal number, or 126/127 */
	long peak_kb; /* SBX_MSG_EXIT: the largest resident set of the command's processes */
	int origin;   /* SBX_MSG_ERROR: enum sbx_origin, where it failed */
	char text[900];
	char hint[256]; /* SBX_MSG_ERROR: the error's hint, so it reaches the user */
};

#define SBX_MSG_MAX_FDS 10

/* One datagram with fds attached (SCM_RIGHTS); received fds are CLOEXEC and
 * any beyond maxfds are closed. Return bytes, 0 at EOF, or -1. */
ssize_t fdsock_send(int sock, const void *buf, size_t len, const int *fds, size_t nfds);
ssize_t fdsock_recv(int sock, void *buf, size_t size, int *fds, size_t *nfds, size_t maxfds);

int msg_send(int sock, const struct sbx_msg *m, const int *fds, size_t nfds);
/* Returns 0 on a message, 1 on EOF, -1 on error. */
int msg_recv(int sock, struct sbx_msg *m, int *fds, size_t *nfds);
/* Child side: sends err whole (message, errno, hint) as SBX_MSG_ERROR,
 * with where it arose. */
void msg_send_error(int sock, const struct sbx_err *err, enum sbx_origin origin);
/* Host side: the error of an SBX_MSG_ERROR back into err; returns -1. */
int msg_error(const struct sbx_msg *m, struct sbx_err *err);
/* The same as an outcome's error (reason ERROR, code 125, the errno's
 * text in the message). */
void msg_error_outcome(const struct sbx_msg *m, struct sbx_outcome *o);

#endif
