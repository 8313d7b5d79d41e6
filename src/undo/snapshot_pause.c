/* snapshot_pause.c - holds a session's processes still for the moment a
 * snapshot copies its layer, so that the copy is of one moment: the cgroup
 * freezer where the session has a cgroup v2 of its own, else SIGSTOP to
 * every process of the session (continued with SIGCONT after: a process
 * that was stopped before is continued too, and a parent waiting with
 * WUNTRACED sees the stop; docs/sessions.md says so). */
#define _GNU_SOURCE
#include "undo/snapshot_pause.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

#define WAIT_MS 5000

static uint64_t mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static int freeze(struct snappause *p, const char *cgroup, struct sbx_err *err)
{
	_cleanup_close_ int dir = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int f = dir < 0 ? -1 : openat(dir, "cgroup.freeze", O_WRONLY | O_CLOEXEC);

	if (f < 0 || write(f, "1", 1) != 1)
		return 1; /* no freezer here: the caller stops the processes */
	p->cgroup_fd = steal_fd(dir);
	for (uint64_t end = mono_ms() + WAIT_MS; mono_ms() < end; usleep(1000)) {
		char buf[512];
		_cleanup_close_ int ev = openat(p->cgroup_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
		ssize_t n = ev < 0 ? -1 : read(ev, buf, sizeof(buf) - 1);
		if (n > 0 && (buf[n] = '\0', strstr(buf, "frozen 1")))
			return 0;
	}
	snappause_end(p);
	return err_set(err, ETIMEDOUT, "snapshot: the session's cgroup did not freeze within %d s", WAIT_MS / 1000);
}

/* 'T' or 't' (stopped), or gone ('Z', 'X', no file): it runs no more. */
static int still(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	const char *paren = strrchr(buf, ')');
	return !paren || !paren[1] || strchr("TtZX", paren[2]) != NULL;
}

/* The children of every thread of pid, appended to queue. */
static void children(pid_t pid, pid_t *queue, size_t *n, size_t max)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char file[128], buf[8192];
		if (e->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s/children", path, e->d_name);
		_cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC);
		ssize_t r = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (r <= 0)
			continue;
		buf[r] = '\0';
		for (char *s = buf, *end; *s && *n < max; s = end) {
			long v = strtol(s, &end, 10);
			if (end == s)
				break;
			queue[(*n)++] = (pid_t)v;
		}
	}
	if (d)
		closedir(d);
}

static int stopped_here(const struct snappause *p, pid_t pid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->pids[i] == pid)
			return 1;
	return 0;
}

/* 1 when pid was stopped now, 0 when it was already or is gone. */
static int stop_one(struct snappause *p, pid_t pid, struct sbx_err *err)
{
	if (stopped_here(p, pid))
		return 0;
	if (p->n == SNAPPAUSE_MAX_PROCS)
		return err_set(err, E2BIG, "snapshot: the session has more than %d processes", SNAPPAUSE_MAX_PROCS);
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return 0; /* gone meanwhile */
	if (syscall(SYS_pidfd_send_signal, fd, SIGSTOP, NULL, 0) < 0) {
		close(fd);
		return errno == ESRCH ? 0 : err_sys(err, "snapshot: stop process %d", (int)pid);
	}
	p->pids[p->n] = pid;
	p->pidfds[p->n++] = fd;
	for (uint64_t end = mono_ms() + WAIT_MS; !still(pid); usleep(500))
		if (mono_ms() > end)
			return err_set(err, ETIMEDOUT, "snapshot: process %d did not stop within %d s", (int)pid,
				       WAIT_MS / 1000);
	return 1;
}

/* One pass, breadth first from the supervisor's children: each process is
 * stopped before its children are read. *fresh counts those stopped in
 * this pass: a process whose parent exited before it was read went to an
 * init already read, which the next pass reads again. */
static int stop_pass(struct snappause *p, pid_t supervisor, pid_t *queue, size_t *fresh, struct sbx_err *err)
{
	size_t n = 0;

	*fresh = 0;
	children(supervisor, queue, &n, SNAPPAUSE_MAX_PROCS);
	for (size_t i = 0; i < n; i++) {
		int r = stop_one(p, queue[i], err);
		if (r < 0)
			return -1;
		*fresh += (size_t)r;
		children(queue[i], queue, &n, SNAPPAUSE_MAX_PROCS);
	}
	if (n == SNAPPAUSE_MAX_PROCS)
		return err_set(err, E2BIG, "snapshot: the session has more than %d processes", SNAPPAUSE_MAX_PROCS);
	return 0;
}

/* Passes until one stops no new process: then every process of the
 * session is stopped (a stopped one forks no more, and each is a
 * descendant of the supervisor: orphans go to an init of the session).
 * A session that forks faster than that, past the passes or the time,
 * is not snapshotted. */
static int stop_all(struct snappause *p, pid_t supervisor, struct sbx_err *err)
{
	_cleanup_free_ pid_t *queue = xcalloc(SNAPPAUSE_MAX_PROCS, sizeof(pid_t));
	uint64_t end = mono_ms() + WAIT_MS;

	p->pidfds = xcalloc(SNAPPAUSE_MAX_PROCS, sizeof(int));
	p->pids = xcalloc(SNAPPAUSE_MAX_PROCS, sizeof(pid_t));
	for (int pass = 0; pass < SNAPPAUSE_MAX_PASSES && mono_ms() < end; pass++) {
		size_t fresh;
		if (stop_pass(p, supervisor, queue, &fresh, err) < 0)
			return -1;
		if (!fresh)
			return 0;
	}
	return err_plain(err, EAGAIN, "snapshot: the session's processes kept forking past %d passes of "
			 "SIGSTOP; no snapshot taken (a cgroup freezer would hold them)", SNAPPAUSE_MAX_PASSES);
}

/* Every process of the session continued: the supervisor's descendants,
 * parents first (the watchdog, which knows not which it stopped). */
static void continue_all(pid_t supervisor)
{
	_cleanup_free_ pid_t *queue = xcalloc(SNAPPAUSE_MAX_PROCS, sizeof(pid_t));
	size_t n = 0;

	children(supervisor, queue, &n, SNAPPAUSE_MAX_PROCS);
	for (size_t i = 0; i < n; i++) {
		kill(queue[i], SIGCONT);
		children(queue[i], queue, &n, SNAPPAUSE_MAX_PROCS);
	}
}

/* The watchdog: waits for a word on its pipe (the pause ended as it
 * should) or its end without one (the snapshot died in the pause: killed,
 * SIGKILL included), then undoes the pause. Out of the snapshot's session
 * and process group, deaf to what a terminal or a group kill sends, and
 * holding no fd of its parent's but its pipe (a lock held by it would
 * outlive the snapshot). */
static __attribute__((noreturn)) void watchdog(int in, const char *cgroup, pid_t supervisor)
{
	char c;
	ssize_t n;

	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (dup2(in, 0) < 0)
		_exit(1);
	syscall(SYS_close_range, 1, ~0U, 0);
	while ((n = read(0, &c, 1)) < 0 && errno == EINTR)
		;
	if (n == 1)
		_exit(0);
	if (cgroup && *cgroup) {
		_cleanup_close_ int dir = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		_cleanup_close_ int f = dir < 0 ? -1 : openat(dir, "cgroup.freeze", O_WRONLY | O_CLOEXEC);
		if (f >= 0 && write(f, "0", 1) != 1)
			(void)0;
	}
	if (supervisor > 0)
		continue_all(supervisor);
	_exit(0);
}

static int watchdog_start(struct snappause *p, const char *cgroup, pid_t supervisor, struct sbx_err *err)
{
	int fds[2];

	if (pipe2(fds, O_CLOEXEC) < 0)
		return err_sys(err, "snapshot: the pause's watchdog");
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[1]);
		watchdog(fds[0], cgroup, supervisor);
	}
	close(fds[0]);
	if (pid < 0) {
		close(fds[1]);
		return err_sys(err, "snapshot: start the pause's watchdog");
	}
	p->watch_fd = fds[1];
	p->watch_pid = pid;
	return 0;
}

/* The pause ended as it should: the watchdog told, and reaped. */
static void watchdog_end(struct snappause *p)
{
	if (p->watch_pid <= 0)
		return;
	if (write(p->watch_fd, "k", 1) != 1)
		(void)0; /* it continues what is continued already */
	close(p->watch_fd);
	waitpid(p->watch_pid, NULL, 0);
	p->watch_fd = -1;
	p->watch_pid = 0;
}

int snappause_start(struct snappause *p, const char *cgroup, pid_t supervisor, struct sbx_err *err)
{
	memset(p, 0, sizeof(*p));
	p->cgroup_fd = -1;
	p->watch_fd = -1;
	if (watchdog_start(p, cgroup, supervisor, err) < 0)
		return -1;
	int r = cgroup && *cgroup ? freeze(p, cgroup, err) : 1;
	if (r < 0)
		return -1; /* freeze ended the pause (and its watchdog) */
	if (r == 0)
		return 0;
	if (supervisor <= 0) {
		snappause_end(p);
		return err_set(err, ESRCH, "snapshot: the session's supervisor is not known");
	}
	if (stop_all(p, supervisor, err) < 0) {
		snappause_end(p);
		return -1;
	}
	return 0;
}

void snappause_end(struct snappause *p)
{
	if (p->cgroup_fd >= 0) {
		_cleanup_close_ int f = openat(p->cgroup_fd, "cgroup.freeze", O_WRONLY | O_CLOEXEC);
		if (f < 0 || write(f, "0", 1) != 1)
			(void)0; /* nothing more to try: the session's next command says so */
		close(p->cgroup_fd);
		p->cgroup_fd = -1;
	}
	for (size_t i = 0; i < p->n; i++) {
		syscall(SYS_pidfd_send_signal, p->pidfds[i], SIGCONT, NULL, 0);
		close(p->pidfds[i]);
	}
	free(p->pidfds);
	free(p->pids);
	p->pidfds = NULL;
	p->pids = NULL;
	p->n = 0;
	watchdog_end(p);
}
