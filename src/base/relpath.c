/* relpath.c - see relpath.h. Text checks only: the caller still resolves
 * the result below a directory fd (RESOLVE_BENEATH or RESOLVE_IN_ROOT). */
#include "base/relpath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

int relpath_check(const char *path, const char *what, struct sbx_err *err)
{
	if (!path[0] || path[0] == '/')
		return err_set(err, 0, "%s '%s' must be a relative path", what, path);
	for (const char *p = path; (p = strstr(p, "..")); p += 2)
		if ((p == path || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
			return err_set(err, 0, "%s '%s' must not contain '..'", what, path);
	return 0;
}

int relpath_split(const char *path, const char *what, char *dir, size_t dirsize, const char **name,
		  struct sbx_err *err)
{
	if (relpath_check(path, what, err) < 0)
		return -1;
	const char *slash = strrchr(path, '/');
	*name = slash ? slash + 1 : path;
	if (!**name || !strcmp(*name, "."))
		return err_set(err, 0, "%s '%s' must name a file", what, path);
	size_t n = slash ? (size_t)(slash - path) : 1;
	if (n >= dirsize)
		return err_set(err, 0, "%s '%s' is too long", what, path);
	memcpy(dir, slash ? path : ".", n);
	dir[n] = '\0';
	return 0;
}

int relpath_copy_spec(const char *spec, char **path, char **dest, struct sbx_err *err)
{
	const char *colon = strchr(spec, ':'), *name;
	char dir[4096];

	*path = *dest = NULL;
	if (!spec[0] || colon == spec)
		return err_set(err, 0, "'%s': PATH is empty (PATH[:DEST])", spec);
	if (colon) {
		struct sbx_err e2;
		if (!colon[1])
			return err_set(err, 0, "'%s': DEST is empty (PATH[:DEST]; leave out ':' for "
				       "PATH's own name)", spec);
		if (relpath_split(colon + 1, "DEST", dir, sizeof(dir), &name, &e2) < 0)
			return err_set(err, 0, "'%s': %s (DEST is relative to the workspace)", spec, e2.msg);
		*dest = xstrdup(colon + 1);
	}
	*path = colon ? strndup(spec, (size_t)(colon - spec)) : xstrdup(spec);
	return 0;
}
