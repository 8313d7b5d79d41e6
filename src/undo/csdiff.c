/* csdiff.c - a change set as a unified diff against its project
 * (csdiff.h): `sbxrun changes diff` and the MCP server's diff_changes. */
#define _GNU_SOURCE
#include "undo/csdiff.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/util.h"
#include "undo/diff.h"

#define DIFF_MAX (64u << 20) /* a side of a text diff is read whole: at most this */

/* A side of a diff: the file at path below dirfd, read whole (text), or
 * empty when absent; *bin when it is not text or too big. */
static int read_side(int dirfd, const char *path, char **out, size_t *len, bool *bin)
{
	struct open_how how = { .flags = O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	struct stat st;
	*out = NULL;
	*len = 0;
	if (dirfd < 0)
		return 0;
	_cleanup_close_ int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	if ((uint64_t)st.st_size > DIFF_MAX) {
		*bin = true;
		return 0;
	}
	char *buf = xmalloc((size_t)st.st_size + 1);
	size_t n = 0;
	for (ssize_t r; n < (size_t)st.st_size && (r = read(fd, buf + n, (size_t)st.st_size - n)) > 0;)
		n += (size_t)r;
	*out = buf;
	*len = n;
	*bin = *bin || !diff_is_text(buf, n);
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
	for (size_t i = 0; i < cs->n; i++) {
		const struct cs_entry *e = &cs->e[i];
		if (!wanted(e->path, paths, npaths) || e->type == CS_DIR)
			continue;
		_cleanup_free_ char *q = changeset_escape(e->path);
		if (e->type != CS_FILE) {
			fprintf(out, "%s %s: %s\n", changeset_kind_name(e->kind), changeset_type_name(e->type), q);
			continue;
		}
		_cleanup_free_ char *a = NULL, *b = NULL;
		size_t na = 0, nb = 0;
		bool bin = false;
		read_side(e->kind == CS_ADDED ? -1 : dir, e->path, &a, &na, &bin);
		read_side(e->kind == CS_DELETED ? -1 : upper, e->path, &b, &nb, &bin);
		_cleanup_free_ char *from = e->kind == CS_ADDED ? xstrdup("/dev/null") : xasprintf("a/%s", q);
		_cleanup_free_ char *to = e->kind == CS_DELETED ? xstrdup("/dev/null") : xasprintf("b/%s", q);
		if (bin)
			fprintf(out, "Binary files %s and %s differ\n", from, to);
		else
			diff_unified(a ? a : "", na, b ? b : "", nb, from, to, out);
	}
	return fflush(out) == 0 ? 0 : err_sys(err, "write the diff");
}
