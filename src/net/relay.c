/* relay.c - the proxy's data path. splice moves bytes socket -> pipe ->
 * socket inside the kernel, so throughput stays close to a direct
 * connection (the goal is 0.8 of direct on loopback). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>

#include "base/util.h"
#include "net/relay.h"

#define PIPE_CAP (64 * 1024)  /* the default pipe size */
#define SPLICE_FLAGS (SPLICE_F_NONBLOCK | SPLICE_F_MOVE)

int relay_dir_init(struct relay_dir *d, struct sbx_err *err)
{
	memset(d, 0, sizeof(*d));
	if (pipe2(d->pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		d->pipe[0] = d->pipe[1] = -1;
		return err_sys(err, "pipe2");
	}
	return 0;
}

void relay_dir_prefix(struct relay_dir *d, const char *s, size_t n)
{
	d->pre = xrealloc(d->pre, d->pre_len + n + 1);
	memcpy(d->pre + d->pre_len, s, n);
	d->pre_len += n;
}

static bool transient(void)
{
	return errno == EAGAIN || errno == EINTR;
}

static bool send_prefix(int to, struct relay_dir *d, uint64_t *total, bool *err)
{
	ssize_t n = send(to, d->pre + d->pre_off, d->pre_len - d->pre_off, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0) {
		*err |= !transient();
		return false;
	}
	d->pre_off += (size_t)n;
	*total += (uint64_t)n;
	return n > 0;
}

bool relay_pump(int from, int to, struct relay_dir *d, uint64_t *total, bool *err)
{
	bool moved = false;
	ssize_t n;

	if (d->pre_off < d->pre_len) {
		moved = send_prefix(to, d, total, err);
		if (d->pre_off < d->pre_len)
			return moved;
	}
	if (!d->eof && d->in_pipe < PIPE_CAP) {
		n = splice(from, NULL, d->pipe[1], NULL, PIPE_CAP - d->in_pipe, SPLICE_FLAGS);
		if (n > 0)
			d->in_pipe += (size_t)n;
		else if (n == 0)
			d->eof = true;
		else
			*err |= !transient();
		moved |= n >= 0;
	}
	if (d->in_pipe > 0) {
		n = splice(d->pipe[0], NULL, to, NULL, d->in_pipe, SPLICE_FLAGS);
		if (n > 0) {
			d->in_pipe -= (size_t)n;
			*total += (uint64_t)n;
			moved = true;
		} else if (n < 0) {
			*err |= !transient();
		}
	}
	if (d->eof && d->in_pipe == 0 && !d->shut) {
		shutdown(to, SHUT_WR);
		d->shut = moved = true;
	}
	return moved;
}

void relay_dir_free(struct relay_dir *d)
{
	free(d->pre);
	if (d->pipe[0] >= 0)
		close(d->pipe[0]);
	if (d->pipe[1] >= 0)
		close(d->pipe[1]);
	memset(d, 0, sizeof(*d));
	d->pipe[0] = d->pipe[1] = -1;
}
