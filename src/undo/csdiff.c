/* csdiff.c - a change set as a unified diff against its project
 * (csdiff.h): `sbxrun changes diff` and the MCP server's diff_changes. */
#define _GNU_SOURCE
#include "undo/csdiff.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/util.h"
#include "undo/diff.h"

/* A side of a diff: the file at path below dirfd (absent: an empty side).
 * The set may be live (the sandbox still writes it) and what the walk saw
 * a file may be a FIFO or a device by now: opened without blocking, and
 * anything but a regular file is never read; 1 then (shown as special). */
static int read_side(int dirfd, const char *path, struct diff_side *side)
{
	struct open_how how = { .flags = O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	struct stat st;

	*side = DIFF_SIDE_NONE;
	if (dirfd < 0)
		return 0;
	int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (fd < 0)
		return errno == ELOOP; /* a symlink by now; else absent or unreadable: empty */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || diff_side_open(side, fd, (uint64_t)st.st_size) < 0) {
		close(fd);
		*side = DIFF_SIDE_NONE;
		return 1;
	}
	return 0;
}

static bool wanted(const char *path, char *const *paths, size_t n)
{
	if (!n)
		return true;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(paths[i]);
		if (!strncmp(path, paths[i], l) && (!path[l] || path[l] == '/'))
			return true;
	}
	return false;
}

int changeset_diff(const struct changeset *cs, char *const *paths, size_t npaths, FILE *out,
		   struct sbx_err *err)
{
	_cleanup_free_ char *up = xasprintf("%s/upper", cs->dir);
	_cleanup_close_ int upper = open(up, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int dir = open(cs->project, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (upper < 0)
		return err_sys(err, "open '%s'", up);
	for (size_t i = 0; i < cs->n && !ferror(out); i++) { /* an error: a capped stream is full */
		const struct cs_entry *e = &cs->e[i];
		if (!wanted(e->path, paths, npaths) || e->type == CS_DIR)
			continue;
		_cleanup_free_ char *q = changeset_escape(e->path);
		if (e->type != CS_FILE) {
			fprintf(out, "%s %s: %s\n", changeset_kind_name(e->kind), changeset_type_name(e->type), q);
			continue;
		}
		struct diff_side a, b;
		int odd = read_side(e->kind == CS_ADDED ? -1 : dir, e->path, &a) |
			  read_side(e->kind == CS_DELETED ? -1 : upper, e->path, &b);
		_cleanup_free_ char *from = e->kind == CS_ADDED ? xstrdup("/dev/null") : xasprintf("a/%s", q);
		_cleanup_free_ char *to = e->kind == CS_DELETED ? xstrdup("/dev/null") : xasprintf("b/%s", q);
		if (odd)
			fprintf(out, "%s special: %s\n", changeset_kind_name(e->kind), q);
		else
			diff_sides(&a, &b, from, to, out);
		diff_side_free(&a);
		diff_side_free(&b);
	}
	return fflush(out) == 0 ? 0 : err_sys(err, "write the diff");
}
