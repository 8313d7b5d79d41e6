/* syncmsg.c - the sync socket protocol (see syncmsg.h). */
#define _GNU_SOURCE
#include "base/syncmsg.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

ssize_t fdsock_send(int sock, const void *buf, size_t len, const int *fds, size_t nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * SBX_MSG_MAX_FDS)] = { 0 };
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (nfds > SBX_MSG_MAX_FDS)
		return errno = EINVAL, -1;
	if (nfds) {
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n;
}

ssize_t fdsock_recv(int sock, void *buf, size_t size, int *fds, size_t *nfds, size_t maxfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * SBX_MSG_MAX_FDS)];
	struct iovec iov = { .iov_base = buf, .iov_len = size };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	ssize_t n;

	if (nfds)
		*nfds = 0;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); n >= 0 && c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int tmp[SBX_MSG_MAX_FDS];
		memcpy(tmp, CMSG_DATA(c), k * sizeof(int));
		for (size_t i = 0; i < k; i++) {
			if (fds && nfds && *nfds < maxfds)
				fds[(*nfds)++] = tmp[i];
			else
				close(tmp[i]); /* more than asked for: never leaked */
		}
	}
	if (n > 0 && (mh.msg_flags & MSG_TRUNC))
		return errno = EMSGSIZE, -1;
	return n;
}

int msg_send(int sock, const struct sbx_msg *m, const int *fds, size_t nfds)
{
	return fdsock_send(sock, m, sizeof(*m), fds, nfds) == (ssize_t)sizeof(*m) ? 0 : -1;
}

int msg_recv(int sock, struct sbx_msg *m, int *fds, size_t *nfds)
{
	ssize_t n = fdsock_recv(sock, m, sizeof(*m), fds, nfds, SBX_MSG_MAX_FDS);

	if (n == 0)
		return 1;
	if (n != (ssize_t)sizeof(*m))
		return n < 0 ? -1 : (errno = EPROTO, -1);
	m->text[sizeof(m->text) - 1] = '\0';
	m->hint[sizeof(m->hint) - 1] = '\0';
	return 0;
}

void msg_send_error(int sock, const struct sbx_err *err, enum sbx_origin origin)
{
	struct sbx_msg m = { .type = SBX_MSG_ERROR, .errnum = err->errnum, .origin = (int)origin };
	snprintf(m.text, sizeof(m.text), "%s", err->msg);
	snprintf(m.hint, sizeof(m.hint), "%s", err->hint);
	msg_send(sock, &m, NULL, 0);
}

int msg_error(const struct sbx_msg *m, struct sbx_err *err)
{
	err_set(err, m->errnum, "%s", m->text);
	if (m->hint[0])
		err_hint(err, "%s", m->hint);
	return -1;
}

void msg_error_outcome(const struct sbx_msg *m, struct sbx_outcome *o)
{
	outcome_error(o, (enum sbx_origin)m->origin, "%s%s%s", m->text, m->errnum ? ": " : "",
		      m->errnum ? strerror(m->errnum) : "");
	snprintf(o->hint, sizeof(o->hint), "%s", m->hint);
}
