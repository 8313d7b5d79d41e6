/* fuzz_npmdoc.c - libFuzzer harness for the package gateway's reader of npm
 * packuments (pkg/npm_doc.c), full or abbreviated (the abbreviated form
 * is the same document with fewer members, so one reader serves both). The
 * first byte chooses: bit 0 an age rule (min_age 7 days, as a profile's
 * [packages] min_age), bit 1 a scoped name; the rest is the document from
 * upstream. Whatever it holds, what is served must be a packument whose
 * every tarball link points at the gateway under a plain file name the
 * document itself gave, whose every dist-tag names a version it serves,
 * and, under the age rule, none of whose versions is younger than the rule
 * or undated; serving it again changes nothing. The document's first line
 * is also tried as a package name from a request path. */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/npm_doc.h"
#include "pkg/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BASE "http://g/npm/"
#define NOW 1800000000LL

static json_object *obj(json_object *o, const char *key, json_type t)
{
	json_object *v;
	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, t) ? v : NULL;
}

static void check_name(const char *s, size_t n)
{
	char out[NPM_NAME_MAX + 1], again[NPM_NAME_MAX + 1];

	if (npm_doc_name(s, n, out, sizeof(out)) < 0)
		return;
	/* canonical: at most the scope's '/', no escapes left, stable */
	const char *slash = strchr(out, '/');
	if (out[0] == '.' || (slash && slash[1] == '.') || strchr(out, '%') || strchr(out, '\\') ||
	    (slash && out[0] != '@') || (slash && strchr(slash + 1, '/')) ||
	    npm_doc_name(out, strlen(out), again, sizeof(again)) < 0 || strcmp(out, again) != 0)
		abort();
}

/* What the gateway serves: checked against the document it came from.
 * Returns how many versions it serves. */
static size_t check_served(const char *in, size_t in_len, const char *out, size_t out_len, const char *name,
			   const struct gw_rules *rules)
{
	struct sbx_err err;
	json_object *o = json_tokener_parse(out), *versions = obj(o, "versions", json_type_object);
	json_object *tags = obj(o, "dist-tags", json_type_object), *time = obj(o, "time", json_type_object);
	char prefix[300], why[256];
	size_t n = 0;

	snprintf(prefix, sizeof(prefix), "%s%s/-/", BASE, name);
	if (strlen(out) != out_len || !versions)
		abort();
	json_object_object_foreach(versions, ver, v) {
		json_object *t = obj(obj(v, "dist", json_type_object), "tarball", json_type_string);
		const char *url = t ? json_object_get_string(t) : NULL, *file;
		struct npm_dist d;
		if (!url || strncmp(url, prefix, strlen(prefix)) != 0)
			abort();
		file = url + strlen(prefix);
		if (!file[0] || file[0] == '.' || strpbrk(file, "/?#%\\"))
			abort();
		/* the gateway finds it in what it serves, and upstream gave it */
		if (npm_doc_find(out, out_len, file, &d, &err) != 1 || strcmp(d.tarball, url) != 0)
			abort();
		npm_dist_free(&d);
		if (npm_doc_find(in, in_len, file, &d, &err) != 1)
			abort();
		npm_dist_free(&d);
		if (rules) {
			json_object *when = obj(time, ver, json_type_string);
			if (rules_age(rules, "npm", "x", ver, rules_time(when ? json_object_get_string(when) : NULL), NOW,
				      why, sizeof(why)) < 0)
				abort();
		}
		n++;
	}
	if (tags) {
		json_object_object_foreach(tags, tag, val) {
			(void)tag;
			if (!json_object_is_type(val, json_type_string) ||
			    !obj(versions, json_object_get_string(val), json_type_object))
				abort();
		}
	}
	json_object_put(o);
	return n;
}

static void serve(const char *doc, size_t len, const char *name, int aged)
{
	struct gw_rules rules = { .min_age_s = 7 * 86400 };
	struct npm_serve s = { .rules = &rules, .now_s = NOW };
	struct sbx_err err;
	char *plain, *young, *again;
	size_t plain_len, young_len, again_len;

	if (npm_doc_rewrite(doc, len, name, BASE, &plain, &plain_len, &err) < 0) {
		if (npm_doc_serve(doc, len, name, BASE, &s, &young, &young_len, &err) == 0)
			abort();  /* one reader: not a packument either way */
		return;
	}
	size_t n_plain = check_served(doc, len, plain, plain_len, name, NULL);
	if (npm_doc_rewrite(plain, plain_len, name, BASE, &again, &again_len, &err) < 0 || again_len != plain_len ||
	    memcmp(again, plain, plain_len) != 0)
		abort();
	free(again);
	if (aged) {
		if (npm_doc_serve(doc, len, name, BASE, &s, &young, &young_len, &err) < 0)
			abort();
		size_t n_young = check_served(doc, len, young, young_len, name, &rules);
		if (n_young > n_plain || n_young + s.hidden < n_plain || strlen(s.told) >= sizeof(s.told) ||
		    (s.hidden && !s.told[0]))
			abort();
		free(young);
	}
	free(plain);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned flags = data[0];
	size_t len = size - 1;
	char *doc = malloc(len + 1);

	memcpy(doc, data + 1, len);
	doc[len] = '\0';
	serve(doc, len, flags & 2 ? "@s/p" : "p", flags & 1);
	check_name(doc, strcspn(doc, "\n"));
	free(doc);
	return 0;
}
