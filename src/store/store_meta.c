/*
 * store_meta.c - an image's meta.json: its name, digest, size and what was
 * learnt from the image at import (environment, apt hosts, the package
 * tools' sources, the sources it named but may not grant), written through
 * a temporary name and read back whole.
 */
#include "store/store.h"

#include <json.h>
#include <string.h>

#include "base/util.h"
#include "store/imgmeta.h"

#define META_MAX (1 << 20) /* a meta.json is a few KiB */

static json_object *json_strv(char **v)
{
	json_object *a = json_object_new_array();
	for (; v && *v; v++)
		json_object_array_add(a, json_object_new_string(*v));
	return a;
}

int store_meta_write(int dirfd, const struct sbx_meta *m, struct sbx_err *err)
{
	json_object *o = json_object_new_object();
	int r;

	json_object_object_add(o, "name", json_object_new_string(m->name));
	json_object_object_add(o, "digest", json_object_new_string(m->digest));
	json_object_object_add(o, "size", json_object_new_int64((int64_t)m->size));
	json_object_object_add(o, "created", json_object_new_int64(m->created));
	json_object_object_add(o, "source", json_object_new_string(m->source ? m->source : ""));
	json_object_object_add(o, "env", json_strv(m->env));
	json_object_object_add(o, "apt_hosts", json_strv(m->apt_hosts));
	json_object_object_add(o, "dropped_sources", json_strv(m->dropped));
	json_object_object_add(o, "npm_registry",
			       json_object_new_string(m->npm_registry ? m->npm_registry : ""));
	json_object_object_add(o, "pypi_index",
			       json_object_new_string(m->pypi_index ? m->pypi_index : ""));
	const char *const more[] = { "go_proxy", m->go_proxy, "go_sumdb", m->go_sumdb,
				     "cargo_index", m->cargo_index, "maven_repo", m->maven_repo };
	for (size_t i = 0; i < ARRAY_SIZE(more); i += 2)
		json_object_object_add(o, more[i], json_object_new_string(more[i + 1] ? more[i + 1] : ""));
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							  JSON_C_TO_STRING_NOSLASHESCAPE);
	_cleanup_free_ char *line = xasprintf("%s\n", text);
	r = store_write_atomic(dirfd, "meta.json", line, strlen(line), err);
	json_object_put(o);
	return r;
}

static char *json_str(json_object *o, const char *key)
{
	json_object *v;
	if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
		return xstrdup(json_object_get_string(v));
	return xstrdup("");
}

static char **json_get_strv(json_object *o, const char *key)
{
	struct sbx_list l = { 0 };
	json_object *a;

	if (json_object_object_get_ex(o, key, &a) && json_object_is_type(a, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(a); i++) {
			const char *s = json_object_get_string(json_object_array_get_idx(a, i));
			if (s)
				imgmeta_list_add(&l, s, strlen(s));
		}
	}
	return l.v ? l.v : xcalloc(1, sizeof(char *));
}

int store_meta_read(int dirfd, struct sbx_meta *m, struct sbx_err *err)
{
	_cleanup_free_ char *text = NULL;
	json_object *o, *v;

	if (read_file_beneath(dirfd, "meta.json", META_MAX, &text, NULL, err) < 0)
		return -1;
	o = json_tokener_parse(text);
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return err_set(err, 0, "'meta.json' is not a JSON object");
	}
	*m = (struct sbx_meta){ 0 };
	m->name = json_str(o, "name");
	m->digest = json_str(o, "digest");
	m->source = json_str(o, "source");
	m->npm_registry = json_str(o, "npm_registry");
	m->pypi_index = json_str(o, "pypi_index");
	struct { const char *key; char **to; } more[] = { { "go_proxy", &m->go_proxy }, { "go_sumdb", &m->go_sumdb },
		{ "cargo_index", &m->cargo_index }, { "maven_repo", &m->maven_repo } };
	for (size_t i = 0; i < ARRAY_SIZE(more); i++)
		*more[i].to = json_str(o, more[i].key);
	m->env = json_get_strv(o, "env");
	m->apt_hosts = json_get_strv(o, "apt_hosts");
	m->dropped = json_get_strv(o, "dropped_sources");
	if (json_object_object_get_ex(o, "size", &v))
		m->size = (uint64_t)json_object_get_int64(v);
	if (json_object_object_get_ex(o, "created", &v))
		m->created = json_object_get_int64(v);
	json_object_put(o);
	return 0;
}

void store_meta_free(struct sbx_meta *m)
{
	free(m->name);
	free(m->digest);
	free(m->source);
	free(m->npm_registry);
	free(m->pypi_index);
	free(m->go_proxy);
	free(m->go_sumdb);
	free(m->cargo_index);
	free(m->maven_repo);
	imgmeta_list_free(m->env);
	imgmeta_list_free(m->apt_hosts);
	imgmeta_list_free(m->dropped);
	*m = (struct sbx_meta){ 0 };
}
