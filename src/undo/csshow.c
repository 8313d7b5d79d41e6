/* csshow.c - `changes show` and the MCP server's list_changes (csdiff.h):
 * every entry of the model with the mode apply gives it and its verdict,
 * deletions first. Added files that the project's own .gitignore ignores
 * (a node_modules/ of 20,000 files) are folded into one line per top
 * directory; nothing that acts on the host's own files is ever folded. */
#define _GNU_SOURCE
#include "undo/csdiff.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "undo/csignore.h"
#include "undo/csname.h"

unsigned changeset_umask(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned m;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Umask: %o", &m) == 1)
			return m & 0777;
	return 022;
}

int changeset_verdicts(struct changeset *cs, size_t *nbad, struct sbx_err *err)
{
	_cleanup_close_ int dir = open(cs->project, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (dir < 0)
		return err_sys(err, "change set %s: open '%s'", cs->id, cs->project);
	return changeset_check(cs, dir, nbad, err);
}

struct group {
	char *dir;    /* with its '/', or "" for DIR's own */
	bool ignored; /* dir itself is ignored (not only some files in it) */
	size_t n, first;
	uint64_t bytes;
};

struct fold {
	struct cs_ignore *ig;
	char *top;   /* an ignored directory (with '/'): all below is ignored */
	char *clean; /* a directory (with '/') neither ignored nor below one */
	struct group *g;
	size_t ng;
};

/* The length of the directory e is folded into (the topmost ignored one,
 * else its own), or -1 when no rule ignores it. Entries come in path
 * order: each directory is asked about once. */
static ssize_t fold_dir(struct fold *f, const struct cs_entry *e)
{
	const char *p = e->path;
	size_t keep = 0;

	if (f->top && !strncmp(p, f->top, strlen(f->top)))
		return (ssize_t)strlen(f->top);
	free(steal_ptr(f->top));
	for (size_t i = 0; f->clean && f->clean[i] && f->clean[i] == p[i]; i++)
		if (p[i] == '/')
			keep = i + 1;
	for (const char *s = strchr(p + keep, '/'); s; s = strchr(s + 1, '/')) {
		_cleanup_free_ char *d = strndup(p, (size_t)(s - p));
		if (csignore_match(f->ig, d, true)) {
			f->top = xasprintf("%s/", d);
			return s - p + 1;
		}
		keep = (size_t)(s - p) + 1;
	}
	free(f->clean);
	f->clean = strndup(p, keep);
	/* git asks the disk whether a path is a directory: one the host does
	 * not have is told by what is below it (fold_dirs) */
	if (e->type == CS_DIR || !csignore_match(f->ig, p, false))
		return -1;
	return (ssize_t)keep;
}

static size_t group_of(struct fold *f, const char *path, size_t len, size_t i)
{
	for (size_t k = f->ng; k-- > 0;)
		if (strlen(f->g[k].dir) == len && !strncmp(f->g[k].dir, path, len))
			return k;
	f->g = xrealloc(f->g, (f->ng + 1) * sizeof(*f->g));
	f->g[f->ng] = (struct group){ .dir = strndup(path, len), .first = i };
	return f->ng++;
}

/* An added directory is folded with what is below it when it lies in a
 * directory found ignored (its own path, or one above). */
static void fold_dirs(const struct changeset *cs, struct fold *f, ssize_t *fold)
{
	for (size_t i = 0; i < cs->n; i++) {
		const struct cs_entry *e = &cs->e[i];
		if (!f->ig || e->kind != CS_ADDED || e->type != CS_DIR || e->why || fold[i] >= 0)
			continue;
		_cleanup_free_ char *d = xasprintf("%s/", e->path);
		for (size_t k = 0; k < f->ng; k++) {
			struct group *g = &f->g[k];
			if (g->ignored && !strncmp(d, g->dir, strlen(g->dir))) {
				fold[i] = (ssize_t)k;
				g->n++;
				g->first = g->first < i ? g->first : i;
				break;
			}
		}
	}
}

/* fold[i]: the group entry i is folded into, or -1. Only an addition of a
 * file or directory with no verdict folds: never a deletion, a change of
 * a host file, a mode change, a symlink or a special file. */
static void fold_plan(const struct changeset *cs, struct fold *f, ssize_t *fold)
{
	for (size_t i = 0; i < cs->n; i++) {
		const struct cs_entry *e = &cs->e[i];
		ssize_t len = -1;
		fold[i] = -1;
		if (f->ig && e->kind == CS_ADDED && (e->type == CS_FILE || e->type == CS_DIR) && !e->why)
			len = fold_dir(f, e);
		if (len < 0)
			continue;
		size_t g = group_of(f, e->path, (size_t)len, i);
		f->g[g].ignored |= f->top && (size_t)len == strlen(f->top);
		f->g[g].n++;
		f->g[g].bytes += e->type == CS_FILE ? e->size : 0;
		fold[i] = (ssize_t)g;
	}
	fold_dirs(cs, f, fold);
	for (size_t i = 0; i < cs->n; i++) /* one entry alone is shown as it is */
		if (fold[i] >= 0 && f->g[fold[i]].n == 1)
			fold[i] = -1;
}

static void commas(uint64_t v, char *buf, size_t size)
{
	char d[32];
	int n = snprintf(d, sizeof(d), "%" PRIu64, v), o = 0;

	for (int i = 0; i < n && (size_t)o + 2 < size; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = d[i];
	}
	buf[o] = '\0';
}

static void show_group(const struct group *g, FILE *out)
{
	char n[32], size[32];
	_cleanup_free_ char *q = csname_show(g->dir[0] ? g->dir : "./");

	commas(g->n, n, sizeof(n));
	format_size_human(g->bytes, size, sizeof(size));
	fprintf(out, "%s: %s added, %s (ignored by .gitignore)\n", q, n, size);
}

/* The mode column: what apply gives (for a deletion, what goes); *note
 * says how it differs from the host's or the sandbox's mode. */
static void show_mode(const struct cs_entry *e, unsigned umask_bits, char mode[11], char *note, size_t size)
{
	unsigned applied = changeset_applied_mode(e, umask_bits);
	char a[11], b[11];

	note[0] = '\0';
	if (e->kind == CS_DELETED || (e->kind == CS_CHANGED && e->type == CS_DIR)) {
		csname_mode(e->kind == CS_DELETED && e->old_type ? e->old_type : e->type, e->old_mode, mode);
		return;
	}
	if (e->type == CS_SYMLINK || e->type == CS_OTHER) {
		csname_mode(e->type, e->type == CS_SYMLINK ? 0777 : e->mode, mode);
		return;
	}
	csname_mode(e->type, applied, mode);
	if (e->kind != CS_CHANGED)
		return;
	csname_mode(e->type, e->old_mode & 0777, a);
	csname_mode(e->type, e->mode & 0777, b);
	if ((e->old_mode & 0777) != applied)
		snprintf(note, size, "  (mode %s -> %s)", a, mode);
	else if ((e->mode & 0777) != applied)
		snprintf(note, size, "  (mode %s not applied)", b);
}

static void show_entry(const struct cs_entry *e, unsigned umask_bits, FILE *out)
{
	char kind[32], size[32] = "-", mode[11], note[64];
	_cleanup_free_ char *q = csname_show(e->path);
	_cleanup_free_ char *t = e->type == CS_SYMLINK && e->target && e->kind != CS_DELETED
		? csname_show(e->target) : NULL;

	snprintf(kind, sizeof(kind), "%s %s", changeset_kind_name(e->kind), changeset_type_name(e->type));
	if (e->kind != CS_DELETED && e->type != CS_DIR)
		snprintf(size, sizeof(size), "%" PRIu64, e->size);
	show_mode(e, umask_bits, mode, note, sizeof(note));
	fprintf(out, "%-17s %s %12s  %s%s%s%s\n", kind, mode, size, q, t ? " -> " : "", t ? t : "", note);
	if (e->why)
		fprintf(out, "    %s: %s\n", e->conflict ? "conflict" : "not applied", e->why);
}

static void show_summary(const struct changeset *cs, FILE *out)
{
	size_t n[4] = { 0 }, bad = 0, out_ = 0;

	for (size_t i = 0; i < cs->n; i++) {
		const struct cs_entry *e = &cs->e[i];
		n[e->kind == CS_ADDED ? 0 : e->kind == CS_DELETED ? 2 : 1]++;
		bad += e->why && e->conflict;
		out_ += e->why && !e->conflict;
	}
	fprintf(out, "changes %s: %zu added, %zu changed, %zu deleted", cs->id, n[0], n[1], n[2]);
	if (bad)
		fprintf(out, "; %zu conflict%s (apply refuses the whole set)", bad, bad == 1 ? "" : "s");
	if (out_)
		fprintf(out, "; %zu not applied", out_);
	fputc('\n', out);
}

int changeset_show(const struct changeset *cs, const struct cs_render *o, FILE *out, struct sbx_err *err)
{
	struct fold f = { .ig = o->all ? NULL : csignore_open(cs->project) };
	_cleanup_free_ ssize_t *fold = xcalloc(cs->n + 1, sizeof(*fold));

	fold_plan(cs, &f, fold);
	show_summary(cs, out);
	for (size_t i = 0; i < cs->n; i++) /* deletions first, never folded */
		if (cs->e[i].kind == CS_DELETED)
			show_entry(&cs->e[i], o->umask_bits, out);
	for (size_t i = 0; i < cs->n; i++) {
		if (cs->e[i].kind == CS_DELETED)
			continue;
		if (fold[i] < 0)
			show_entry(&cs->e[i], o->umask_bits, out);
		else if (f.g[fold[i]].first == i)
			show_group(&f.g[fold[i]], out);
	}
	for (size_t k = 0; k < f.ng; k++)
		free(f.g[k].dir);
	free(f.g);
	free(f.top);
	free(f.clean);
	csignore_close(f.ig);
	return fflush(out) == 0 ? 0 : err_sys(err, "write the listing");
}
