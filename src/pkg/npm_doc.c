/* npm_doc.c - see npm_doc.h. json-c parses; a document is untrusted
 * input from upstream, so every member is checked for its type. */
#define _GNU_SOURCE
#include "pkg/npm_doc.h"
#include "pkg/malfeed.h"
#include "pkg/semver.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"

static int name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '-' || ch == '.' || ch == '_' || ch == '~';
}

/* One part of a name (the scope without '@', or the bare name). */
static int part_ok(const char *s, size_t n)
{
	if (n == 0 || s[0] == '.' || s[0] == '_')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!name_char(s[i]))
			return 0;
	return 1;
}

int npm_doc_name(const char *raw, size_t len, char *out, size_t size)
{
	char buf[NPM_NAME_MAX + 8];
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		char ch = raw[i];
		if (ch == '%' && i + 2 < len && raw[i + 1] == '2' && (raw[i + 2] == 'f' || raw[i + 2] == 'F')) {
			ch = '/';
			i += 2;
		} else if (ch == '%' && i + 2 < len && raw[i + 1] == '4' && raw[i + 2] == '0') {
			ch = '@';
			i += 2;
		}
		if (n >= NPM_NAME_MAX)
			return -1;
		buf[n++] = ch;
	}
	buf[n] = '\0';
	const char *slash = memchr(buf, '/', n);
	if (buf[0] == '@') {
		if (!slash || !part_ok(buf + 1, (size_t)(slash - buf - 1)) ||
		    !part_ok(slash + 1, n - (size_t)(slash - buf) - 1))
			return -1;
	} else if (slash || !part_ok(buf, n)) {
		return -1;
	}
	if (n + 1 > size)
		return -1;
	memcpy(out, buf, n + 1);
	return 0;
}

static json_object *member(json_object *o, const char *key, json_type type)
{
	json_object *v;
	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, type) ? v : NULL;
}

static const char *str_member(json_object *o, const char *key)
{
	json_object *v = member(o, key, json_type_string);
	return v ? json_object_get_string(v) : NULL;
}

/* The last path segment of a URL, if it is a plain file name. */
static const char *url_file(const char *url, size_t *len)
{
	const char *end = url + strcspn(url, "?#");
	const char *s = end;

	while (s > url && s[-1] != '/')
		s--;
	*len = (size_t)(end - s);
	if (*len == 0 || *len > 255 || s[0] == '.')
		return NULL;
	for (const char *p = s; p < end; p++)
		if (!name_char(*p))
			return NULL;
	return s;
}

static json_object *parse(const char *doc, size_t len, struct sbx_err *err)
{
	json_tokener *tok = json_tokener_new_ex(64);
	json_object *o = tok ? json_tokener_parse_ex(tok, doc, (int)len) : NULL;

	if (tok && o && json_tokener_get_parse_end(tok) != len) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	if (!o || !json_object_is_type(o, json_type_object) || !member(o, "versions", json_type_object)) {
		json_object_put(o);
		err_set(err, 0, "not an npm package document");
		return NULL;
	}
	return o;
}

/* --- versions (semver.c), newest first --- */

static int version_order(const void *x, const void *y)  /* newest first; odd names last */
{
	const char *a = *(const char *const *)x, *b = *(const char *const *)y;
	struct semver va, vb;
	bool oka = semver_parse(a, &va), okb = semver_parse(b, &vb);

	if (oka && okb)
		return -semver_cmp(&va, &vb);
	return oka != okb ? (oka ? -1 : 1) : strcmp(a, b);
}

/* --- serving --- */

static void drop_versions(json_object *o, char **drop, size_t n)
{
	json_object *versions = member(o, "versions", json_type_object), *time = member(o, "time", json_type_object);

	for (size_t i = 0; i < n; i++) {
		json_object_object_del(versions, drop[i]);
		if (time)
			json_object_object_del(time, drop[i]);
		free(drop[i]);
	}
	free(drop);
}

/* Every version's tarball link points here; one with no plain file name goes. */
static void rewrite_links(json_object *o, const char *name, const char *base)
{
	char **drop = NULL;
	size_t ndrop = 0;

	json_object_object_foreach(member(o, "versions", json_type_object), ver, v) {
		json_object *dist = member(v, "dist", json_type_object);
		const char *url = str_member(dist, "tarball"), *file = NULL;
		size_t flen = 0;
		if (url)
			file = url_file(url, &flen);
		if (!file) {
			drop = xrealloc(drop, (ndrop + 1) * sizeof(*drop));
			drop[ndrop++] = xstrdup(ver);
			continue;
		}
		_cleanup_free_ char *mine = xasprintf("%s%s/-/%.*s", base, name, (int)flen, file);
		json_object_object_add(dist, "tarball", json_object_new_string(mine));
	}
	drop_versions(o, drop, ndrop);
}

/* min_age, not_after, a feed: the versions they refuse go; s->told names
 * the newest few with their ages (or the feed's record). */
static void hide_versions(json_object *o, const char *name, struct npm_serve *s)
{
	json_object *time = member(o, "time", json_type_object);
	char **drop = NULL, why[256], age[64];
	size_t n = 0;

	json_object_object_foreach(member(o, "versions", json_type_object), ver, v) {
		(void)v;
		if (rules_age(s->rules, "npm", name, ver, rules_time(str_member(time, ver)), s->now_s, why,
			      sizeof(why)) == 0 &&
		    rules_version(s->rules, "npm", name, ver, why, sizeof(why)) == 0)
			continue;
		drop = xrealloc(drop, (n + 1) * sizeof(*drop));
		drop[n++] = xstrdup(ver);
	}
	if (n)  /* qsort takes no NULL, even of nothing */
		qsort(drop, n, sizeof(*drop), version_order);
	s->hidden = n;
	s->told[0] = '\0';
	for (size_t i = 0; i < n && i < 3; i++) {
		int64_t t = rules_time(str_member(time, drop[i]));
		const char *mal = malfeed_match(s->rules->feed, "npm", name, drop[i], NULL);
		if (mal) {
			snprintf(s->told + strlen(s->told), sizeof(s->told) - strlen(s->told), "%s%.64s (%s)",
				 i ? ", " : "", drop[i], mal);
			continue;
		}
		if (t > 0)
			rules_say_age(s->now_s > t ? (uint64_t)(s->now_s - t) : 0, age, sizeof(age));
		snprintf(s->told + strlen(s->told), sizeof(s->told) - strlen(s->told), "%s%.64s (%s%s%s)",
			 i ? ", " : "", drop[i], t > 0 ? "published " : "date unknown", t > 0 ? age : "",
			 t > 0 ? " ago" : "");
	}
	if (n > 3)
		snprintf(s->told + strlen(s->told), sizeof(s->told) - strlen(s->told), " and %zu more", n - 3);
	drop_versions(o, drop, n);
}

/* The newest version left of the tag's kind, no newer than it had. */
static const char *tag_target(json_object *versions, const char *was)
{
	struct semver old, v, best;
	bool bounded = semver_parse(was, &old), pre = bounded && old.pre;
	const char *pick = NULL;

	json_object_object_foreach(versions, ver, val) {
		(void)val;
		if (!semver_parse(ver, &v) || (v.pre && !pre) || (bounded && semver_cmp(&v, &old) > 0))
			continue;
		if (!pick || semver_cmp(&v, &best) > 0) {
			pick = ver;
			best = v;
		}
	}
	return pick;
}

static void fix_tags(json_object *o)
{
	json_object *tags = member(o, "dist-tags", json_type_object), *versions = member(o, "versions", json_type_object);
	char **drop = NULL;
	size_t n = 0;

	if (!tags)  /* none, or not an object: json-c's foreach takes no NULL */
		return;
	json_object_object_foreach(tags, tag, val) {
		/* a tag that is no string names no version: dropped (its "" would
		 * have matched a version named "", which upstream may send) */
		const char *was = json_object_is_type(val, json_type_string) ? json_object_get_string(val) : NULL;
		if (was && member(versions, was, json_type_object))
			continue;
		const char *now = was ? tag_target(versions, was) : NULL;
		if (now) {
			json_object_object_add(tags, tag, json_object_new_string(now));
		} else {
			drop = xrealloc(drop, (n + 1) * sizeof(*drop));
			drop[n++] = xstrdup(tag);
		}
	}
	for (size_t i = 0; i < n; i++) {
		json_object_object_del(tags, drop[i]);
		free(drop[i]);
	}
	free(drop);
}

int npm_doc_serve(const char *doc, size_t len, const char *name, const char *base,
		  struct npm_serve *s, char **out, size_t *out_len, struct sbx_err *err)
{
	json_object *o = parse(doc, len, err);

	if (!o)
		return -1;
	if (s && s->rules && rules_per_version(s->rules))
		hide_versions(o, name, s);
	rewrite_links(o, name, base);
	fix_tags(o);
	const char *txt = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	*out_len = strlen(txt);
	*out = xstrdup(txt);
	json_object_put(o);
	return 0;
}

int npm_doc_rewrite(const char *doc, size_t len, const char *name, const char *base, char **out,
		    size_t *out_len, struct sbx_err *err)
{
	return npm_doc_serve(doc, len, name, base, NULL, out, out_len, err);
}

int npm_doc_find(const char *doc, size_t len, const char *file, struct npm_dist *out,
		 struct sbx_err *err)
{
	json_object *o = parse(doc, len, err);
	int found = 0;

	if (!o)
		return -1;
	memset(out, 0, sizeof(*out));
	json_object_object_foreach(member(o, "versions", json_type_object), ver, v) {
		json_object *dist = member(v, "dist", json_type_object);
		const char *url = str_member(dist, "tarball"), *f;
		size_t flen = 0;
		if (!url || !(f = url_file(url, &flen)) || flen != strlen(file) || memcmp(f, file, flen) != 0)
			continue;
		snprintf(out->version, sizeof(out->version), "%s", ver);
		out->tarball = xstrdup(url);
		out->integrity = str_member(dist, "integrity") ? xstrdup(str_member(dist, "integrity")) : NULL;
		out->shasum = str_member(dist, "shasum") ? xstrdup(str_member(dist, "shasum")) : NULL;
		out->published_s = rules_time(str_member(member(o, "time", json_type_object), ver));
		found = 1;
		break;
	}
	json_object_put(o);
	return found;
}

void npm_dist_free(struct npm_dist *d)
{
	free(steal_ptr(d->tarball));
	free(steal_ptr(d->integrity));
	free(steal_ptr(d->shasum));
}
