/* unpack.c - unpacking one tarball safely: libarchive with its
 * secure-extraction flags plus our own checks of every path (relative, no
 * "..", no write through a symlink, no device nodes, setuid bits dropped),
 * within limits on entries, bytes and depth. Shared by a rootfs import
 * (store/import.c) and each layer of an OCI import (store/oci_import.c). */
#define _GNU_SOURCE
#include "store/unpack.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <locale.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"

const struct sbx_import_limits import_default_limits = {
	.max_entries = 2000000,
	.max_bytes = 64ULL << 30,
	.max_depth = 64,
};

static const int extract_flags = ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME |
	ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
	ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS;

/* Strips leading "./" so "./etc" and "etc" are one path; "" is the root. */
const char *import_rel_path(const char *p)
{
	while (p[0] == '.' && p[1] == '/') {
		p += 2;
		while (*p == '/')
			p++;
	}
	return strcmp(p, ".") == 0 ? "" : p;
}

/* Relative, no ".." component, not too deep. */
int import_check_name(const char *raw, const char *what, unsigned max_depth, struct sbx_err *err)
{
	unsigned depth = 0;

	if (raw[0] == '/')
		return err_set(err, 0, "%s '%s' is an absolute path", what, raw);
	for (const char *c = raw; *c;) {
		size_t len = strcspn(c, "/");
		if (len == 2 && c[0] == '.' && c[1] == '.')
			return err_set(err, 0, "%s '%s' contains '..'", what, raw);
		if (len && !(len == 1 && c[0] == '.') && ++depth > max_depth)
			return err_set(err, 0, "%s '%s' is deeper than %u levels", what, raw, max_depth);
		c += len;
		while (*c == '/')
			c++;
	}
	return 0;
}

/* What exists at path below destfd now: its parents must be real
 * directories (no symlink on the way, so nothing is written through one),
 * and an existing symlink at path itself is refused too. */
static int check_on_disk(int destfd, const char *path, const char *what, bool must_exist,
			 struct sbx_err *err)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	struct stat st;
	_cleanup_close_ int fd = (int)syscall(SYS_openat2, destfd, path, &how, sizeof(how));

	if (fd < 0 && errno == ENOENT && !must_exist)
		return 0;
	if (fd < 0 && (errno == ELOOP || errno == EXDEV))
		return err_set(err, 0, "%s '%s' goes through a symlink", what, path);
	if (fd < 0)
		return err_sys(err, "%s '%s'", what, path);
	if (fstat(fd, &st) < 0)
		return err_sys(err, "stat '%s'", path);
	if (S_ISLNK(st.st_mode))
		return err_set(err, 0, "%s '%s' would replace or follow a symlink", what, path);
	if (must_exist && !S_ISREG(st.st_mode))
		return err_set(err, 0, "%s '%s' is not a regular file", what, path);
	return 0;
}

/* A layer's entry replaces what lower layers left at its path when that is
 * a symlink (replaced, not followed) or of another kind (a file over a
 * directory, a directory over a file). Parents are resolved without
 * symlinks; a path through one is left for check_on_disk to refuse. */
static int layer_replace(int destfd, const char *path, bool is_dir, struct sbx_err *err)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *parent = slash ? xasprintf("%.*s", (int)(slash - path), path) : xstrdup(".");
	const char *name = slash ? slash + 1 : path;
	_cleanup_close_ int pfd = (int)syscall(SYS_openat2, destfd, parent, &how, sizeof(how));
	struct stat st;

	if (pfd < 0 || fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (S_ISDIR(st.st_mode) && is_dir)
		return 0;
	if (!S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode) && !is_dir)
		return 0; /* a file over a file: libarchive replaces it */
	return rm_rf_at(pfd, name, err);
}

/* Decides what happens to one entry: 1 write it, 0 skip it, -1 refuse. */
static int vet_entry(struct archive_entry *e, int destfd, const struct sbx_import_limits *lim,
		     struct sbx_import_stats *st, struct sbx_err *err)
{
	const char *raw = archive_entry_pathname(e);
	const char *link = archive_entry_hardlink(e);
	mode_t type = archive_entry_filetype(e);

	if (!raw || !*raw)
		return err_set(err, 0, "entry without a usable name");
	if (import_check_name(raw, "entry", lim->max_depth, err) < 0)
		return -1;
	const char *path = import_rel_path(raw);
	if (!*path)
		return 0; /* the root itself: the staging directory keeps its own mode */
	if (lim->layer) {
		const char *base = strrchr(path, '/');
		if (str_has_prefix(base ? base + 1 : path, ".wh."))
			return 0; /* whiteouts: applied before the layer (oci_import.c) */
		if (type != AE_IFCHR && type != AE_IFBLK && type != AE_IFIFO && type != AE_IFSOCK &&
		    layer_replace(destfd, path, type == AE_IFDIR && !link, err) < 0)
			return -1;
	}
	if (type == AE_IFCHR || type == AE_IFBLK || type == AE_IFIFO || type == AE_IFSOCK) {
		st->skipped++;
		return 0;
	}
	if (!link && type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)
		return err_set(err, 0, "entry '%s' has an unsupported type", raw);
	if (check_on_disk(destfd, path, "entry", false, err) < 0)
		return -1;
	if (link) {
		if (import_check_name(link, "hardlink target", lim->max_depth, err) < 0)
			return -1;
		if (!*import_rel_path(link) || check_on_disk(destfd, import_rel_path(link), "hardlink target", true, err) < 0)
			return err_wrap(err, "entry '%s'", raw);
		/* Copied first: the names point into the entry's own storage. */
		_cleanup_free_ char *l = xstrdup(import_rel_path(link));
		archive_entry_set_hardlink(e, l);
	}
	_cleanup_free_ char *p = xstrdup(path);
	archive_entry_set_pathname(e, p);
	mode_t mode = archive_entry_perm(e);
	if (mode & (S_ISUID | S_ISGID)) {
		st->suid_stripped++;
		archive_entry_set_perm(e, mode & ~(mode_t)(S_ISUID | S_ISGID));
	}
	if (++st->entries > lim->max_entries)
		return err_set(err, 0, "more than %llu entries", (unsigned long long)lim->max_entries);
	return 1;
}

/* libarchive's own codes are negative; only a real errno is worth showing. */
static int write_errno(struct archive *a)
{
	return archive_errno(a) > 0 ? archive_errno(a) : 0;
}

static int copy_data(struct archive *in, struct archive *out, const char *path,
		     const struct sbx_import_limits *lim, struct sbx_import_stats *st,
		     struct sbx_err *err)
{
	const void *buf;
	size_t size;
	la_int64_t off;
	int r;

	while ((r = archive_read_data_block(in, &buf, &size, &off)) == ARCHIVE_OK) {
		st->bytes += size;
		if (st->bytes > lim->max_bytes)
			return err_set(err, 0, "more than %llu bytes of content",
				       (unsigned long long)lim->max_bytes);
		if (archive_write_data_block(out, buf, size, off) < ARCHIVE_OK)
			return err_set(err, write_errno(out), "write '%s': %s", path,
				       archive_error_string(out));
	}
	if (r != ARCHIVE_EOF)
		return err_set(err, 0, "read '%s': %s", path, archive_error_string(in));
	return 0;
}

static int extract_one(struct archive *in, struct archive *out, struct archive_entry *e,
		       const struct sbx_import_limits *lim, struct sbx_import_stats *st,
		       struct sbx_err *err)
{
	const char *path = archive_entry_pathname(e);

	if (archive_write_header(out, e) != ARCHIVE_OK)
		return err_set(err, write_errno(out), "entry '%s': %s", path,
			       archive_error_string(out));
	if (archive_entry_filetype(e) == AE_IFREG && archive_entry_size(e) > 0 &&
	    copy_data(in, out, path, lim, st, err) < 0)
		return -1;
	if (archive_write_finish_entry(out) != ARCHIVE_OK)
		return err_set(err, write_errno(out), "entry '%s': %s", path,
			       archive_error_string(out));
	return 0;
}

static int extract_loop(struct archive *in, struct archive *out, int destfd,
			const struct sbx_import_limits *lim, struct sbx_import_stats *st,
			struct sbx_err *err)
{
	struct archive_entry *e;
	int r;

	while ((r = archive_read_next_header(in, &e)) == ARCHIVE_OK) {
		int v = vet_entry(e, destfd, lim, st, err);
		if (v < 0)
			return -1;
		if (v > 0 && extract_one(in, out, e, lim, st, err) < 0)
			return -1;
	}
	if (r != ARCHIVE_EOF)
		return err_set(err, 0, "not a readable tarball: %s", archive_error_string(in));
	/* Applies the deferred directory modes and times. */
	if (archive_write_close(out) != ARCHIVE_OK)
		return err_set(err, write_errno(out), "finishing: %s", archive_error_string(out));
	return 0;
}

static struct archive *open_reader(int archive_fd, struct sbx_err *err)
{
	struct archive *in = archive_read_new();

	if (!in) {
		err_set(err, ENOMEM, "libarchive");
		return NULL;
	}
	archive_read_support_format_tar(in);
	archive_read_support_filter_none(in);
	archive_read_support_filter_gzip(in);
	archive_read_support_filter_xz(in);
	archive_read_support_filter_zstd(in);
	if (archive_read_open_fd(in, archive_fd, 1 << 16) != ARCHIVE_OK) {
		err_set(err, 0, "not a tarball: %s", archive_error_string(in));
		archive_read_free(in);
		return NULL;
	}
	return in;
}

int import_extract_fd(int archive_fd, int destfd, const struct sbx_import_limits *lim,
		      struct sbx_import_stats *stats, struct sbx_err *err)
{
	_cleanup_close_ int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* pax headers carry UTF-8 names; under the C locale libarchive refuses
	 * them, so this thread converts as C.UTF-8 while it extracts. */
	locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	locale_t old = utf8 ? uselocale(utf8) : (locale_t)0;
	struct archive *in, *out = NULL;
	int r = -1;

	if (cwd < 0) {
		err_sys(err, "open the working directory");
		goto done;
	}
	if (!(in = open_reader(archive_fd, err)))
		goto done;
	out = archive_write_disk_new();
	if (!out) {
		archive_read_free(in);
		err_set(err, ENOMEM, "libarchive");
		goto done;
	}
	archive_write_disk_set_options(out, extract_flags);
	/* libarchive resolves entry names against the working directory. */
	if (fchdir(destfd) < 0)
		err_sys(err, "enter the staging directory");
	else
		r = extract_loop(in, out, destfd, lim, stats, err);
	if (fchdir(cwd) < 0 && r == 0)
		r = err_sys(err, "return to the working directory");
	archive_write_free(out);
	archive_read_free(in);
done:
	if (utf8) {
		uselocale(old);
		freelocale(utf8);
	}
	return r;
}
