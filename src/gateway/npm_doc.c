/* npm_doc.c - see npm_doc.h. json-c parses; a document is untrusted
 * input from upstream, so every member is checked for its type. */
#define _GNU_SOURCE
#include "gateway/npm_doc.h"

#include <json-c/json.h>
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

int npm_doc_rewrite(const char *doc, size_t len, const char *name, const char *base, char **out,
		    size_t *out_len, struct sbx_err *err)
{
	json_object *o = parse(doc, len, err), *versions;
	char **drop = NULL;
	size_t ndrop = 0;

	if (!o)
		return -1;
	versions = member(o, "versions", json_type_object);
	json_object_object_foreach(versions, ver, v) {
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
	for (size_t i = 0; i < ndrop; i++) {
		json_object_object_del(versions, drop[i]);
		free(drop[i]);
	}
	free(drop);
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	*out_len = strlen(s);
	*out = xstrdup(s);
	json_object_put(o);
	return 0;
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
