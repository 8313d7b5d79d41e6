/* util.c - helpers shared by every module: memory, numbers, files. */
#define _GNU_SOURCE
#include "base/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

void util_freep(void *p)
{
	free(*(void **)p);
}

void util_closep(int *fd)
{
	if (*fd >= 0) {
		int e = errno;
		close(*fd);
		errno = e;
	}
}

void util_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

void util_strvfreep(char ***v)
{
	if (!*v)
		return;
	for (char **p = *v; *p; p++)
		free(*p);
	free(*v);
}

char **util_strvdup(char *const *v)
{
	size_t n = 0;
	while (v[n])
		n++;
	char **c = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		c[i] = xstrdup(v[i]);
	return c;
}

static void oom(void)
{
	fputs("sbxrun: error: out of memory\n", stderr);
	_exit(125);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		oom();
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	char *p;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) < 0)
		oom();
	va_end(ap);
	return p;
}

bool str_has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Splits "123unit" into a number and a unit; digits only, no sign, no space. */
static int split_number(const char *s, uint64_t *num, const char **unit)
{
	uint64_t v = 0;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*num = v;
	*unit = p;
	return 0;
}

struct unit { const char *name; uint64_t mult; };

static int apply_unit(const char *s, const struct unit *units, size_t n, uint64_t *out)
{
	uint64_t num;
	const char *unit;

	if (split_number(s, &num, &unit) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(unit, units[i].name) != 0)
			continue;
		if (units[i].mult && num > UINT64_MAX / units[i].mult)
			return -1;
		*out = num * units[i].mult;
		return 0;
	}
	return -1;
}

/* The longest duration any key takes: a year, leap day included. */
#define DURATION_MAX_MS (366ULL * 86400000)

int parse_duration_ms(const char *s, uint64_t *out, struct sbx_err *err)
{
	static const struct unit units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "", 1000 }, { "m", 60000 }, { "h", 3600000 },
		{ "d", 86400000 },
	};
	if (strcmp(s, "none") == 0) {
		*out = 0;
		return 0;
	}
	if (apply_unit(s, units, ARRAY_SIZE(units), out) == 0 && *out <= DURATION_MAX_MS)
		return 0;
	/* digits and a unit: well formed, only too long (or too many digits) */
	size_t digits = strspn(s, "0123456789");
	for (size_t i = 0; digits && i < ARRAY_SIZE(units); i++)
		if (strcmp(s + digits, units[i].name) == 0)
			return err_set(err, 0, "invalid duration '%s': longer than the maximum of %llud",
				       s, DURATION_MAX_MS / 86400000ULL);
	return err_set(err, 0, "invalid duration '%s' (use e.g. 500ms, 30s, 5m, 1h, 7d, or none)", s);
}

int parse_size(const char *s, uint64_t *out, struct sbx_err *err)
{
	static const struct unit units[] = {
		{ "", 1 }, { "K", 1ULL << 10 }, { "M", 1ULL << 20 }, { "G", 1ULL << 30 },
		{ "T", 1ULL << 40 }, { "k", 1ULL << 10 }, { "KiB", 1ULL << 10 },
		{ "MiB", 1ULL << 20 }, { "GiB", 1ULL << 30 }, { "TiB", 1ULL << 40 },
	};
	if (strcmp(s, "unlimited") == 0) {
		*out = 0;
		return 0;
	}
	if (apply_unit(s, units, ARRAY_SIZE(units), out) < 0 || *out > (1ULL << 50))
		return err_set(err, 0, "invalid size '%s' (use e.g. 512K, 64M, 8G, or unlimited)", s);
	return 0;
}

int parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out, struct sbx_err *err)
{
	static const struct unit units[] = { { "", 1 } };
	if (strcmp(s, "unlimited") == 0 && min == 0) {
		*out = 0;
		return 0;
	}
	if (apply_unit(s, units, 1, out) < 0 || *out < min || *out > max)
		return err_set(err, 0, "invalid number '%s' (a whole number from %" PRIu64
			       " to %" PRIu64 ")", s, min, max);
	return 0;
}

int parse_cpus_milli(const char *s, uint64_t *out, struct sbx_err *err)
{
	uint64_t whole, frac = 0, scale = 100;
	const char *rest;

	if (split_number(s, &whole, &rest) < 0 || whole > 4096)
		goto bad;
	if (*rest == '.') {
		rest++;
		if (!isdigit((unsigned char)*rest))
			goto bad;
		for (; isdigit((unsigned char)*rest); rest++, scale /= 10) {
			if (scale == 0)
				goto bad;
			frac += (uint64_t)(*rest - '0') * scale;
		}
	}
	if (*rest || whole * 1000 + frac == 0)
		goto bad;
	*out = whole * 1000 + frac;
	return 0;
bad:
	return err_set(err, 0, "invalid cpu count '%s' (e.g. 1, 2, 0.5)", s);
}

void format_duration(uint64_t ms, char *buf, size_t size)
{
	if (ms == 0)
		snprintf(buf, size, "none");
	else if (ms % 86400000 == 0)
		snprintf(buf, size, "%" PRIu64 "d", ms / 86400000);
	else if (ms % 3600000 == 0)
		snprintf(buf, size, "%" PRIu64 "h", ms / 3600000);
	else if (ms % 60000 == 0)
		snprintf(buf, size, "%" PRIu64 "m", ms / 60000);
	else if (ms % 1000 == 0)
		snprintf(buf, size, "%" PRIu64 "s", ms / 1000);
	else
		snprintf(buf, size, "%" PRIu64 "ms", ms);
}

void format_size_human(uint64_t bytes, char *buf, size_t size)
{
	static const char units[] = "BKMGT";
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f%c" : "%.0f%c", v, units[u]);
}

void format_size(uint64_t bytes, char *buf, size_t size)
{
	static const char units[] = "TGMK";
	if (bytes == 0) {
		snprintf(buf, size, "unlimited");
		return;
	}
	for (int i = 0; i < 4; i++) {
		uint64_t m = 1ULL << (10 * (4 - i));
		if (bytes % m == 0) {
			snprintf(buf, size, "%" PRIu64 "%c", bytes / m, units[i]);
			return;
		}
	}
	snprintf(buf, size, "%" PRIu64, bytes);
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int read_file_beneath(int dirfd, const char *path, size_t max, char **out, size_t *len,
		      struct sbx_err *err)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	_cleanup_close_ int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t n = 0, cap;

	if (fd < 0)
		return err_sys(err, "open '%s'", path);
	if (fstat(fd, &st) < 0)
		return err_sys(err, "stat '%s'", path);
	if (!S_ISREG(st.st_mode))
		return err_plain(err, EINVAL, "'%s' is not a regular file", path);
	/* the file's size, not max (a change set's entries may be 2G): a
	 * machine of 2G refuses that much at once; grown if the file grows */
	cap = (uint64_t)st.st_size < max ? (size_t)st.st_size + 1 : max;
	buf = xmalloc(cap + 1);
	for (;;) {
		if (n == cap && cap < max) {
			cap = cap > max / 2 ? max : cap * 2;
			buf = xrealloc(buf, cap + 1);
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return err_sys(err, "read '%s'", path);
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == max) {
			char c;
			if (read(fd, &c, 1) > 0)
				return err_plain(err, EFBIG, "'%s' is larger than %zu bytes", path, max);
			break;
		}
	}
	buf[n] = '\0';
	*out = steal_ptr(buf);
	if (len)
		*len = n;
	return 0;
}

int mkdir_p(const char *path, mode_t mode, struct sbx_err *err)
{
	_cleanup_free_ char *p = xstrdup(path);

	for (char *s = p + 1; ; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			return err_sys(err, "mkdir '%s'", p);
		*s = c;
		if (c == '\0')
			break;
	}
	return 0;
}

int dir_each(int dirfd, int (*fn)(int dirfd, const char *name, void *arg), void *arg,
	     struct sbx_err *err)
{
	/* a description of its own: a dup would share (and move) the offset */
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	int r = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return err_sys(err, "read a directory");
	}
	while (r == 0 && (errno = 0, e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			r = fn(dirfd, e->d_name, arg);
	if (r == 0 && errno)
		r = err_sys(err, "read a directory");
	closedir(d);
	return r;
}

/* Deeper than this a directory is not entered but moved up into the
 * directory being removed (renamed, without replacing anything) and removed
 * from there in a later pass: the directories held open stay few however
 * deep the tree (a sandbox can make its writable layer 100,000 deep). */
#define RM_MAX_DEPTH 32

struct rm_ctx {
	struct sbx_err *err;
	int top;      /* the directory being removed */
	int depth;    /* of the directory whose entries are visited */
	int *hoisted; /* directories moved up into top, to visit again */
	dev_t dev;    /* top's file system and mount: the removal never */
	uint64_t mnt; /* leaves them (0: statx cannot tell) */
};

static uint64_t mount_id(int fd)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_NO_AUTOMOUNT, STATX_MNT_ID, &sx) == 0 && (sx.stx_mask & STATX_MNT_ID))
		return sx.stx_mnt_id;
	return 0;
}

/* name below dirfd as a directory, never through a symlink, on the tree's
 * mount (c->mnt 0: top's, which sets it), made u+rwx through its handle
 * (a rootfs holds read-only directories; a directory moved to another
 * parent is written to, its ".."): a symlink swapped in for the name
 * never has its target's mode changed. -1 with err (err->errnum ENOTDIR
 * or ELOOP: not a directory now). */
static int rm_open_dir(int dirfd, const char *name, struct rm_ctx *c, struct stat *st)
{
	char proc[64];
	_cleanup_close_ int p = -1;
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == EACCES) /* unreadable: its handle as a path first */
		p = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if ((fd < 0 && p < 0) || fstat(fd >= 0 ? fd : p, st) < 0) {
		err_sys(c->err, "open '%s'", name);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	uint64_t mnt = mount_id(fd >= 0 ? fd : p);
	if (!c->mnt && !c->dev)
		c->dev = st->st_dev, c->mnt = mnt;
	if (st->st_dev != c->dev || (c->mnt && mnt && mnt != c->mnt)) {
		if (fd >= 0)
			close(fd);
		errno = EXDEV;
		return err_sys(c->err, "'%s' is a mount point: not removed", name);
	}
	if (fd < 0) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", p);
		(void)!chmod(proc, 0700);
		if ((fd = openat(p, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			return err_sys(c->err, "open '%s'", name);
	} else if ((st->st_mode & 0700) != 0700) {
		(void)!fchmod(fd, 0700);
	}
	return fd;
}

static int rm_entry(int dirfd, const char *name, void *arg);

/* The directory fd (name below dirfd; closed here) emptied and removed. */
static int rm_dir(int dirfd, const char *name, int fd, const struct rm_ctx *c)
{
	struct rm_ctx sub = *c;

	sub.depth++;
	int r = dir_each(fd, rm_entry, &sub, c->err);
	close(fd);
	if (r < 0)
		return err_wrap(c->err, "%s", name);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return err_sys(c->err, "rmdir '%s'", name);
	return 0;
}

/* Moves a deep directory up into top under a name of its own. */
static int rm_hoist(int dirfd, const char *name, const struct stat *st, const struct rm_ctx *c)
{
	char to[64];

	for (unsigned i = 0; i < 100; i++) {
		snprintf(to, sizeof(to), ".sbxrun-rm-%ju-%u", (uintmax_t)st->st_ino, i);
		if (syscall(SYS_renameat2, dirfd, name, c->top, to, RENAME_NOREPLACE) == 0) {
			(*c->hoisted)++;
			return 1;
		}
		if (errno != EEXIST)
			return 0;
	}
	return 0;
}

static int rm_entry(int dirfd, const char *name, void *arg)
{
	struct rm_ctx *c = arg;
	struct stat st;

	/* most entries are files: unlinked without a stat first (a directory
	 * answers EISDIR) */
	if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return err_sys(c->err, "unlink '%s'", name);
	int fd = rm_open_dir(dirfd, name, c, &st);
	if (fd < 0 && (c->err->errnum == ENOTDIR || c->err->errnum == ELOOP)) {
		if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
			return err_sys(c->err, "unlink '%s'", name);
		return 0;
	}
	if (fd < 0)
		return c->err->errnum == ENOENT ? 0 : -1;
	if (c->depth >= RM_MAX_DEPTH && rm_hoist(dirfd, name, &st, c)) {
		close(fd);
		return 0;
	}
	return rm_dir(dirfd, name, fd, c);
}

int rm_rf_at(int dirfd, const char *name, struct sbx_err *err)
{
	struct stat st;
	int hoisted, r;
	struct rm_ctx c = { err, -1, 1, &hoisted, 0, 0 };

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : err_sys(err, "stat '%s'", name);
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
			return err_sys(err, "unlink '%s'", name);
		return 0;
	}
	/* below a directory handle, the tree stays on that directory's mount */
	if (dirfd != AT_FDCWD && !strchr(name, '/') && fstat(dirfd, &st) == 0)
		c.dev = st.st_dev, c.mnt = mount_id(dirfd);
	_cleanup_close_ int top = rm_open_dir(dirfd, name, &c, &st);
	if (top < 0)
		return err->errnum == ENOENT ? 0 : -1;
	c.top = top;
	do {
		hoisted = 0;
		r = dir_each(top, rm_entry, &c, err);
	} while (r == 0 && hoisted);
	if (r < 0)
		return err_wrap(err, "%s", name);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return err_sys(err, "rmdir '%s'", name);
	return 0;
}

uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void hex_encode(const unsigned char *d, size_t n, char *out)
{
	static const char x[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = x[d[i] >> 4];
		out[2 * i + 1] = x[d[i] & 15];
	}
	out[2 * n] = '\0';
}
