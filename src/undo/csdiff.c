/* csdiff.c - a change set as git's diff against its project (csdiff.h):
 * `sbxrun changes diff`, `changes export --patch` and the MCP server's
 * diff_changes. Every block is rendered from an entry and the mode apply
 * gives it; deletions come first. */
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

#include "base/log.h"
#include "base/util.h"
#include "undo/csname.h"
#include "undo/cspatch.h"
#include "undo/diff.h"

/* A side of a diff: the file at path below dirfd (absent: an empty side).
 * The set may be live (the sandbox still writes it) and what the walk saw
 * a file may be a FIFO or a device by now: opened without blocking, and
 * anything but a regular file is never read; 1 then (shown as special).
 * Memory stays bounded (diff.h): a big side is not held. */
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

struct dctx {
	const struct changeset *cs;
	const struct cs_render *o;
	int upper, dir;
	FILE *out;
};

/* One side of an entry's diff: absent (mode 0), a symlink's target, or a
 * file below tree. */
struct side {
	unsigned mode; /* git's: 0100644, 0100755, 0120000 */
	int tree;
	const char *target;
	struct diff_side ds; /* the file's, or the target as data */
	bool bin;            /* held and not text */
	bool special;        /* a special file by now: never read */
	char id[CS_BLOB_HEX + 1];
};

static unsigned git_mode(char type, unsigned perm)
{
	return type == CS_SYMLINK ? 0120000 : perm & 0111 ? 0100755 : 0100644;
}

static int open_side(int tree, const char *path, struct sbx_err *err)
{
	struct open_how how = { .flags = O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	struct stat st;
	int fd = (int)syscall(SYS_openat2, tree, path, &how, sizeof(how));

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		return fd;
	if (fd >= 0)
		close(fd);
	_cleanup_free_ char *q = csname_show(path);
	return err_set(err, fd < 0 ? errno : 0, "export: '%s' is no longer a file it can read", q);
}

static int load(const struct dctx *c, struct side *s, const char *path, struct sbx_err *err)
{
	if (!s->mode) {
		s->ds = DIFF_SIDE_NONE;
		strcpy(s->id, CS_BLOB_NONE);
		return 0;
	}
	if (s->target) {
		s->ds = DIFF_SIDE_NONE;
		s->ds.data = xstrdup(s->target);
		s->ds.len = s->ds.size = strlen(s->target);
	} else {
		s->special = read_side(s->tree, path, &s->ds) == 1;
	}
	s->bin = s->ds.data && !diff_is_text(s->ds.data, s->ds.len);
	if (!c->o->patch)
		return 0;
	if (s->special) {
		_cleanup_free_ char *q = csname_show(path);
		return err_set(err, 0, "export: '%s' is no longer a file it can read", q);
	}
	if (s->ds.data || s->ds.fd < 0) {
		cspatch_blob_id(s->ds.data ? s->ds.data : "", s->ds.len, s->id);
		return 0;
	}
	uint64_t size;
	_cleanup_close_ int fd = open_side(s->tree, path, err);
	return fd < 0 ? -1 : cspatch_blob_id_fd(fd, s->id, &size, err);
}

static bool same(const struct dctx *c, const struct side *a, const struct side *b)
{
	if (!a->mode || !b->mode)
		return false;
	if (c->o->patch)
		return !strcmp(a->id, b->id);
	return a->ds.data && b->ds.data && a->ds.len == b->ds.len && !memcmp(a->ds.data, b->ds.data, a->ds.len);
}

/* The hunks, or the binary line or patch, of a against b. */
static int body(const struct dctx *c, const char *path, const struct side *a, const struct side *b,
		const char *qa, const char *qb, struct sbx_err *err)
{
	const char *from = a->mode ? qa : "/dev/null", *to = b->mode ? qb : "/dev/null";

	if (!c->o->patch) {
		_cleanup_free_ char *q = csname_show(path);
		if (a->special || b->special) /* a live set's file turned special: never read */
			fprintf(c->out, "# %s: a special file by now, not read\n", q);
		else
			diff_sides(&a->ds, &b->ds, from, to, c->out);
		return 0;
	}
	bool held = (a->ds.data || a->ds.fd < 0) && (b->ds.data || b->ds.fd < 0);
	if (held && !a->bin && !b->bin) {
		diff_unified(a->ds.data ? a->ds.data : "", a->ds.len, b->ds.data ? b->ds.data : "", b->ds.len, from,
			     to, c->out);
		return 0;
	}
	_cleanup_close_ int fd = b->mode ? open_side(b->tree, path, err) : -1;
	return b->mode && fd < 0 ? -1 : cspatch_binary(fd, c->out, err);
}

/* One `diff --git` block, a to b; nothing when they are the same. */
static int block(const struct dctx *c, const char *path, struct side *a, struct side *b, struct sbx_err *err)
{
	a->ds = b->ds = DIFF_SIDE_NONE; /* what load has not reached is freed as absent */
	int r = load(c, a, path, err) < 0 || load(c, b, path, err) < 0 ? -1 : 0;
	bool eq = r == 0 && same(c, a, b);

	if (r == 0 && !(eq && a->mode == b->mode)) {
		_cleanup_free_ char *qa = csname_git("a/", path), *qb = csname_git("b/", path);
		fprintf(c->out, "diff --git %s %s\n", qa, qb);
		if (!a->mode)
			fprintf(c->out, "new file mode %06o\n", b->mode);
		else if (!b->mode)
			fprintf(c->out, "deleted file mode %06o\n", a->mode);
		else if (a->mode != b->mode)
			fprintf(c->out, "old mode %06o\nnew mode %06o\n", a->mode, b->mode);
		if (!eq && c->o->patch)
			fprintf(c->out, a->mode == b->mode ? "index %s..%s %06o\n" : "index %s..%s\n", a->id, b->id,
				a->mode);
		if (!eq)
			r = body(c, path, a, b, qa, qb, err);
	}
	diff_side_free(&a->ds);
	diff_side_free(&b->ds);
	return r;
}

/* What of the entry apply leaves out or changes, said before it: a line
 * git apply passes over, or, for a patch, a warning on stderr. Returns
 * whether the entry is still rendered. */
static bool note(const struct dctx *c, const struct cs_entry *e)
{
	_cleanup_free_ char *q = csname_show(e->path);
	unsigned applied = changeset_applied_mode(e, c->o->umask_bits);

	if (e->why && c->o->patch) {
		log_warn("changes export: '%s' left out: %s", q, e->why);
		return false;
	}
	if (e->why)
		fprintf(c->out, "# %s: %s: %s\n", q, e->conflict ? "conflict" : "not applied", e->why);
	if (e->kind == CS_CHANGED && e->type == CS_FILE && (e->mode & 0777) != applied && !c->o->patch) {
		char m[11], a[11];
		csname_mode(e->type, e->mode, m);
		csname_mode(e->type, applied, a);
		fprintf(c->out, "# %s: mode %s not applied (apply gives %s)\n", q, m, a);
	}
	return !e->why || e->conflict;
}

static bool is_file(char type)
{
	return type == CS_FILE || type == CS_SYMLINK;
}

/* The first pass: what goes from the host (a deletion, or the old side of
 * an entry of another type now). */
static int render_gone(const struct dctx *c, const struct cs_entry *e, struct sbx_err *err)
{
	char old = e->old_type ? e->old_type : e->type;
	struct side a = { .mode = git_mode(old, e->old_mode), .tree = c->dir, .target = e->old_target };
	struct side b = { 0 };

	if (e->kind == CS_DELETED && !note(c, e))
		return 0;
	if (e->kind == CS_REPLACED && e->why && (c->o->patch || !e->conflict))
		return 0; /* said with its new side */
	if (!is_file(old)) {
		if (c->o->patch && old == CS_OTHER) {
			_cleanup_free_ char *q = csname_show(e->path);
			log_warn("changes export: '%s' left out: a patch cannot delete a special file", q);
		}
		return 0;
	}
	return block(c, e->path, &a, &b, err);
}

static bool empty_dir(const struct changeset *cs, size_t i)
{
	size_t l = strlen(cs->e[i].path);
	return i + 1 == cs->n || strncmp(cs->e[i + 1].path, cs->e[i].path, l) || cs->e[i + 1].path[l] != '/';
}

/* The second pass: what comes (an addition, a change, the new side of a
 * replaced entry). */
static int render_new(const struct dctx *c, size_t i, struct sbx_err *err)
{
	const struct cs_entry *e = &c->cs->e[i];
	struct side a = { 0 };
	struct side b = { .mode = git_mode(e->type, changeset_applied_mode(e, c->o->umask_bits)),
			  .tree = c->upper, .target = e->target };

	if (!note(c, e))
		return 0;
	if (e->type == CS_DIR && e->kind != CS_CHANGED && c->o->patch && empty_dir(c->cs, i)) {
		_cleanup_free_ char *q = csname_show(e->path);
		log_warn("changes export: '%s' left out: a patch cannot make an empty directory", q);
	}
	if (!is_file(e->type))
		return 0;
	if (e->kind == CS_CHANGED)
		a = (struct side){ .mode = git_mode(e->old_type, e->old_mode), .tree = c->dir,
				   .target = e->old_target };
	return block(c, e->path, &a, &b, err);
}

int changeset_render_diff(const struct changeset *cs, char *const *paths, size_t npaths,
			  const struct cs_render *o, FILE *out, struct sbx_err *err)
{
	_cleanup_free_ char *up = xasprintf("%s/upper", cs->dir);
	_cleanup_close_ int upper = open(up, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int dir = open(cs->project, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dctx c = { .cs = cs, .o = o, .upper = upper, .dir = dir, .out = out };

	if (upper < 0)
		return err_sys(err, "open '%s'", up);
	/* deletions first, as everywhere a change set is shown; an error of
	 * out (a capped stream is full) ends it */
	for (size_t i = 0; i < cs->n && !ferror(out); i++) {
		const struct cs_entry *e = &cs->e[i];
		if (wanted(e->path, paths, npaths) && (e->kind == CS_DELETED || e->kind == CS_REPLACED) &&
		    render_gone(&c, e, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < cs->n && !ferror(out); i++)
		if (wanted(cs->e[i].path, paths, npaths) && cs->e[i].kind != CS_DELETED && render_new(&c, i, err) < 0)
			return -1;
	return fflush(out) == 0 ? 0 : err_sys(err, "write the diff");
}

int changeset_diff(const struct changeset *cs, char *const *paths, size_t npaths, FILE *out,
		   struct sbx_err *err)
{
	struct cs_render o = { .umask_bits = changeset_umask() };
	return changeset_render_diff(cs, paths, npaths, &o, out, err);
}
