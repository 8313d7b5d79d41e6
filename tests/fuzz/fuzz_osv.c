/* fuzz_osv.c - libFuzzer harness for malicious-package feeds
 * (pkg/malfeed.c): the input is one feed file as a user may download
 * it (an OSV record or an array of them), then every name and version the
 * records gave is asked back, with a few made up, in every ecosystem the
 * gateway serves (npm, PyPI, Debian, Go, crates.io, Maven). Properties: a
 * feed that loads names at least what its explicit versions list (a
 * record's own version always matches it) and what a range opened by one
 * "introduced" names, asking never crashes, and a second load of the same
 * bytes gives the same count. The same bytes, fetched from a URL and
 * merged, then fetched again (malfeed_replace), keep the count; replaced
 * by nothing, the file's own records are all that is left, and still name
 * what they did. */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "pkg/malfeed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *eco_of(const char *osv)
{
	if (!osv)
		return NULL;
	if (strcmp(osv, "npm") == 0)
		return "npm";
	if (strcmp(osv, "PyPI") == 0)
		return "pypi";
	if (strncmp(osv, "Debian", 6) == 0 && (osv[6] == '\0' || osv[6] == ':'))
		return "deb";
	if (strcmp(osv, "Go") == 0)
		return "go";
	if (strcmp(osv, "crates.io") == 0)
		return "cargo";
	if (strcmp(osv, "Maven") == 0)
		return "maven";
	return NULL;
}

static const char *str_in(json_object *o, const char *key)
{
	json_object *v;
	return json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) &&
		       json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* A range whose only event the reader knows is "introduced X" names X
 * (compared, or every version when sbxrun cannot order the ecosystem's). */
static void check_ranges(const struct malfeed *f, const char *e, const char *n, json_object *a)
{
	json_object *ranges, *events;

	if (!json_object_object_get_ex(a, "ranges", &ranges) || !json_object_is_type(ranges, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(ranges); i++) {
		json_object *r = json_object_array_get_idx(ranges, i);
		const char *only = NULL;
		size_t known = 0;
		if (!str_in(r, "type") || !json_object_object_get_ex(r, "events", &events) ||
		    !json_object_is_type(events, json_type_array))
			continue;
		for (size_t k = 0; k < json_object_array_length(events); k++) {
			json_object *ev = json_object_array_get_idx(events, k);
			const char *in = str_in(ev, "introduced");
			if (in || str_in(ev, "fixed") || str_in(ev, "last_affected"))
				known++, only = in;
		}
		if (known <= 1 && (known == 0 || only) && !malfeed_match(f, e, n, only ? only : "9.9.9", NULL))
			abort();
	}
}

/* Each explicit version of each affected package must be named. */
static void check_versions(const struct malfeed *f, json_object *rec);

static void check_all(const struct malfeed *f, const uint8_t *data, size_t size)
{
	json_tokener *tok = json_tokener_new_ex(32);
	json_object *o = tok ? json_tokener_parse_ex(tok, (const char *)data, (int)size) : NULL;

	if (o && json_object_is_type(o, json_type_array))
		for (size_t i = 0; i < json_object_array_length(o); i++)
			check_versions(f, json_object_array_get_idx(o, i));
	else if (o)
		check_versions(f, o);
	json_object_put(o);
	if (tok)
		json_tokener_free(tok);
}

/* The feed fetched from a URL: its records merged, then replaced. */
static struct malfeed *from_url(const uint8_t *data, size_t size)
{
	struct malfeed *u = malfeed_new();
	struct sbx_err err;

	malfeed_add_bytes(u, size);
	if (malfeed_add_json(u, (const char *)data, size, "https://feed.example/osv.json", &err) < 0)
		abort();
	malfeed_finish(u);
	return u;
}

static void check_replace(struct malfeed *f, const uint8_t *data, size_t size)
{
	struct sbx_err err;
	size_t n = malfeed_count(f);
	struct malfeed *none = malfeed_new();

	if (malfeed_merge(f, from_url(data, size), &err) < 0 || malfeed_count(f) != 2 * n)
		abort();
	if (malfeed_replace(f, "https://feed.example/osv.json", size, from_url(data, size), &err) < 0 ||
	    malfeed_count(f) != 2 * n)
		abort();
	malfeed_finish(none);
	if (malfeed_replace(f, "https://feed.example/osv.json", size, none, &err) < 0 || malfeed_count(f) != n)
		abort();
	check_all(f, data, size);
}

static void check_versions(const struct malfeed *f, json_object *rec)
{
	json_object *aff, *w;

	if (!json_object_is_type(rec, json_type_object) || json_object_object_get_ex(rec, "withdrawn", &w) ||
	    !json_object_object_get_ex(rec, "affected", &aff) || !json_object_is_type(aff, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(aff); i++) {
		json_object *a = json_object_array_get_idx(aff, i), *pkg, *eco, *name, *vers;
		if (!json_object_object_get_ex(a, "package", &pkg) || !json_object_object_get_ex(pkg, "ecosystem", &eco) ||
		    !json_object_object_get_ex(pkg, "name", &name) || !json_object_is_type(name, json_type_string))
			continue;
		const char *e = eco_of(json_object_get_string(eco)), *n = json_object_get_string(name);
		if (e)
			check_ranges(f, e, n, a);
		if (!e || !json_object_object_get_ex(a, "versions", &vers) || !json_object_is_type(vers, json_type_array))
			continue;
		for (size_t k = 0; k < json_object_array_length(vers); k++) {
			json_object *v = json_object_array_get_idx(vers, k);
			if (json_object_is_type(v, json_type_string) && !malfeed_match(f, e, n, json_object_get_string(v), NULL))
				abort();
		}
		(void)malfeed_match(f, e, n, NULL, NULL);
		(void)malfeed_match(f, e, n, "0.0.0", NULL);
		(void)malfeed_match(f, e, n, "v1.2.3-rc.1+x", NULL);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct malfeed *f = malfeed_new(), *g = malfeed_new();
	struct sbx_err err;
	int r = malfeed_add_json(f, (const char *)data, size, "fuzz.json", &err);

	malfeed_finish(f);
	if (r == 0) {
		if (malfeed_add_json(g, (const char *)data, size, "fuzz.json", &err) < 0)
			abort();
		malfeed_finish(g);
		if (malfeed_count(f) != malfeed_count(g))
			abort();
		check_all(f, data, size);
		check_replace(f, data, size);
	}
	malfeed_free(f);
	malfeed_free(g);
	return 0;
}
