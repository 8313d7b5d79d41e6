/* control.c - framing and peer checks of the session control socket. */
#define _GNU_SOURCE
#include "session/control.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/syncmsg.h"
#include "base/util.h"

int control_send(int sock, struct json_object *obj, const int *fds, size_t nfds)
{
	const char *text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
	size_t len = strlen(text);

	if (nfds > 4 || len > SBX_CONTROL_MAX)
		return errno = EMSGSIZE, -1;
	return fdsock_send(sock, text, len, fds, nfds) == (ssize_t)len ? 0 : -1;
}

int control_recv(int sock, struct json_object **obj, int *fds, size_t *nfds, size_t maxfds)
{
	_cleanup_free_ char *buf = xmalloc(SBX_CONTROL_MAX + 1);
	ssize_t n = fdsock_recv(sock, buf, SBX_CONTROL_MAX, fds, nfds, maxfds);

	*obj = NULL;
	if (n <= 0)
		return n == 0 ? 1 : -1;
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
		return err_plain(err, EPERM, "peer uid %u is not ours", (unsigned)cred.uid);
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)cred.pid);
	if (stat("/proc/self/ns/user", &mine) < 0 || stat(path, &theirs) < 0)
		return err_sys(err, "peer's user namespace");
	if (mine.st_ino != theirs.st_ino || mine.st_dev != theirs.st_dev)
		return err_plain(err, EPERM, "peer is inside another user namespace (a sandbox?)");
	return 0;
}
