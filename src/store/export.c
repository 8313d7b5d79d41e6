/* export.c - writes a filesystem tree with libarchive: entries sorted, only
 * regular files, directories and symlinks (stored, never followed),
 * setuid/setgid stripped, owner root, optional fixed mtime for reproducible
 * output; written to a temporary name and renamed. The tree is walked by
 * fds from a root fd, so nothing the sandbox planted leads outside. */
#define _GNU_SOURCE
#include "store/export.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/inroot.h"
#include "base/log.h"
#include "base/util.h"
#include "store/store.h"

#define MAX_DEPTH 256

struct walk {
	struct archive *a;
	const struct sbx_export *ex;
	dev_t root_dev;
	struct sbx_err *err;
	unsigned long skipped;
};

static int set_filter(struct archive *a, const char *out, struct sbx_err *err)
{
	size_t n = strlen(out);
	struct { const char *ext; int (*add)(struct archive *); } f[] = {
		{ ".tar.gz", archive_write_add_filter_gzip }, { ".tgz", archive_write_add_filter_gzip },
		{ ".tar.xz", archive_write_add_filter_xz }, { ".tar.zst", archive_write_add_filter_zstd },
		{ ".tar", archive_write_add_filter_none },
	};
	for (size_t i = 0; i < ARRAY_SIZE(f); i++) {
		size_t k = strlen(f[i].ext);
		if (n > k && strcmp(out + n - k, f[i].ext) == 0)
			return f[i].add(a) == ARCHIVE_OK ? 0
				: err_set(err, 0, "'%s': %s", out, archive_error_string(a));
	}
	return err_set(err, 0, "'%s': unknown archive type (use .tar, .tar.gz, .tar.xz or .tar.zst)", out);
}

static int cmp_names(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Sorted names of a directory (for reproducible archives). */
static char **list_dir(int dirfd, size_t *n)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	char **v = NULL;
	struct dirent *e;

	*n = 0;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		v = xrealloc(v, (*n + 1) * sizeof(char *));
		v[(*n)++] = xstrdup(e->d_name);
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(char *), cmp_names);
	return v;
}

static int put_header(struct walk *w, const char *path, const struct stat *st, const char *link)
{
	struct archive_entry *e = archive_entry_new();
	archive_entry_set_pathname(e, path);
	archive_entry_set_filetype(e, st->st_mode & S_IFMT);
	archive_entry_set_perm(e, st->st_mode & 01777); /* setuid and setgid stripped */
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	archive_entry_set_mtime(e, w->ex->mtime >= 0 ? w->ex->mtime : st->st_mtime, 0);
	archive_entry_set_size(e, S_ISREG(st->st_mode) ? st->st_size : 0);
	if (link)
		archive_entry_set_symlink(e, link);
	int r = archive_write_header(w->a, e);
	archive_entry_free(e);
	return r < ARCHIVE_WARN ? err_set(w->err, 0, "'%s': %s", path, archive_error_string(w->a)) : 0;
}

static int put_file(struct walk *w, int dirfd, const char *name, const char *path, const struct stat *st)
{
	char buf[65536];
	struct stat now;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	/* the file may have changed since it was listed: take it only if it is
	 * still the same regular file */
	if (fd < 0 || fstat(fd, &now) < 0 || !S_ISREG(now.st_mode) || now.st_ino != st->st_ino) {
		if (fd >= 0)
			close(fd);
		log_warn("export: skipped '%s' (unreadable or changed)", path);
		w->skipped++;
		return 0;
	}
	int r = put_header(w, path, &now, NULL);
	for (off_t left = now.st_size; r == 0 && left > 0;) {
		ssize_t n = read(fd, buf, (size_t)left < sizeof(buf) ? (size_t)left : sizeof(buf));
		if (n <= 0) {
			memset(buf, 0, sizeof(buf)); /* shrank while read: pad to the size announced */
			n = (size_t)left < sizeof(buf) ? left : (ssize_t)sizeof(buf);
		}
		if (archive_write_data(w->a, buf, (size_t)n) < 0)
			r = err_set(w->err, 0, "'%s': %s", path, archive_error_string(w->a));
		left -= n;
	}
	close(fd);
	return r;
}

static int walk_dir(struct walk *w, int dirfd, const char *rel, int depth);

static int walk_entry(struct walk *w, int dirfd, const char *name, const char *rel, int depth)
{
	struct stat st;
	char path[4096], link[4096];

	snprintf(path, sizeof(path), "%s/%s", rel, name);
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (S_ISREG(st.st_mode))
		return put_file(w, dirfd, name, path, &st);
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlinkat(dirfd, name, link, sizeof(link) - 1);
		if (n < 0)
			return 0;
		link[n] = '\0';
		return put_header(w, path, &st, link);
	}
	if (!S_ISDIR(st.st_mode))
		return 0; /* devices, fifos, sockets: never exported */
	if (st.st_dev != w->root_dev && st.st_dev != w->ex->extra_dev)
		return 0; /* another mount: /proc, /dev, /sys, binds */
	if (depth >= MAX_DEPTH)
		return err_set(w->err, 0, "'%s': deeper than %d levels", path, MAX_DEPTH);
	int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0) {
		log_warn("export: skipped directory '%s': %s", path, strerror(errno));
		w->skipped++;
		return 0;
	}
	int r = put_header(w, path, &st, NULL);
	if (r == 0)
		r = walk_dir(w, sub, path, depth + 1);
	close(sub);
	return r;
}

static int walk_dir(struct walk *w, int dirfd, const char *rel, int depth)
{
	size_t n;
	char **names = list_dir(dirfd, &n);
	int r = 0;

	for (size_t i = 0; i < n; i++) {
		if (r == 0)
			r = walk_entry(w, dirfd, names[i], rel, depth);
		free(names[i]);
	}
	free(names);
	return r;
}

int export_tree(int rootfd, const char *top, const struct sbx_export *ex, struct sbx_err *err)
{
	_cleanup_free_ char *tmp = xasprintf("%s.tmp.XXXXXX", ex->output);
	_cleanup_close_ int topfd = inroot_open(rootfd, top, O_RDONLY | O_DIRECTORY, 0, err);
	struct walk w = { .ex = ex, .err = err };
	struct stat st;

	if (topfd < 0 || fstat(topfd, &st) < 0)
		return err_wrap(err, "export");
	w.root_dev = st.st_dev;
	setlocale(LC_CTYPE, "C.UTF-8"); /* names stay UTF-8 in the pax headers */
	w.a = archive_write_new();
	archive_write_set_format_pax_restricted(w.a);
	int fd = -1, r = set_filter(w.a, ex->output, err);
	if (r == 0 && (fd = mkostemp(tmp, O_CLOEXEC)) < 0)
		r = err_sys(err, "create '%s'", tmp);
	if (r == 0 && archive_write_open_fd(w.a, fd) != ARCHIVE_OK)
		r = err_set(err, 0, "'%s': %s", ex->output, archive_error_string(w.a));
	if (r == 0)
		r = walk_dir(&w, topfd, ".", 0);
	if (r == 0 && archive_write_close(w.a) != ARCHIVE_OK)
		r = err_set(err, 0, "'%s': %s", ex->output, archive_error_string(w.a));
	archive_write_free(w.a);
	if (fd >= 0 && r == 0 && (fchmod(fd, 0644) < 0 || fsync(fd) < 0 || rename(tmp, ex->output) < 0))
		r = err_sys(err, "write '%s'", ex->output);
	if (fd >= 0)
		close(fd);
	if (r < 0 && fd >= 0)
		unlink(tmp);
	if (r == 0 && w.skipped)
		log_warn("export: %lu entries skipped", w.skipped);
	return r;
}
