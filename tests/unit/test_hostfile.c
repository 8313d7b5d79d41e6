/* test_hostfile.c - atomic host files: O_TMPFILE and the hidden-name
 * fallback, replace or not, planted symlinks, abort, and a signal
 * mid-write leaving nothing behind. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/hostfile.h"
#include "base/util.h"
#include "unit.h"

/* A second copy of the helper whose O_TMPFILE always fails (EISDIR, as on
 * kernels and filesystems without it), to test the fallback. */
#define HOSTFILE_TMPFILE_FLAG O_DIRECTORY
#define hostfile_open fb_open
#define hostfile_commit fb_commit
#define hostfile_abort fb_abort
#define hostfile_check fb_check
#define hostfile_open_append fb_open_append
#define hostfile_dir_make fb_dir_make
#define hostfile_dir_remove fb_dir_remove
int fb_open(struct sbx_hostfile *hf, int dirfd, const char *path, mode_t mode, struct sbx_err *err);
int fb_commit(struct sbx_hostfile *hf, bool replace, struct sbx_err *err);
void fb_abort(struct sbx_hostfile *hf);
int fb_check(int dirfd, const char *path, const char *what, struct sbx_err *err);
int fb_open_append(const char *path, const char *what, struct sbx_err *err);
int fb_dir_make(struct sbx_hostdir *d, const char *path, struct sbx_err *err);
void fb_dir_remove(struct sbx_hostdir *d);
#include "../../src/base/hostfile.c"
#undef hostfile_open
#undef hostfile_commit
#undef hostfile_abort
#undef hostfile_check
#undef hostfile_open_append
#undef hostfile_dir_make
#undef hostfile_dir_remove

struct impl {
	const char *name;
	int (*open)(struct sbx_hostfile *, int, const char *, mode_t, struct sbx_err *);
	int (*commit)(struct sbx_hostfile *, bool, struct sbx_err *);
	void (*abort)(struct sbx_hostfile *);
};

static char dir[64];

static int entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

static char *slurp(const char *name)
{
	static char buf[256];
	char *p = xasprintf("%s/%s", dir, name);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	free(p);
	return buf;
}

static void write_one(const struct impl *m, const char *name, const char *text, bool replace, int want)
{
	struct sbx_hostfile hf = { 0 };
	struct sbx_err err = { 0 };
	_cleanup_free_ char *p = xasprintf("%s/%s", dir, name);
	int r = m->open(&hf, AT_FDCWD, p, 0644, &err);
	if (r == 0) {
		CHECK(write_all(hf.fd, text, strlen(text)) == 0);
		r = m->commit(&hf, replace, &err);
	}
	CHECK(r == want);
	m->abort(&hf);
	m->abort(&hf); /* idempotent */
}

static void test_impl(const struct impl *m)
{
	struct sbx_hostfile hf = { 0 };
	struct sbx_err err = { 0 };

	fprintf(stderr, "-- %s\n", m->name);
	m->abort(&hf); /* a zeroed one is inactive */
	write_one(m, "a", "one", false, 0);
	CHECK_STR(slurp("a"), "one");
	CHECK(entries() == 1);
	write_one(m, "a", "two", false, -1); /* exists, no replace */
	CHECK_STR(slurp("a"), "one");
	CHECK(entries() == 1);
	write_one(m, "a", "three", true, 0);
	CHECK_STR(slurp("a"), "three");
	CHECK(entries() == 1);

	/* a planted symlink is refused, its target untouched */
	_cleanup_free_ char *link = xasprintf("%s/l", dir);
	CHECK(symlink("a", link) == 0);
	CHECK(m->open(&hf, AT_FDCWD, link, 0644, &err) < 0);
	CHECK_CONTAINS(err.msg, "is a symbolic link");
	CHECK_CONTAINS(err.msg, link);
	m->abort(&hf);
	CHECK_STR(slurp("a"), "three");
	unlink(link);

	/* aborted: nothing left */
	_cleanup_free_ char *b = xasprintf("%s/b", dir);
	CHECK(m->open(&hf, AT_FDCWD, b, 0600, &err) == 0);
	CHECK(write_all(hf.fd, "x", 1) == 0);
	m->abort(&hf);
	CHECK(entries() == 1);

	/* a signal mid-write: nothing left either */
	pid_t pid = fork();
	if (pid == 0) {
		struct sbx_hostfile h = { 0 };
		if (m->open(&h, AT_FDCWD, b, 0600, NULL) < 0 || write_all(h.fd, "x", 1) < 0)
			_exit(1);
		raise(SIGTERM);
		_exit(2);
	}
	int status = 0;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	CHECK(entries() == 1);

	/* a directory at the final name */
	_cleanup_free_ char *d = xasprintf("%s/d", dir);
	CHECK(mkdir(d, 0700) == 0);
	CHECK(m->open(&hf, AT_FDCWD, d, 0644, &err) < 0);
	CHECK_CONTAINS(err.msg, "is a directory");
	rmdir(d);
	_cleanup_free_ char *a = xasprintf("%s/a", dir);
	unlink(a);
}

static void test_append(void)
{
	struct sbx_err err = { 0 };
	_cleanup_free_ char *ev = xasprintf("%s/ev", dir), *l = xasprintf("%s/evl", dir);
	_cleanup_free_ char *fifo = xasprintf("%s/fifo", dir);

	int fd = hostfile_open_append(ev, "--events", &err);
	CHECK(fd >= 0);
	CHECK(write_all(fd, "1\n", 2) == 0);
	close(fd);
	fd = hostfile_open_append(ev, "--events", &err);
	CHECK(fd >= 0 && write_all(fd, "2\n", 2) == 0);
	close(fd);
	CHECK_STR(slurp("ev"), "1\n2\n");
	CHECK(symlink("ev", l) == 0);
	CHECK(hostfile_open_append(l, "--events", &err) < 0);
	CHECK_CONTAINS(err.msg, "--events '");
	CHECK_CONTAINS(err.msg, "is a symbolic link");
	CHECK(hostfile_check(AT_FDCWD, l, "--json", &err) < 0);
	CHECK_CONTAINS(err.msg, "--json '");
	CHECK(hostfile_check(AT_FDCWD, ev, "--json", &err) == 0);
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK(hostfile_open_append(fifo, "--events", &err) < 0);
	CHECK_CONTAINS(err.msg, "not a regular file");
	unlink(fifo);
	unlink(l);
	unlink(ev);
}

/* A staging directory: gone after remove, and after a signal (the copy
 * whose handler is installed: the fallback's). */
static void test_dir(void)
{
	struct sbx_hostdir d = { 0 };
	struct sbx_err err = { 0 };
	_cleanup_free_ char *out = xasprintf("%s/out.tar", dir);

	fb_dir_remove(&d); /* a zeroed one is inactive */
	CHECK(fb_dir_make(&d, out, &err) == 0);
	CHECK(entries() == 1);
	CHECK_CONTAINS(d.path, dir);
	CHECK_CONTAINS(d.path, "/.out.tar.sbxrun-");
	for (int i = 0; i < 300; i++) { /* more than one getdents64 buffer */
		char name[32];
		snprintf(name, sizeof(name), "blob-with-a-long-name-%d", i);
		int fd = openat(d.fd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		CHECK(fd >= 0);
		close(fd);
	}
	fb_dir_remove(&d);
	fb_dir_remove(&d);
	CHECK(entries() == 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct sbx_hostdir c = { 0 };
		if (fb_dir_make(&c, out, NULL) < 0)
			_exit(1);
		for (int i = 0; i < 300; i++) {
			char name[32];
			snprintf(name, sizeof(name), "f%d", i);
			close(openat(c.fd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
		}
		raise(SIGINT);
		_exit(2);
	}
	int status = 0;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
	CHECK(entries() == 0);
}

int main(void)
{
	/* the fallback first: its copy's signal handler is the one installed
	 * (the one that knows its temporary names) */
	static const struct impl impls[] = {
		{ "fallback", fb_open, fb_commit, fb_abort },
		{ "O_TMPFILE", hostfile_open, hostfile_commit, hostfile_abort },
	};
	/* a background job of a script starts with SIGINT ignored: the handler
	 * is installed only over the default action, which these tests need */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	snprintf(dir, sizeof(dir), "/tmp/test_hostfile.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(impls); i++)
		test_impl(&impls[i]);
	test_append();
	test_dir();
	CHECK(entries() == 0);
	rmdir(dir);
	return unit_done("test_hostfile");
}
