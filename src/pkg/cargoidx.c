/* cargoidx.c - see cargoidx.h. json-c parses each line on its own; every
 * member is checked for its type and shape, and what does not fit is
 * dropped, never guessed at. */
#define _GNU_SOURCE
#include "pkg/cargoidx.h"

#include <ctype.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "pkg/rules.h"

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

int cargoidx_name(const char *s, size_t len, char *out, size_t size)
{
	if (len == 0 || len > CARGOIDX_NAME_MAX || len >= size || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (!name_char(s[i]))
			return -1;
		out[i] = (char)tolower((unsigned char)s[i]);
	}
	out[len] = '\0';
	return 0;
}

void cargoidx_path(const char *name, char *out, size_t size)
{
	size_t n = strlen(name);

	if (n <= 2)
		snprintf(out, size, "%zu/%s", n, name);
	else if (n == 3)
		snprintf(out, size, "3/%c/%s", name[0], name);
	else
		snprintf(out, size, "%.2s/%.2s/%s", name, name + 2, name);
}

int cargoidx_path_name(const char *path, size_t len, char *name, size_t size)
{
	const char *slash = memrchr(path, '/', len);
	char want[CARGOIDX_PATH_MAX + 1];

	if (!slash || cargoidx_name(slash + 1, len - (size_t)(slash + 1 - path), name, size) < 0)
		return -1;
	cargoidx_path(name, want, sizeof(want));
	/* the path as given: index paths are lower case, so a capital is refused */
	return strlen(want) == len && memcmp(want, path, len) == 0 ? 0 : -1;
}

bool cargoidx_version(const char *v, size_t n)
{
	if (n == 0 || n > CARGOIDX_VER_MAX || !isdigit((unsigned char)v[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)v[i]) && !strchr(".+-", v[i]))
			return false;
	return true;
}

static const char *str_of(struct json_object *o, const char *key)
{
	struct json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		? json_object_get_string(v) : NULL;
}

static const char *line_fields(struct json_object *o, struct cargoidx_line *out)
{
	const char *name = str_of(o, "name"), *vers = str_of(o, "vers"), *ck = str_of(o, "cksum"), *pt;
	struct json_object *y;
	char lower[CARGOIDX_NAME_MAX + 1];

	if (!name || cargoidx_name(name, strlen(name), lower, sizeof(lower)) < 0)
		return "no crate name";
	if (!vers || !cargoidx_version(vers, strlen(vers)))
		return "no version";
	if (!ck || strlen(ck) != 64 || strspn(ck, "0123456789abcdef") != 64)
		return "no cksum (sha256 in hex)";
	snprintf(out->name, sizeof(out->name), "%s", name);
	snprintf(out->vers, sizeof(out->vers), "%s", vers);
	memcpy(out->cksum, ck, 65);
	out->yanked = false;
	if (json_object_object_get_ex(o, "yanked", &y)) {
		if (!json_object_is_type(y, json_type_boolean))
			return "yanked is not true or false";
		out->yanked = json_object_get_boolean(y);
	}
	out->pubtime = 0;
	if ((pt = str_of(o, "pubtime")) && !(out->pubtime = rules_time(pt)))
		return "pubtime is not a date";
	if (!pt && json_object_object_get_ex(o, "pubtime", &y) && !json_object_is_type(y, json_type_null))
		return "pubtime is not a date";
	return NULL;
}

int cargoidx_line(const char *p, size_t len, struct cargoidx_line *out, const char **why)
{
	struct json_tokener *tok;
	struct json_object *o;

	*why = "not a JSON object";
	if (len == 0 || len > CARGOIDX_LINE_MAX || memchr(p, '\0', len) || !(tok = json_tokener_new_ex(32)))
		return -1;
	o = json_tokener_parse_ex(tok, p, (int)len);
	size_t used = o ? tok->char_offset : 0;
	json_tokener_free(tok);
	/* only blanks after the object (the line is not NUL-terminated) */
	while (used < len && strchr(" \t\r", p[used]) && p[used])
		used++;
	if (!o || !json_object_is_type(o, json_type_object) || used != len) {
		json_object_put(o);
		return -1;
	}
	*why = line_fields(o, out);
	json_object_put(o);
	return *why ? -1 : 0;
}

/* The file's lines one by one (bounds checked): fn gets each; a nonzero
 * return of fn ends the walk with it. */
static int each_line(const char *body, size_t len, int (*fn)(void *arg, const char *p, size_t n), void *arg,
		     const char **why)
{
	size_t lines = 0;

	if (len > CARGOIDX_FILE_MAX) {
		*why = "the index file is too large";
		return -1;
	}
	for (const char *p = body, *end = body + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		if (n > CARGOIDX_LINE_MAX || ++lines > CARGOIDX_LINES_MAX) {
			*why = n > CARGOIDX_LINE_MAX ? "an index line is too long" : "the index file has too many lines";
			return -1;
		}
		int r = n ? fn(arg, p, n) : 0;
		if (r)
			return r;
		p += n + 1;
	}
	return 0;
}

/* Whether a line's crate is the one asked for (index names are compared
 * in lower case, as their paths are). */
static bool same_crate(const struct cargoidx_line *l, const char *name)
{
	return strcasecmp(l->name, name) == 0;
}

struct filter_walk {
	const char *name;
	cargoidx_keep_fn keep;
	void *arg;
	struct cargoidx_filtered *f;
};

static int filter_one(void *arg, const char *p, size_t n)
{
	struct filter_walk *w = arg;
	struct cargoidx_line l;
	const char *why;

	if (cargoidx_line(p, n, &l, &why) < 0 || !same_crate(&l, w->name)) {
		w->f->bad++;
		return 0;
	}
	if (w->keep && w->keep(w->arg, &l) < 0) {
		w->f->dropped++;
		return 0;
	}
	memcpy(w->f->out + w->f->len, p, n);
	w->f->len += n;
	w->f->out[w->f->len++] = '\n';
	w->f->kept++;
	return 0;
}

int cargoidx_filter(const char *body, size_t len, const char *name, cargoidx_keep_fn keep, void *arg,
		    struct cargoidx_filtered *f, const char **why)
{
	struct filter_walk w = { name, keep, arg, f };

	*why = NULL;
	*f = (struct cargoidx_filtered){ 0 };
	if (len > CARGOIDX_FILE_MAX) {
		*why = "the index file is too large";
		return -1;
	}
	/* at most one '\n' more than the body's bytes */
	f->out = malloc(len + 2);
	if (!f->out || each_line(body, len, filter_one, &w, why) < 0) {
		free(f->out);
		*f = (struct cargoidx_filtered){ 0 };
		if (!*why)
			*why = "out of memory";
		return -1;
	}
	f->out[f->len] = '\0';
	return 0;
}

struct find_walk {
	const char *name, *vers;
	struct cargoidx_line *out;
};

static int find_one(void *arg, const char *p, size_t n)
{
	struct find_walk *w = arg;
	const char *why;

	/* a cheap look for the version first: most lines are others' */
	if (!memmem(p, n, w->vers, strlen(w->vers)) || cargoidx_line(p, n, w->out, &why) < 0 ||
	    !same_crate(w->out, w->name) || strcmp(w->out->vers, w->vers) != 0)
		return 0;
	return 1;
}

int cargoidx_find(const char *body, size_t len, const char *name, const char *vers, struct cargoidx_line *out,
		  const char **why)
{
	struct find_walk w = { name, vers, out };

	*why = NULL;
	if (!cargoidx_version(vers, strlen(vers)))
		return 0;
	return each_line(body, len, find_one, &w, why);
}

int cargoidx_config_dl(const char *body, size_t len, char *dl, size_t size, const char **why)
{
	struct json_tokener *tok = json_tokener_new_ex(8);
	struct json_object *o = NULL;
	const char *v;

	*why = "not a JSON object";
	if (tok && len <= 65536 && !memchr(body, '\0', len))
		o = json_tokener_parse_ex(tok, body, (int)len);
	json_tokener_free(tok);
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return -1;
	}
	v = str_of(o, "dl");
	*why = "no dl";
	if (v && strlen(v) < size && strlen(v) <= CARGOIDX_DL_MAX &&
	    (strncmp(v, "https://", 8) == 0 || strncmp(v, "http://", 7) == 0)) {
		*why = NULL;
		for (const char *c = v; *c; c++)
			if ((unsigned char)*c <= ' ' || *c == 0x7f || *c == '"' || *c == '\\')
				*why = "dl has a character no URL has";
		if (!*why)
			snprintf(dl, size, "%s", v);
	}
	json_object_put(o);
	return *why ? -1 : 0;
}

/* Cargo's {prefix} of a name (the name as written): as cargoidx_path's
 * directories. */
static void prefix_of(const char *name, bool lower, char *out, size_t size)
{
	char path[CARGOIDX_PATH_MAX + 1], *slash;

	cargoidx_path(name, path, sizeof(path));
	if ((slash = strrchr(path, '/')))
		*slash = '\0';
	for (char *c = path; lower && *c; c++)
		*c = (char)tolower((unsigned char)*c);
	snprintf(out, size, "%s", path);
}

int cargoidx_dl_url(const char *dl, const struct cargoidx_line *l, char *out, size_t size)
{
	static const char *const marks[] = { "{crate}", "{version}", "{prefix}", "{lowerprefix}", "{sha256-checksum}" };
	char prefix[CARGOIDX_PATH_MAX + 1], lprefix[CARGOIDX_PATH_MAX + 1];
	const char *vals[] = { l->name, l->vers, prefix, lprefix, l->cksum };
	size_t o = 0;
	bool any = false;

	prefix_of(l->name, false, prefix, sizeof(prefix));
	prefix_of(l->name, true, lprefix, sizeof(lprefix));
	for (const char *p = dl; *p;) {
		size_t i = 0;
		while (i < 5 && strncmp(p, marks[i], strlen(marks[i])) != 0)
			i++;
		const char *add = i < 5 ? vals[i] : p;
		size_t n = i < 5 ? strlen(vals[i]) : 1;
		if (o + n >= size)
			return -1;
		memcpy(out + o, add, n);
		o += n;
		p += i < 5 ? strlen(marks[i]) : 1;
		any |= i < 5;
	}
	out[o] = '\0';
	if (!any && snprintf(out + o, size - o, "%s%s/%s/download", o && out[o - 1] == '/' ? "" : "/", l->name,
			     l->vers) >= (int)(size - o))
		return -1;
	return 0;
}
