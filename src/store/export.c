/* export.c - writes a filesystem tree with libarchive: entries sorted, only
 * regular files, directories and symlinks (stored, never followed),
 * setuid/setgid stripped, owner root, optional fixed mtime for reproducible
 * output; written atomically (base/hostfile.c). The tree is walked by fds
 * from a root fd, so nothing the sandbox planted leads outside. Holes stay
 * holes (pax sparse entries: a 1T sparse file is a tiny member), and the
 * data written is capped (ex->max_data). */
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hostfile.h"
#include "base/inroot.h"
#include "base/log.h"
#include "base/util.h"
#include "store/store.h"

#define MAX_DEPTH 256
/* a map longer than this ends in one data region (the data is capped anyway) */
#define MAX_REGIONS 65536
/* holes are fed to libarchive (it skips them) at most this much a call */
#define ZERO_CHUNK (1UL << 30)
/* files larger than this (apparent size) are skipped: feeding their holes
 * alone would take hours */
#define MAX_APPARENT (1LL << 50)

struct walk {
	struct archive *a;
	const struct sbx_export *ex;
	dev_t root_dev;
	struct sbx_err *err;
	unsigned long skipped;
	uint64_t used;        /* data bytes written so far */
	const char *zeros;    /* ZERO_CHUNK readable zero bytes (never touched for a hole) */
};

struct region {
	off_t off, len;
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

/* sparse: map holds the data regions of a sparse file (n may be 0: only a
 * hole). */
static int put_header(struct walk *w, const char *path, const struct stat *st, const char *link,
		      bool sparse, const struct region *map, size_t n)
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
	for (size_t i = 0; sparse && i < n; i++)
		archive_entry_sparse_add_entry(e, map[i].off, map[i].len);
	if (sparse && n == 0)
		archive_entry_sparse_add_entry(e, st->st_size, 0); /* only a hole */
	int r = archive_write_header(w->a, e);
	archive_entry_free(e);
	return r < ARCHIVE_WARN ? err_set(w->err, 0, "'%s': %s", path, archive_error_string(w->a)) : 0;
}

/* The data regions of fd below size (SEEK_DATA/SEEK_HOLE; one region where
 * the filesystem cannot say). */
static struct region *map_data(int fd, off_t size, size_t *n)
{
	struct region *v = NULL;

	*n = 0;
	for (off_t pos = 0; pos < size;) {
		off_t data = lseek(fd, pos, SEEK_DATA), hole;
		if (data < 0 && errno == ENXIO)
			break; /* a hole to the end */
		if (data < 0 || *n == MAX_REGIONS - 1)
			data = pos, hole = size;
		else if ((hole = lseek(fd, data, SEEK_HOLE)) < 0 || hole > size)
			hole = size;
		if (data >= size)
			break;
		if (*n % 64 == 0)
			v = xrealloc(v, (*n + 64) * sizeof(*v));
		v[(*n)++] = (struct region){ data, hole - data };
		pos = hole;
	}
	return v;
}

/* len bytes of a hole: libarchive counts them off its sparse map. */
static int feed_hole(struct walk *w, off_t len, const char *path)
{
	while (len > 0) {
		size_t k = (uint64_t)len < ZERO_CHUNK ? (size_t)len : ZERO_CHUNK;
		if (archive_write_data(w->a, w->zeros, k) <= 0)
			return err_set(w->err, 0, "'%s': %s", path, archive_error_string(w->a));
		len -= (off_t)k;
	}
	return 0;
}

/* The region's bytes, zeros past the end if the file shrank meanwhile. */
static int feed_data(struct walk *w, int fd, const struct region *g, const char *path)
{
	static char buf[1 << 17];

	for (off_t pos = g->off, end = g->off + g->len; pos < end;) {
		size_t want = (size_t)(end - pos) < sizeof(buf) ? (size_t)(end - pos) : sizeof(buf);
		ssize_t n = pread(fd, buf, want, pos);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			memset(buf, 0, want);
			n = (ssize_t)want;
		}
		if (archive_write_data(w->a, buf, (size_t)n) < 0)
			return err_set(w->err, 0, "'%s': %s", path, archive_error_string(w->a));
		pos += n;
	}
	return 0;
}

/* The entry's body: holes and data in file order; a dense file is one
 * region and no map. */
static int put_body(struct walk *w, int fd, const struct stat *st, const char *path,
		    const struct region *map, size_t n)
{
	bool sparse = !(n == 1 && map[0].off == 0 && map[0].len == st->st_size) && st->st_size > 0;
	off_t pos = 0;
	int r = put_header(w, path, st, NULL, sparse, map, n);

	for (size_t i = 0; r == 0 && i < n; i++) {
		r = feed_hole(w, map[i].off - pos, path);
		if (r == 0)
			r = feed_data(w, fd, &map[i], path);
		pos = map[i].off + map[i].len;
	}
	return r == 0 && sparse ? feed_hole(w, st->st_size - pos, path) : r;
}

static int put_file(struct walk *w, int dirfd, const char *name, const char *path, const struct stat *st)
{
	struct stat now;
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	/* the file may have changed since it was listed: take it only if it is
	 * still the same regular file */
	if (fd < 0 || fstat(fd, &now) < 0 || !S_ISREG(now.st_mode) || now.st_ino != st->st_ino ||
	    now.st_size > MAX_APPARENT) {
		log_warn("export: skipped '%s' (unreadable, changed or larger than 1P)", path);
		w->skipped++;
		return 0;
	}
	size_t n;
	_cleanup_free_ struct region *map = map_data(fd, now.st_size, &n);
	uint64_t data = 0;
	for (size_t i = 0; i < n; i++)
		data += (uint64_t)map[i].len;
	if (w->ex->max_data && w->used + data > w->ex->max_data)
		return err_set(w->err, 0, "export: '%s': stopped at the cap of %s", path,
			       w->ex->max_why ? w->ex->max_why : "--max-size");
	w->used += data;
	return put_body(w, fd, &now, path, map, n);
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
		return put_header(w, path, &st, link, false, NULL, 0);
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
	int r = put_header(w, path, &st, NULL, false, NULL, 0);
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

static int write_archive(struct walk *w, int topfd, int fd, struct sbx_err *err)
{
	const char *out = w->ex->output;
	int r = set_filter(w->a, out, err);

	if (r == 0 && archive_write_open_fd(w->a, fd) != ARCHIVE_OK)
		r = err_set(err, 0, "'%s': %s", out, archive_error_string(w->a));
	if (r == 0)
		r = walk_dir(w, topfd, ".", 0);
	if (r == 0 && archive_write_close(w->a) != ARCHIVE_OK)
		r = err_set(err, 0, "'%s': %s", out, archive_error_string(w->a));
	return r;
}

int export_tree(int rootfd, const char *top, const struct sbx_export *ex, struct sbx_err *err)
{
	_cleanup_close_ int topfd = inroot_open(rootfd, top, O_RDONLY | O_DIRECTORY, 0, err);
	_cleanup_hostfile_ struct sbx_hostfile hf = { 0 };
	struct walk w = { .ex = ex, .err = err };
	struct stat st;

	if (topfd < 0 || fstat(topfd, &st) < 0)
		return err_wrap(err, "export");
	w.root_dev = st.st_dev;
	if (hostfile_open(&hf, AT_FDCWD, ex->output, 0644, err) < 0)
		return err_wrap(err, "export");
	void *z = mmap(NULL, ZERO_CHUNK, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (z == MAP_FAILED)
		return err_sys(err, "export: map a zero buffer");
	w.zeros = z;
	setlocale(LC_CTYPE, "C.UTF-8"); /* names stay UTF-8 in the pax headers */
	w.a = archive_write_new();
	archive_write_set_format_pax_restricted(w.a);
	int r = write_archive(&w, topfd, hf.fd, err);
	archive_write_free(w.a);
	munmap(z, ZERO_CHUNK);
	if (r == 0)
		r = hostfile_commit(&hf, true, err);
	if (r == 0 && w.skipped)
		log_warn("export: %lu entries skipped", w.skipped);
	return r < 0 ? -1 : 0;
}
