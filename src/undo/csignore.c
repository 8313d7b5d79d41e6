/* csignore.c - a project's .gitignore rules through libgit2 (csignore.h).
 * libgit2 is opened with dlopen when a listing first asks: like libcurl
 * (base/lazylib.c), it is not mapped at every start; unlike it, its absence
 * is no error: nothing is folded. Only the ignore rules are asked for; no
 * hook, filter or program of the repository's configuration is run. */
#define _GNU_SOURCE
#include "undo/csignore.h"

#include <dlfcn.h>
#include <git2.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"

#ifndef SBX_LIBGIT2
#define SBX_LIBGIT2 "libgit2.so"
#endif

struct git_fns {
	__typeof__(git_libgit2_init) *init;
	__typeof__(git_repository_open_ext) *open;
	__typeof__(git_repository_workdir) *workdir;
	__typeof__(git_repository_free) *free;
	__typeof__(git_ignore_path_is_ignored) *ignored;
	__typeof__(git_ignore_clear_internal_rules) *clear;
};

struct cs_ignore {
	struct git_fns git;
	git_repository *repo;
	char *prefix; /* project relative to the work tree: "" or "sub/dir/" */
};

static int load(struct git_fns *g)
{
	static void *h;

	if (!h && !(h = dlopen(SBX_LIBGIT2, RTLD_NOW | RTLD_LOCAL)))
		return -1;
	g->init = (__typeof__(g->init))dlsym(h, "git_libgit2_init");
	g->open = (__typeof__(g->open))dlsym(h, "git_repository_open_ext");
	g->workdir = (__typeof__(g->workdir))dlsym(h, "git_repository_workdir");
	g->free = (__typeof__(g->free))dlsym(h, "git_repository_free");
	g->ignored = (__typeof__(g->ignored))dlsym(h, "git_ignore_path_is_ignored");
	g->clear = (__typeof__(g->clear))dlsym(h, "git_ignore_clear_internal_rules");
	return g->init && g->open && g->workdir && g->free && g->ignored && g->clear ? 0 : -1;
}

struct cs_ignore *csignore_open(const char *project)
{
	struct cs_ignore ig = { 0 };
	char real[PATH_MAX];

	if (!realpath(project, real) || load(&ig.git) < 0 || ig.git.init() < 0)
		return NULL;
	/* the work tree around DIR, on DIR's file system; git's own check of
	 * the repository's owner stays on */
	if (ig.git.open(&ig.repo, real, 0, NULL) < 0)
		return NULL;
	const char *wd = ig.git.workdir(ig.repo);
	size_t l = wd ? strlen(wd) : 0;
	_cleanup_free_ char *dir = xasprintf("%s/", real);
	if (!l || strncmp(dir, wd, l) || ig.git.clear(ig.repo) < 0) {
		ig.git.free(ig.repo);
		return NULL;
	}
	ig.prefix = xstrdup(dir + l);
	struct cs_ignore *out = xmalloc(sizeof(*out));
	*out = ig;
	return out;
}

static bool has_git(const char *path)
{
	for (const char *p = path; p; p = strchr(p, '/'), p = p ? p + 1 : NULL)
		if (!strncasecmp(p, ".git", 4) && (p[4] == '/' || !p[4]))
			return true;
	return false;
}

bool csignore_match(struct cs_ignore *ig, const char *path, bool dir)
{
	int ignored = 0;

	if (!ig || has_git(path))
		return false;
	/* a trailing slash tells git a directory that is not on the host */
	_cleanup_free_ char *p = xasprintf("%s%s%s", ig->prefix, path, dir ? "/" : "");
	return ig->git.ignored(&ignored, ig->repo, p) == 0 && ignored;
}

void csignore_close(struct cs_ignore *ig)
{
	if (!ig)
		return;
	ig->git.free(ig->repo);
	free(ig->prefix);
	free(ig);
}
