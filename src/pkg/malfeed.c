/* malfeed.c - OSV malicious-package records (malfeed.h): parsed with
 * json-c, one entry per affected package, sorted by ecosystem and name
 * and searched by bisection. A withdrawn record names nothing. Ranges are
 * evaluated where the versions are semver (npm, Go, Cargo, and any SEMVER
 * range); any other range names every version of its package. */
#define _GNU_SOURCE
#include "pkg/malfeed.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/pkgrule.h"
#include "base/util.h"
#include "pkg/semver.h"

enum { EV_INTRODUCED, EV_FIXED, EV_LAST };

struct mal_event {
	int kind;
	char *version;
};

struct mal_range {
	bool comparable;              /* semver: evaluated; else every version */
	struct mal_event *ev;
	size_t nev;
};

struct mal_entry {
	char eco[8];
	char *name;                   /* as the ecosystem compares it */
	const char *id;               /* the record's (owned by the feed's ids) */
	const char *origin;           /* the file (owned by the feed's origins) */
	bool all;                     /* every version */
	char **versions;
	size_t nversions;
	struct mal_range *ranges;
	size_t nranges;
};

struct malfeed {
	struct mal_entry *v;
	size_t n, cap;
	char **strs;                  /* ids and origins, freed with the feed */
	size_t nstrs;
	unsigned long long bytes;     /* read so far, against MALFEED_MAX_BYTES */
};

static const char *keep_str(struct malfeed *f, const char *s)
{
	f->strs = xrealloc(f->strs, (f->nstrs + 1) * sizeof(*f->strs));
	return f->strs[f->nstrs++] = xstrdup(s);
}

/* OSV's ecosystem names (ossf/osv-schema, ecosystems.txt) to sbxrun's. */
static const char *eco_of(const char *osv)
{
	static const struct { const char *osv, *eco; } map[] = {
		{ "npm", "npm" }, { "PyPI", "pypi" }, { "Debian", "deb" },
		{ "Go", "go" },   { "crates.io", "cargo" }, { "Maven", "maven" },
	};
	size_t n = strcspn(osv, ":");  /* "Debian:12" */

	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (strlen(map[i].osv) == n && strncmp(osv, map[i].osv, n) == 0)
			return map[i].eco;
	return NULL;
}

static bool semver_eco(const char *eco)
{
	return strcmp(eco, "npm") == 0 || strcmp(eco, "go") == 0 || strcmp(eco, "cargo") == 0;
}

static const char *str_of(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v) : NULL;
}

static json_object *array_of(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_array) ? v : NULL;
}

static void range_read(json_object *r, const char *eco, struct mal_range *out, bool *all)
{
	const char *type = str_of(r, "type");
	json_object *events = array_of(r, "events");
	size_t n = events ? json_object_array_length(events) : 0;

	*out = (struct mal_range){ 0 };
	out->comparable = type && (strcmp(type, "SEMVER") == 0 || (strcmp(type, "ECOSYSTEM") == 0 && semver_eco(eco)));
	if (!out->comparable || n == 0) {
		*all = true;  /* an order sbxrun does not know: every version */
		return;
	}
	out->ev = xcalloc(n, sizeof(*out->ev));
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(events, i);
		const char *in = str_of(e, "introduced"), *fx = str_of(e, "fixed"), *la = str_of(e, "last_affected");
		const char *v = in ? in : fx ? fx : la;
		if (!v)
			continue;  /* "limit" and the like: bound nothing further */
		out->ev[out->nev++] = (struct mal_event){ in ? EV_INTRODUCED : fx ? EV_FIXED : EV_LAST, xstrdup(v) };
	}
	/* no event sbxrun knows ("limit" alone) bounds nothing: every version */
	if (out->nev == 0 || (out->nev == 1 && out->ev[0].kind == EV_INTRODUCED && strcmp(out->ev[0].version, "0") == 0))
		*all = true;
}

static int add_affected(struct malfeed *f, json_object *a, const char *id, const char *origin,
			struct sbx_err *err)
{
	json_object *pkg, *list;
	const char *osv_eco, *name, *eco;

	if (!json_object_object_get_ex(a, "package", &pkg) || !(osv_eco = str_of(pkg, "ecosystem")) ||
	    !(name = str_of(pkg, "name")) || !name[0])
		return err_set(err, 0, "'%s': record %s: an affected entry without package.ecosystem and .name",
			       origin, id);
	if (!(eco = eco_of(osv_eco)))
		return 0;  /* an ecosystem the gateway does not serve */
	if (f->n >= MALFEED_MAX_RECORDS)
		return err_set(err, 0, "'%s': more than %u affected packages in the feeds", origin,
			       MALFEED_MAX_RECORDS);
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 256;
		f->v = xrealloc(f->v, f->cap * sizeof(*f->v));
	}
	struct mal_entry *e = &f->v[f->n++];
	char norm[512];
	*e = (struct mal_entry){ .id = id, .origin = origin };
	snprintf(e->eco, sizeof(e->eco), "%s", eco);
	pkgrule_normalize(eco, name, norm, sizeof(norm));
	e->name = xstrdup(norm);
	if ((list = array_of(a, "versions"))) {
		size_t n = json_object_array_length(list);
		e->versions = xcalloc(n ? n : 1, sizeof(char *));
		for (size_t i = 0; i < n; i++) {
			const char *v = json_object_get_string(json_object_array_get_idx(list, i));
			if (v && json_object_is_type(json_object_array_get_idx(list, i), json_type_string))
				e->versions[e->nversions++] = xstrdup(v);
		}
	}
	if ((list = array_of(a, "ranges"))) {
		size_t n = json_object_array_length(list);
		e->ranges = xcalloc(n ? n : 1, sizeof(*e->ranges));
		for (size_t i = 0; i < n; i++)
			range_read(json_object_array_get_idx(list, i), e->eco, &e->ranges[e->nranges++], &e->all);
	}
	/* a record that bounds nothing names the whole package */
	if (!e->nversions && !e->nranges)
		e->all = true;
	return 0;
}

static int add_record(struct malfeed *f, json_object *r, const char *origin, struct sbx_err *err)
{
	const char *id = str_of(r, "id");
	json_object *affected = array_of(r, "affected");

	if (!json_object_is_type(r, json_type_object) || !id || !affected)
		return err_set(err, 0, "'%s': not an OSV record (an object with \"id\" and \"affected\")", origin);
	if (str_of(r, "withdrawn"))
		return 0;  /* the feed took it back */
	id = keep_str(f, id);
	for (size_t i = 0; i < json_object_array_length(affected); i++)
		if (add_affected(f, json_object_array_get_idx(affected, i), id, origin, err) < 0)
			return -1;
	return 0;
}

int malfeed_add_json(struct malfeed *f, const char *json, size_t len, const char *origin, struct sbx_err *err)
{
	json_tokener *tok = json_tokener_new_ex(32);
	json_object *o = tok && len <= MALFEED_MAX_FILE ? json_tokener_parse_ex(tok, json, (int)len) : NULL;
	int rc = 0;

	if (!o || json_tokener_get_error(tok) != json_tokener_success || tok->char_offset != (int)len) {
		if (tok)
			json_tokener_free(tok);
		json_object_put(o);
		return err_set(err, 0, "'%s': not JSON, or more than one document", origin);
	}
	json_tokener_free(tok);
	origin = keep_str(f, origin);
	if (json_object_is_type(o, json_type_array)) {
		for (size_t i = 0; rc == 0 && i < json_object_array_length(o); i++)
			rc = add_record(f, json_object_array_get_idx(o, i), origin, err);
	} else {
		rc = add_record(f, o, origin, err);
	}
	json_object_put(o);
	return rc;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct mal_entry *x = a, *y = b;
	int c = strcmp(x->eco, y->eco);
	return c ? c : strcmp(x->name, y->name);
}

struct malfeed *malfeed_new(void)
{
	return xcalloc(1, sizeof(struct malfeed));
}

void malfeed_finish(struct malfeed *f)
{
	if (f->n)
		qsort(f->v, f->n, sizeof(*f->v), entry_cmp);
}

/* --- reading the feeds from disk --- */

static int load_at(struct malfeed *f, int dirfd, const char *name, const char *path, int depth,
		   struct sbx_err *err);

struct walk {
	struct malfeed *f;
	const char *path;
	int depth;
	struct sbx_err *err;
};

static int walk_one(int dirfd, const char *name, void *arg)
{
	struct walk *w = arg;
	struct stat st;
	size_t n = strlen(name);

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return err_sys(w->err, "stat '%s/%s'", w->path, name);
	if (!S_ISDIR(st.st_mode) && !(S_ISREG(st.st_mode) && n > 5 && strcmp(name + n - 5, ".json") == 0))
		return 0;  /* links, README files and the like */
	_cleanup_free_ char *sub = xasprintf("%s/%s", w->path, name);
	return load_at(w->f, dirfd, name, sub, w->depth + 1, w->err) < 0 ? -1 : 0;
}

static int load_at(struct malfeed *f, int dirfd, const char *name, const char *path, int depth,
		   struct sbx_err *err)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;

	if (fd < 0)
		return err_sys(err, "[packages] malicious: open '%s'", path);
	if (fstat(fd, &st) < 0)
		return err_sys(err, "[packages] malicious: stat '%s'", path);
	if (S_ISDIR(st.st_mode)) {
		if (depth > MALFEED_MAX_DEPTH)
			return err_set(err, 0, "[packages] malicious: '%s' is more than %d directories deep", path,
				       MALFEED_MAX_DEPTH);
		struct walk w = { f, path, depth, err };
		return dir_each(fd, walk_one, &w, err) ? -1 : 0;
	}
	if (!S_ISREG(st.st_mode))
		return err_set(err, 0, "[packages] malicious: '%s' is neither a file nor a directory", path);
	if (st.st_size > MALFEED_MAX_FILE || f->bytes + (unsigned long long)st.st_size > MALFEED_MAX_BYTES)
		return err_set(err, 0, "[packages] malicious: '%s': the feeds pass %u MiB a file or %llu MiB "
			       "in all", path, MALFEED_MAX_FILE >> 20, MALFEED_MAX_BYTES >> 20);
	_cleanup_free_ char *buf = xmalloc((size_t)st.st_size + 1);
	size_t len = 0;
	while (len < (size_t)st.st_size) {  /* a file that shrinks ends early: parsed as it is */
		ssize_t r = read(fd, buf + len, (size_t)st.st_size - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return err_sys(err, "[packages] malicious: read '%s'", path);
		if (r == 0)
			break;
		len += (size_t)r;
	}
	f->bytes += len;
	if (malfeed_add_json(f, buf, len, path, err) < 0)
		return err_wrap(err, "[packages] malicious");
	return 0;
}

int malfeed_load(const struct sbx_strlist *paths, struct malfeed **out, struct sbx_err *err)
{
	struct malfeed *f = malfeed_new();

	for (size_t i = 0; paths && i < paths->n; i++) {
		if (malfeed_is_url(paths->v[i]))
			continue;  /* the gateway's to fetch */
		if (paths->v[i][0] != '/') {
			malfeed_free(f);
			return err_set(err, 0, "[packages] malicious = %s: not an absolute path", paths->v[i]);
		}
		if (load_at(f, AT_FDCWD, paths->v[i], paths->v[i], 0, err) < 0) {
			malfeed_free(f);
			return -1;
		}
	}
	malfeed_finish(f);
	*out = f;
	return 0;
}

/* --- asking --- */

/* Go's versions carry a 'v'; semver's do not. */
static bool parse_version(const char *eco, const char *s, struct semver *v)
{
	if (strcmp(eco, "go") == 0 && *s == 'v')
		s++;
	return semver_parse(s, v);
}

/* OSV's evaluation of one range's events, in the order the feed gives
 * them: introduced opens, fixed closes at, last_affected closes after. */
static bool range_names(const char *eco, const struct mal_range *r, const char *version)
{
	struct semver v, e;
	bool in = false;

	if (!parse_version(eco, version, &v))
		return true;  /* not comparable: deny when unsure */
	for (size_t i = 0; i < r->nev; i++) {
		const char *ev = r->ev[i].version;
		if (r->ev[i].kind == EV_INTRODUCED && strcmp(ev, "0") == 0) {
			in = true;
			continue;
		}
		if (!parse_version(eco, ev, &e))
			return true;
		int c = semver_cmp(&v, &e);
		if (r->ev[i].kind == EV_INTRODUCED && c >= 0)
			in = true;
		else if ((r->ev[i].kind == EV_FIXED && c >= 0) || (r->ev[i].kind == EV_LAST && c > 0))
			in = false;
	}
	return in;
}

static bool entry_names(const struct mal_entry *e, const char *version)
{
	if (e->all)
		return true;
	if (!version)
		return false;
	for (size_t i = 0; i < e->nversions; i++)
		if (strcmp(e->versions[i], version) == 0)
			return true;
	for (size_t i = 0; i < e->nranges; i++)
		if (range_names(e->eco, &e->ranges[i], version))
			return true;
	return false;
}

static void entry_free(struct mal_entry *e)
{
	free(e->name);
	for (size_t k = 0; k < e->nversions; k++)
		free(e->versions[k]);
	free(e->versions);
	for (size_t k = 0; k < e->nranges; k++) {
		for (size_t j = 0; j < e->ranges[k].nev; j++)
			free(e->ranges[k].ev[j].version);
		free(e->ranges[k].ev);
	}
	free(e->ranges);
}

static int ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(char *const *)a, y = (uintptr_t)*(char *const *)b;
	return x < y ? -1 : x > y;
}

int malfeed_replace(struct malfeed *dst, const char *origin, size_t origin_bytes, struct malfeed *src,
		    struct sbx_err *err)
{
	size_t drop = 0, keep = 0, kept = 0;

	for (size_t i = 0; i < dst->n; i++)
		drop += strcmp(dst->v[i].origin, origin) == 0;
	origin_bytes = origin_bytes < dst->bytes ? origin_bytes : dst->bytes;
	if (dst->n - drop + src->n > MALFEED_MAX_RECORDS ||
	    dst->bytes - origin_bytes + src->bytes > MALFEED_MAX_BYTES)
		return err_set(err, 0, "more than %u affected packages or %llu MiB in the feeds together",
			       MALFEED_MAX_RECORDS, MALFEED_MAX_BYTES >> 20);
	for (size_t i = 0; i < dst->n; i++) {
		if (strcmp(dst->v[i].origin, origin) == 0)
			entry_free(&dst->v[i]);
		else
			dst->v[keep++] = dst->v[i];
	}
	dst->n = keep;
	/* the ids and origins no record names any more, freed (those of a
	 * feed that named nothing too: asked again for weeks, nothing grows) */
	char **used = xcalloc(2 * keep + 1, sizeof(*used));
	for (size_t i = 0; i < keep; i++) {
		used[2 * i] = (char *)dst->v[i].id;
		used[2 * i + 1] = (char *)dst->v[i].origin;
	}
	qsort(used, 2 * keep, sizeof(*used), ptr_cmp);
	for (size_t i = 0; i < dst->nstrs; i++) {
		if (bsearch(&dst->strs[i], used, 2 * keep, sizeof(*used), ptr_cmp))
			dst->strs[kept++] = dst->strs[i];
		else
			free(dst->strs[i]);
	}
	dst->nstrs = kept;
	free(used);
	dst->bytes -= origin_bytes;
	return malfeed_merge(dst, src, err);
}

int malfeed_merge(struct malfeed *dst, struct malfeed *src, struct sbx_err *err)
{
	if (dst->n + src->n > MALFEED_MAX_RECORDS || dst->bytes + src->bytes > MALFEED_MAX_BYTES)
		return err_set(err, 0, "more than %u affected packages or %llu MiB in the feeds together",
			       MALFEED_MAX_RECORDS, MALFEED_MAX_BYTES >> 20);
	if (src->n) {
		dst->v = xrealloc(dst->v, (dst->n + src->n) * sizeof(*dst->v));
		memcpy(dst->v + dst->n, src->v, src->n * sizeof(*src->v));
		dst->n += src->n;
		dst->cap = dst->n;
	}
	if (src->nstrs) {
		dst->strs = xrealloc(dst->strs, (dst->nstrs + src->nstrs) * sizeof(*dst->strs));
		memcpy(dst->strs + dst->nstrs, src->strs, src->nstrs * sizeof(*src->strs));
		dst->nstrs += src->nstrs;
	}
	dst->bytes += src->bytes;
	free(src->v);
	free(src->strs);
	free(src);
	malfeed_finish(dst);
	return 0;
}

void malfeed_add_bytes(struct malfeed *f, size_t len)
{
	f->bytes += len;
}

const char *malfeed_match(const struct malfeed *f, const char *eco, const char *name, const char *version,
			  const char **origin)
{
	struct mal_entry key = { 0 };
	char norm[512];

	if (!f || !f->n)
		return NULL;
	snprintf(key.eco, sizeof(key.eco), "%s", eco);
	pkgrule_normalize(eco, name, norm, sizeof(norm));
	key.name = norm;
	size_t lo = 0, hi = f->n;
	while (lo < hi) {  /* the first entry not before key */
		size_t mid = lo + (hi - lo) / 2;
		if (entry_cmp(&f->v[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < f->n && entry_cmp(&f->v[i], &key) == 0; i++)
		if (entry_names(&f->v[i], version)) {
			if (origin)
				*origin = f->v[i].origin;
			return f->v[i].id;
		}
	return NULL;
}

size_t malfeed_count(const struct malfeed *f)
{
	return f ? f->n : 0;
}

void malfeed_free(struct malfeed *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++)
		entry_free(&f->v[i]);
	free(f->v);
	for (size_t i = 0; i < f->nstrs; i++)
		free(f->strs[i]);
	free(f->strs);
	free(f);
}
