/* lockwait.c - the one wait for an flock in sbxrun: a blocking flock()
 * waited silently, and for ever, on whoever held the lock (a user's flock
 * on a system image's directory stalled root's run, issue 40). Here every
 * wait is polled, said after a moment and ended at a deadline. */
#define _GNU_SOURCE
#include "base/lockwait.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	(void)nanosleep(&ts, NULL);
}

/* The deadline in ms: deadline_s, or the shorter one LOCK_DEADLINE_ENV
 * asks for (a test knob: tests wait out a short deadline). -1 for a value
 * that is not a number of milliseconds. */
static int64_t deadline_ms(int deadline_s, struct sbx_err *err)
{
	const char *v = getenv(LOCK_DEADLINE_ENV);
	int64_t ms = (int64_t)deadline_s * 1000;
	char *end;

	if (!v || !*v)
		return ms;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (*end || errno || v[0] == '-' || n == 0)
		return err_set(err, 0, "%s: '%s' is not a number of milliseconds above 0", LOCK_DEADLINE_ENV, v);
	return n < (unsigned long long)ms ? (int64_t)n : ms;
}

int lock_wait(int fd, int how, const char *what, int deadline_s, struct sbx_err *err)
{
	int64_t start = mono_ms(), deadline = deadline_ms(deadline_s, err);
	bool told = false;

	if (deadline < 0)
		return -1;
	for (unsigned nap = 5;; nap = nap < 200 ? nap * 2 : 200) {
		if (flock(fd, how | LOCK_NB) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return err_sys(err, "lock '%s'", what);
		int64_t waited = mono_ms() - start;
		if (waited >= deadline)
			return err_plain(err, EWOULDBLOCK, "lock '%s': still held by another process after "
					 "%g s, given up (fuser -v '%s' names who holds it)", what,
					 (double)deadline / 1000, what);
		if (!told && waited >= LOCK_TELL_MS) {
			log_info("waiting for the lock on '%s' (held by another sbxrun process; at most "
				 "%g s)", what, (double)deadline / 1000);
			told = true;
		}
		nap_ms(nap);
	}
}

static bool others_can_open(int fd)
{
	struct stat st;
	return fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 077);
}

int lock_open_at(int dirfd, const char *name, struct sbx_err *err)
{
	const int flags = O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;

	for (int tries = 0; tries < 3; tries++) {
		int fd = openat(dirfd, name, flags, 0600);
		if (fd < 0)
			return err_sys(err, "open the lock '%s'", name);
		if (geteuid() != 0 || !others_can_open(fd))
			return fd;
		close(fd);
		/* a new file: who opened the old one holds a lock no one takes */
		if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
			return err_sys(err, "replace the lock '%s'", name);
	}
	return err_set(err, 0, "lock '%s': made again and again by another user", name);
}
