/* pty.c - terminal for `run -t` and `shell`. The pseudo-terminal comes from
 * the sandbox's own devpts instance, so nothing of the host's terminals is
 * reachable; the caller's terminal goes raw while relaying and is restored
 * on every way out of the supervisor.
 *
 * Without -t, a sandbox whose output would go straight to the caller's
 * terminal writes into a pipe instead, which the host side copies to the
 * terminal through termfilter.c (OSC 52 and the like are dropped). The
 * price: isatty(1) is false inside, so programs print without colours and
 * buffer their output as for a pipe; -t gives a terminal (filtered too),
 * --raw-tty the caller's own, unfiltered. Where neither stdout nor stderr
 * is a terminal (pipes, files, CI) nothing changes: no pipe, no copy. */
#define _GNU_SOURCE
#include "term/pty.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
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

void pty_relay_init(struct sbx_pty_relay *r, int raw_tty)
{
	memset(r, 0, offsetof(struct sbx_pty_relay, tf));
	r->master = -1;
	r->nout = 0;
	r->filter = !raw_tty;
}

void pty_relay_start(struct sbx_pty_relay *r, int master)
{
	struct termios raw;

	r->master = master;
	r->filter_master = r->filter && isatty(1);
	if (r->filter_master)
		termfilter_init(&r->tf, SBX_TF_ANSWERS);
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

	for (int i = 0; i < r->nout; i++)
		if (r->out[i].rd >= 0)
			p[n++] = (struct pollfd){ r->out[i].rd, POLLIN, 0 };
	if (r->master < 0 || r->nout)
		return n; /* never both: pipes only without -t (at most 2 entries) */
	if (ev)
		p[n++] = (struct pollfd){ r->master, ev, 0 };
	if (r->in_open && !r->len)
		p[n++] = (struct pollfd){ 0, POLLIN, 0 };
	return n;
}

/* Writes what the sandbox gave, through the filter if there is one. */
static int give(int fd, struct sbx_termfilter *tf, const char *buf, size_t n)
{
	char out[8192 + SBX_TF_SEQ_MAX];

	if (!tf)
		return write_all(fd, buf, n);
	n = termfilter_feed(tf, buf, n, out);
	return n ? write_all(fd, out, n) : 0;
}

static void copy_out(struct sbx_pty_relay *r)
{
	char buf[8192];
	ssize_t n = read(r->master, buf, sizeof(buf));

	if (n > 0) {
		if (give(1, r->filter_master ? &r->tf : NULL, buf, (size_t)n) < 0)
			r->out_open = 0;
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		r->out_open = 0; /* EIO: every slave fd is closed */
	}
}

/* Reads the caller's keys while a question is asked: the first that
 * answers it is kept, everything else read now is dropped. */
static void read_answer(struct sbx_pty_relay *r)
{
	char buf[256];
	ssize_t n = read(0, buf, sizeof(buf));

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		pty_relay_cancel(r, "no answer: the terminal's input ended");
		r->in_open = 0;
		return;
	}
	/* a terminal's answer to a query the sandbox's output made comes as
	 * input too: from an ESC on, nothing of this read is a key */
	for (ssize_t i = 0; i < n && r->asking && buf[i] != 0x1b; i++) {
		char k = (char)tolower((unsigned char)buf[i]);
		if (k && strchr(r->keys, k)) {
			r->answer = k;
			r->asking = 0;
			char echo[4] = { k, '\r', '\n', 0 };
			(void)!write_all(2, echo, 3);
		}
	}
}

int pty_relay_can_ask(const struct sbx_pty_relay *r)
{
	return r->master >= 0 && r->in_open && !r->nout && isatty(0) && isatty(2);
}

void pty_relay_ask(struct sbx_pty_relay *r, const char *line, const char *keys)
{
	struct sbx_termfilter tf;
	char out[2048 + SBX_TF_SEQ_MAX];
	size_t n = strnlen(line, 2048);

	termfilter_init(&tf, 0);
	(void)!write_all(2, "\r\n", 2);
	n = termfilter_feed(&tf, line, n, out);
	(void)!write_all(2, out, n);
	n = termfilter_finish(&tf, out);
	(void)!write_all(2, out, n);
	snprintf(r->keys, sizeof(r->keys), "%s", keys);
	r->answer = 0;
	r->asking = 1;
}

char pty_relay_answer(struct sbx_pty_relay *r)
{
	char k = r->answer;
	r->answer = 0;
	return k;
}

void pty_relay_cancel(struct sbx_pty_relay *r, const char *why)
{
	if (!r->asking)
		return;
	r->asking = 0;
	(void)!write_all(2, why, strlen(why));
	(void)!write_all(2, "\r\n", 2);
}

static void copy_in(struct sbx_pty_relay *r)
{
	if (r->asking) {
		read_answer(r);
		return;
	}
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

static void finish_filter(int fd, struct sbx_termfilter *tf)
{
	char out[SBX_TF_SEQ_MAX];
	size_t n = termfilter_finish(tf, out);
	if (n)
		(void)!write_all(fd, out, n);
}

static int out_dst(const struct sbx_pty_out *o)
{
	return o->fds & 2 ? 1 : 2;
}

/* One read of a pipe: 2 after a copy, 1 when it is empty for now, 0 at
 * its end (or when the terminal is gone: the sandbox's next write then
 * fails as into a closed pipe). */
static int copy_pipe(struct sbx_pty_out *o)
{
	char buf[8192];
	ssize_t n = read(o->rd, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 1;
	if (n > 0 && give(out_dst(o), &o->tf, buf, (size_t)n) == 0)
		return 2;
	if (n >= 0)
		finish_filter(out_dst(o), &o->tf);
	close(o->rd);
	o->rd = -1;
	return 0;
}

void pty_relay_handle(struct sbx_pty_relay *r, const struct pollfd *p, int n)
{
	for (int i = 0; i < n; i++) {
		for (int k = 0; k < r->nout; k++)
			if (p[i].fd == r->out[k].rd && r->out[k].rd >= 0 && (p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				copy_pipe(&r->out[k]);
		if (r->master < 0)
			continue;
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
	pty_relay_cancel(r, "(not answered: the command ended)");
	/* every writer has ended: what is left is in the pipe, no waiting */
	for (int k = 0; k < r->nout; k++) {
		while (r->out[k].rd >= 0 && copy_pipe(&r->out[k]) == 2)
			;
		if (r->out[k].rd >= 0) {
			finish_filter(out_dst(&r->out[k]), &r->out[k].tf);
			close(r->out[k].rd);
			r->out[k].rd = -1;
		}
	}
	pty_relay_close_writers(r);
	r->nout = 0;
	if (r->master < 0)
		return;
	for (int i = 0; i < 1000 && r->out_open; i++) {
		struct pollfd p = { r->master, POLLIN, 0 };
		if (poll(&p, 1, 50) <= 0)
			break;
		copy_out(r);
	}
	if (r->filter_master)
		finish_filter(1, &r->tf);
	if (r->raw)
		tcsetattr(0, TCSADRAIN, &r->saved);
	close(r->master);
	r->master = -1;
}

/* The caller's fds 1 and 2 that are terminals, as bits (2: fd 1, 4: fd 2),
 * grouped by terminal: one pipe for both when they are the same one, so
 * that the order of what the sandbox writes to each is kept. */
static int tty_groups(int groups[2])
{
	struct stat st1, st2;
	int t1 = isatty(1) && fstat(1, &st1) == 0, t2 = isatty(2) && fstat(2, &st2) == 0;
	int n = 0;

	if (t1 && t2 && st1.st_rdev == st2.st_rdev)
		groups[n++] = 2 | 4;
	else {
		if (t1)
			groups[n++] = 2;
		if (t2)
			groups[n++] = 4;
	}
	return n;
}

int pty_relay_pipes(struct sbx_pty_relay *r, int io[3], struct sbx_err *err)
{
	int groups[2];
	int n = r->filter ? tty_groups(groups) : 0;

	for (int i = 0; i < n; i++) {
		struct sbx_pty_out *o = &r->out[r->nout];
		int p[2];
		if (pipe2(p, O_CLOEXEC) < 0) {
			pty_relay_end(r);
			return err_sys(err, "pipe for the sandbox's output");
		}
		fcntl(p[0], F_SETFL, O_NONBLOCK);
		o->rd = p[0];
		o->wr = p[1];
		o->fds = groups[i];
		o->saved[1] = o->saved[2] = -1;
		termfilter_init(&o->tf, 0);
		r->nout++;
		for (int fd = 1; fd <= 2; fd++)
			if (groups[i] & (1 << fd))
				io[fd] = p[1];
	}
	return 0;
}

void pty_relay_close_writers(struct sbx_pty_relay *r)
{
	for (int k = 0; k < r->nout; k++) {
		if (r->out[k].wr >= 0)
			close(r->out[k].wr);
		r->out[k].wr = -1;
	}
}

int pty_relay_divert(struct sbx_pty_relay *r, struct sbx_err *err)
{
	int io[3] = { 0, 1, 2 };

	if (pty_relay_pipes(r, io, err) < 0)
		return -1;
	for (int k = 0; k < r->nout; k++)
		for (int fd = 1; fd <= 2; fd++) {
			struct sbx_pty_out *o = &r->out[k];
			if (!(o->fds & (1 << fd)))
				continue;
			o->saved[fd] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
			if (o->saved[fd] < 0 || dup2(o->wr, fd) < 0) {
				int e = errno;
				pty_relay_undivert(r);
				pty_relay_end(r);
				errno = e;
				return err_sys(err, "redirect the sandbox's output");
			}
		}
	return 0;
}

void pty_relay_undivert(struct sbx_pty_relay *r)
{
	for (int k = 0; k < r->nout; k++)
		for (int fd = 1; fd <= 2; fd++) {
			struct sbx_pty_out *o = &r->out[k];
			if (o->saved[fd] < 0)
				continue;
			dup2(o->saved[fd], fd);
			close(o->saved[fd]);
			o->saved[fd] = -1;
		}
	pty_relay_close_writers(r);
}

/* The caller's terminal as it was before the sandbox: at file scope, since
 * an atexit handler takes no argument (and a process has one caller). */
static struct {
	int fd;
	struct termios tio;
} term_saved[3];
static int term_nsaved = -1;

static int same_termios(const struct termios *a, const struct termios *b)
{
	return a->c_iflag == b->c_iflag && a->c_oflag == b->c_oflag && a->c_cflag == b->c_cflag &&
	       a->c_lflag == b->c_lflag && memcmp(a->c_cc, b->c_cc, sizeof(a->c_cc)) == 0 &&
	       cfgetispeed(a) == cfgetispeed(b) && cfgetospeed(a) == cfgetospeed(b);
}

void pty_term_save(void)
{
	dev_t seen[3];

	if (term_nsaved >= 0)
		return;
	term_nsaved = 0;
	for (int fd = 0; fd < 3; fd++) {
		struct stat st;
		int dup = 0;
		if (!isatty(fd) || fstat(fd, &st) < 0)
			continue;
		for (int i = 0; i < term_nsaved; i++)
			dup |= seen[i] == st.st_rdev;
		if (dup || tcgetattr(fd, &term_saved[term_nsaved].tio) < 0)
			continue;
		term_saved[term_nsaved].fd = fd;
		seen[term_nsaved++] = st.st_rdev;
	}
	if (term_nsaved)
		atexit(pty_term_restore);
}

/* Only while sbxrun is in the terminal's foreground: a background sbxrun
 * must not undo the settings of the job in front (the shell puts its own
 * back at its next prompt). SIGTTOU is blocked so a job-control race
 * cannot stop us here. */
void pty_term_restore(void)
{
	sigset_t ttou, old;

	if (term_nsaved <= 0)
		return;
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	for (int i = 0; i < term_nsaved; i++) {
		struct termios now;
		int fd = term_saved[i].fd;
		if (tcgetattr(fd, &now) == 0 && !same_termios(&now, &term_saved[i].tio) &&
		    tcgetpgrp(fd) == getpgrp())
			tcsetattr(fd, TCSANOW, &term_saved[i].tio);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
}
