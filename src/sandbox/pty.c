/* pty.c - terminal for `run -t` and `shell`. The pseudo-terminal comes from
 * the sandbox's own devpts instance, so nothing of the host's terminals is
 * reachable; the caller's terminal goes raw while relaying and is restored
 * on every way out of the supervisor. */
#define _GNU_SOURCE
#include "sandbox/pty.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/util.h"

int pty_open(const struct winsize *ws, int *master, int *slave, struct sbx_err *err)
{
	int unlock = 0;

	*master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*master < 0)
		return err_sys(err, "open /dev/ptmx");
	if (ioctl(*master, TIOCSPTLCK, &unlock) < 0)
		return err_sys(err, "unlock the pseudo-terminal");
	*slave = ioctl(*master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*slave < 0)
		return err_sys(err, "open the pseudo-terminal's peer");
	if (ws && ws->ws_row && ioctl(*master, TIOCSWINSZ, ws) < 0)
		return err_sys(err, "set the terminal size");
	return 0;
}

int pty_make_controlling(int slave, struct sbx_err *err)
{
	if (ioctl(slave, TIOCSCTTY, 0) < 0)
		return err_sys(err, "make the terminal controlling");
	for (int fd = 0; fd < 3; fd++)
		if (dup2(slave, fd) < 0)
			return err_sys(err, "dup2 the terminal");
	if (slave > 2)
		close(slave);
	return 0;
}

void pty_relay_start(struct sbx_pty_relay *r, int master)
{
	struct termios raw;

	r->master = master;
	r->in_open = 1;
	r->out_open = 1;
	r->len = r->off = 0;
	r->raw = 0;
	fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
	if (isatty(0) && tcgetattr(0, &r->saved) == 0) {
		raw = r->saved;
		cfmakeraw(&raw);
		if (tcsetattr(0, TCSANOW, &raw) == 0)
			r->raw = 1;
	}
	pty_relay_winch(r);
}

int pty_relay_pollfds(const struct sbx_pty_relay *r, struct pollfd *p)
{
	int n = 0;
	short ev = (short)((r->out_open ? POLLIN : 0) | (r->len ? POLLOUT : 0));

	if (ev)
		p[n++] = (struct pollfd){ r->master, ev, 0 };
	if (r->in_open && !r->len)
		p[n++] = (struct pollfd){ 0, POLLIN, 0 };
	return n;
}

static void copy_out(struct sbx_pty_relay *r)
{
	char buf[8192];
	ssize_t n = read(r->master, buf, sizeof(buf));

	if (n > 0) {
		if (write_all(1, buf, (size_t)n) < 0)
			r->out_open = 0;
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		r->out_open = 0; /* EIO: every slave fd is closed */
	}
}

static void copy_in(struct sbx_pty_relay *r)
{
	ssize_t n = read(0, r->buf, sizeof(r->buf));

	if (n > 0) {
		r->len = (size_t)n;
		r->off = 0;
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		/* end of the caller's input: an end-of-file character inside */
		r->in_open = 0;
		r->buf[0] = 4;
		r->len = 1;
		r->off = 0;
	}
}

void pty_relay_handle(struct sbx_pty_relay *r, const struct pollfd *p, int n)
{
	for (int i = 0; i < n; i++) {
		if (p[i].fd == r->master && (p[i].revents & (POLLIN | POLLHUP | POLLERR)) && r->out_open)
			copy_out(r);
		if (p[i].fd == r->master && (p[i].revents & POLLOUT) && r->len) {
			ssize_t w = write(r->master, r->buf + r->off, r->len);
			if (w > 0) {
				r->off += (size_t)w;
				r->len -= (size_t)w;
			}
		}
		if (p[i].fd == 0 && (p[i].revents & (POLLIN | POLLHUP)))
			copy_in(r);
	}
}

void pty_relay_winch(const struct sbx_pty_relay *r)
{
	struct winsize ws;
	if (isatty(0) && ioctl(0, TIOCGWINSZ, &ws) == 0)
		ioctl(r->master, TIOCSWINSZ, &ws);
}

void pty_relay_end(struct sbx_pty_relay *r)
{
	if (r->master < 0)
		return;
	for (int i = 0; i < 1000 && r->out_open; i++) {
		struct pollfd p = { r->master, POLLIN, 0 };
		if (poll(&p, 1, 50) <= 0)
			break;
		copy_out(r);
	}
	if (r->raw)
		tcsetattr(0, TCSADRAIN, &r->saved);
	close(r->master);
	r->master = -1;
}
