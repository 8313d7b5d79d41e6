/* syncmsg.c - the sync socket protocol (see syncmsg.h). */
#define _GNU_SOURCE
#include "syncmsg.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int msg_send(int sock, const struct sbx_msg *m, const int *fds, size_t nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * SBX_MSG_MAX_FDS)] = { 0 };
	struct iovec iov = { .iov_base = (void *)m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

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
	for (;;) {
		ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		return n == (ssize_t)sizeof(*m) ? 0 : -1;
	}
}

int msg_recv(int sock, struct sbx_msg *m, int *fds, size_t *nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * SBX_MSG_MAX_FDS)];
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	ssize_t n;

	if (nfds)
		*nfds = 0;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return 1;
	if (n != (ssize_t)sizeof(*m))
		return n < 0 ? -1 : (errno = EPROTO, -1);
	m->text[sizeof(m->text) - 1] = '\0';
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int tmp[SBX_MSG_MAX_FDS];
		memcpy(tmp, CMSG_DATA(c), k * sizeof(int));
		for (size_t i = 0; i < k; i++) {
			if (fds && nfds && *nfds < SBX_MSG_MAX_FDS)
				fds[(*nfds)++] = tmp[i];
			else
				close(tmp[i]);
		}
	}
	return 0;
}

void msg_send_error(int sock, const struct sbx_err *err)
{
	struct sbx_msg m = { .type = SBX_MSG_ERROR, .errnum = err->errnum };
	snprintf(m.text, sizeof(m.text), "%s", err->msg);
	msg_send(sock, &m, NULL, 0);
}
