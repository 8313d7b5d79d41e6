/* control.c - framing and peer checks of the session control socket. */
#define _GNU_SOURCE
#include "control.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

int control_send(int sock, struct json_object *obj, const int *fds, size_t nfds)
{
	const char *text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
	char cbuf[CMSG_SPACE(sizeof(int) * 4)] = { 0 };
	struct iovec iov = { .iov_base = (void *)text, .iov_len = strlen(text) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (nfds > 4 || iov.iov_len > SBX_CONTROL_MAX)
		return errno = EMSGSIZE, -1;
	if (nfds) {
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	ssize_t n;
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)iov.iov_len ? 0 : -1;
}

int control_recv(int sock, struct json_object **obj, int *fds, size_t *nfds, size_t maxfds)
{
	_cleanup_free_ char *buf = xmalloc(SBX_CONTROL_MAX + 1);
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = { .iov_base = buf, .iov_len = SBX_CONTROL_MAX };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	ssize_t n;

	*obj = NULL;
	if (nfds)
		*nfds = 0;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); n >= 0 && c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int tmp[4];
		memcpy(tmp, CMSG_DATA(c), k * sizeof(int));
		for (size_t i = 0; i < k; i++) {
			if (fds && nfds && *nfds < maxfds)
				fds[(*nfds)++] = tmp[i];
			else
				close(tmp[i]);
		}
	}
	if (n <= 0)
		return n == 0 ? 1 : -1;
	if (mh.msg_flags & MSG_TRUNC)
		return errno = EMSGSIZE, -1;
	buf[n] = '\0';
	*obj = json_tokener_parse(buf);
	if (!*obj || !json_object_is_type(*obj, json_type_object)) {
		if (*obj)
			json_object_put(*obj);
		*obj = NULL;
		return errno = EPROTO, -1;
	}
	return 0;
}

int control_check_peer(int sock, struct sbx_err *err)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char path[64];
	struct stat mine, theirs;

	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return err_sys(err, "SO_PEERCRED");
	if (cred.uid != geteuid())
		return err_set(err, EPERM, "peer uid %u is not ours", (unsigned)cred.uid);
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)cred.pid);
	if (stat("/proc/self/ns/user", &mine) < 0 || stat(path, &theirs) < 0)
		return err_sys(err, "peer's user namespace");
	if (mine.st_ino != theirs.st_ino || mine.st_dev != theirs.st_dev)
		return err_set(err, EPERM, "peer is inside another user namespace (a sandbox?)");
	return 0;
}
