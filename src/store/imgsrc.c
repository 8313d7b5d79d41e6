/* imgsrc.c - see imgsrc.h. Only what the image's own tools and files name
 * is taken; no registry is written here. */
#define _GNU_SOURCE
#include "store/imgsrc.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define URL_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:/._-~%@[]+"

static bool plain_url(const char *s, size_t n)
{
	size_t ok = 0;
	while (ok < n && s[ok] && strchr(URL_CHARS, s[ok]))
		ok++;
	return n > 8 && ok == n && (!strncmp(s, "https://", 8) || !strncmp(s, "http://", 7));
}

static const char *copy_to(char *buf, size_t size, const char *s, size_t n)
{
	if (n >= size)
		return NULL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

const char *imgsrc_goproxy(const char *v, char *buf, size_t size)
{
	for (const char *p = v; p && *p;) {
		size_t n = strcspn(p, ",|");
		if ((n == 3 && !strncmp(p, "off", 3)) || (n == 6 && !strncmp(p, "direct", 6)))
			return NULL;
		if (plain_url(p, n))
			return copy_to(buf, size, p, n);
		p += n + (p[n] ? 1 : 0);
	}
	return NULL;
}

char *imgsrc_gosumdb(const char *v, const char *key)
{
	size_t wn = v ? strcspn(v, " ") : 0, nn = v ? strcspn(v, "+ ") : 0;
	const char *url = v ? v + wn + strspn(v + wn, " ") : NULL;

	if (!wn || (wn == 3 && !strncmp(v, "off", 3)) || !nn || nn > 253 ||
	    strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789.-") < nn)
		return NULL;
	if (*url && (!plain_url(url, strlen(url))))
		return NULL;
	_cleanup_free_ char *def = *url ? NULL : xasprintf("https://%.*s", (int)nn, v);
	/* the key in GOSUMDB itself, else the one the go binary carries for NAME */
	if (wn > nn)
		return strspn(v, URL_CHARS) >= wn ? xasprintf("%.*s %s", (int)wn, v, *url ? url : def) : NULL;
	if (key && !strncmp(key, v, nn) && key[nn] == '+' && strspn(key, URL_CHARS) == strlen(key))
		return xasprintf("%s %s", key, *url ? url : def);
	return xasprintf("%.*s %s", (int)nn, v, *url ? url : def);
}

/* --- cargo's config.toml: the few keys source replacement reads --- */

#define TOML_KEYS 128

struct toml_kv { char key[256], val[1024]; };

/* One segment of a dotted key, quotes dropped: appended to out. */
static const char *toml_segment(const char *p, char *out, size_t size)
{
	size_t o = strlen(out);
	char q = (*p == '"' || *p == '\'') ? *p++ : 0;
	while (*p && (q ? *p != q : !strchr(".=] \t", *p)) && o + 1 < size)
		out[o++] = *p++;
	out[o] = '\0';
	if (q && *p == q)
		p++;
	return p + strspn(p, " \t");
}

/* "a.b.'c'" into out ("a.b.c"); returns what follows. */
static const char *toml_key(const char *p, char *out, size_t size)
{
	for (;;) {
		p = toml_segment(p + strspn(p, " \t"), out, size);
		if (*p != '.')
			return p;
		if (strlen(out) + 1 < size)
			strcat(out, ".");
		p++;
	}
}

static size_t toml_read(const char *toml, struct toml_kv *kv)
{
	char table[256] = "";
	size_t n = 0;
	_cleanup_free_ char *copy = xstrdup(toml);

	for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l && n < TOML_KEYS; l = strtok_r(NULL, "\n", &save)) {
		l += strspn(l, " \t");
		if (*l == '[') {
			table[0] = '\0';
			const char *e = toml_key(l + 1 + (l[1] == '['), table, sizeof(table));
			if (*e != ']')
				table[0] = '\0';
			continue;
		}
		if (!*l || *l == '#')
			continue;
		char key[256];
		snprintf(key, sizeof(key), "%s%s", table, table[0] ? "." : "");
		const char *p = toml_key(l, key, sizeof(key));
		if (*p != '=')
			continue;
		p += 1 + strspn(p + 1, " \t");
		char q = *p;
		const char *end = (q == '"' || q == '\'') ? strchr(p + 1, q) : NULL;
		if (!end || (size_t)(end - p - 1) >= sizeof(kv[n].val))
			continue;
		snprintf(kv[n].key, sizeof(kv[n].key), "%s", key);
		snprintf(kv[n].val, sizeof(kv[n].val), "%.*s", (int)(end - p - 1), p + 1);
		n++;
	}
	return n;
}

static const char *toml_get(const struct toml_kv *kv, size_t n, const char *a, const char *b, const char *c)
{
	char key[256];
	snprintf(key, sizeof(key), "%s.%s.%s", a, b, c);
	for (size_t i = n; i-- > 0;)  /* the last one said */
		if (!strcmp(kv[i].key, key))
			return kv[i].val;
	return NULL;
}

const char *imgsrc_cargo(const char *toml, char *buf, size_t size, const char **why)
{
	struct toml_kv *kv = xcalloc(TOML_KEYS, sizeof(*kv));
	size_t n = toml_read(toml, kv);
	const char *name = "crates-io", *url = NULL, *r = NULL;

	*why = NULL;
	/* replace-with may lead on to another replacement: a few hops */
	for (int hop = 0; hop < 8 && !url; hop++) {
		const char *next = toml_get(kv, n, "source", name, "replace-with");
		if (!next)
			break;
		name = next;
		url = toml_get(kv, n, "source", name, "registry");
		if (!url)
			url = toml_get(kv, n, "registries", name, "index");
		if (!url && (toml_get(kv, n, "source", name, "directory") ||
			     toml_get(kv, n, "source", name, "local-registry")))
			*why = "cargo's crates-io is replaced by a local directory";
	}
	if (url && strncmp(url, "sparse+", 7) != 0)
		*why = "cargo's registry is a git index (the gateway serves sparse registries)";
	else if (url && plain_url(url + 7, strlen(url + 7)))
		r = copy_to(buf, size, url + 7, strlen(url + 7));
	free(kv);
	return r;
}

/* --- Maven: settings.xml's mirrors, the super POM's central --- */

static bool named(const xmlNode *x, const char *name)
{
	return x->type == XML_ELEMENT_NODE && !strcmp((const char *)x->name, name);
}

static const xmlNode *child(const xmlNode *x, const char *name)
{
	for (const xmlNode *c = x ? x->children : NULL; c; c = c->next)
		if (named(c, name))
			return c;
	return NULL;
}

/* The trimmed text of x copied to buf, or NULL (none, or more than text). */
static const char *text_of(const xmlNode *x, char *buf, size_t size)
{
	size_t o = 0;

	for (const xmlNode *c = x ? x->children : NULL; c; c = c->next) {
		if (c->type == XML_COMMENT_NODE)
			continue;
		size_t n = c->content ? strlen((const char *)c->content) : 0;
		if ((c->type != XML_TEXT_NODE && c->type != XML_CDATA_SECTION_NODE) || o + n >= size)
			return NULL;
		memcpy(buf + o, c->content, n);
		o += n;
	}
	if (!x || !o)
		return NULL;
	buf[o] = '\0';
	size_t sp = strspn(buf, " \t\r\n");
	while (o > sp && strchr(" \t\r\n", buf[o - 1]))
		o--;
	memmove(buf, buf + sp, o - sp);
	buf[o - sp] = '\0';
	return buf;
}

/* mirrorOf: "*", "central", "external:*" or a list holding one, without "!central". */
static bool covers_central(const char *of)
{
	bool yes = false;
	for (const char *p = of; *p;) {
		p += strspn(p, " ,");
		size_t n = strcspn(p, " ,");
		if (n == 8 && !strncmp(p, "!central", 8))
			return false;
		yes |= (n == 1 && *p == '*') || (n == 7 && !strncmp(p, "central", 7)) ||
		       (n == 10 && !strncmp(p, "external:*", 10));
		p += n;
	}
	return yes;
}

static void quiet(void *ctx, const char *fmt, ...)
{
	(void)ctx, (void)fmt;
}

static xmlDoc *read_xml(const char *xml, size_t len, const xmlNode **root)
{
	xmlSetGenericErrorFunc(NULL, quiet);
	xmlDoc *doc = len < (4u << 20) ? xmlReadMemory(xml, (int)len, "settings.xml", NULL,
				     XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING) : NULL;
	*root = NULL;
	if (doc && (doc->intSubset || doc->extSubset)) { /* no entities of the image's expanded */
		xmlFreeDoc(doc);
		return NULL;
	}
	for (const xmlNode *x = doc ? doc->children : NULL; x; x = x->next)
		if (x->type == XML_ELEMENT_NODE)
			*root = x;
	return doc;
}

const char *imgsrc_maven_settings(const char *xml, size_t len, char *buf, size_t size)
{
	const xmlNode *root;
	xmlDoc *doc = read_xml(xml, len, &root);
	const char *r = NULL;
	char of[512];

	for (const xmlNode *m = root && named(root, "settings") ? child(child(root, "mirrors"), "mirror") : NULL;
	     m && !r; m = m->next)
		if (named(m, "mirror") && text_of(child(m, "mirrorOf"), of, sizeof(of)) && covers_central(of) &&
		    (r = text_of(child(m, "url"), buf, size)) && !plain_url(r, strlen(r)))
			r = NULL;
	xmlFreeDoc(doc);
	return r;
}

const char *imgsrc_maven_superpom(const char *xml, size_t len, char *buf, size_t size)
{
	const xmlNode *root;
	xmlDoc *doc = read_xml(xml, len, &root);
	const char *r = NULL;
	char id[64];

	for (const xmlNode *m = root && named(root, "project") ? child(child(root, "repositories"), "repository")
				: NULL; m && !r; m = m->next)
		if (named(m, "repository") && text_of(child(m, "id"), id, sizeof(id)) && !strcmp(id, "central") &&
		    (r = text_of(child(m, "url"), buf, size)) && !plain_url(r, strlen(r)))
			r = NULL;
	xmlFreeDoc(doc);
	return r;
}

/* --- the probe's lines --- */

/* A file's lines ("PREFIX| text") gathered while they come. */
struct doc { char *text; size_t len; FILE *f; };

static void doc_end(struct doc *d)
{
	if (d->f)
		fclose(d->f);
	d->f = NULL;
}

static void take_cargo(struct doc *d, struct imgsrc *src)
{
	char buf[1024];
	const char *why = NULL;
	doc_end(d);
	if (d->text && !src->cargo_index[0] && imgsrc_cargo(d->text, buf, sizeof(buf), &why)) {
		free(src->cargo_index);
		src->cargo_index = xstrdup(buf);
	} else if (d->text && why) {
		src->note = why;
	}
	free(d->text);
	*d = (struct doc){ 0 };
}

static void take_maven(struct doc *d, struct imgsrc *src)
{
	char buf[1024];
	doc_end(d);
	if (d->text && !src->maven_repo[0] && imgsrc_maven_settings(d->text, d->len, buf, sizeof(buf))) {
		free(src->maven_repo);
		src->maven_repo = xstrdup(buf);
	}
	free(d->text);
	*d = (struct doc){ 0 };
}

static void set(char **field, const char *v)
{
	free(*field);
	*field = xstrdup(v ? v : "");
}

void imgsrc_parse(const char *out, struct imgsrc *src)
{
	_cleanup_free_ char *copy = xstrdup(out ? out : ""), *sumdb = NULL, *key = NULL;
	struct doc cargo = { 0 }, maven = { 0 };
	char buf[1024];

	*src = (struct imgsrc){ xstrdup(""), xstrdup(""), xstrdup(""), xstrdup(""), xstrdup(""), NULL };
	for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *v = strchr(l, ' ');
		if (!v)
			continue;
		*v++ = '\0';
		struct doc *d = !strcmp(l, "cargo|") ? &cargo : !strcmp(l, "maven|") ? &maven : NULL;
		if (d) {
			if (!d->f)
				d->f = open_memstream(&d->text, &d->len);
			fprintf(d->f, "%s\n", v);
		} else if (!strcmp(l, "cargo-file")) {
			take_cargo(&cargo, src);
		} else if (!strcmp(l, "maven-file")) {
			take_maven(&maven, src);
		} else if (!strcmp(l, "go-proxy")) {
			set(&src->go_proxy, imgsrc_goproxy(v, buf, sizeof(buf)));
		} else if (!strcmp(l, "go-sumdb")) {
			free(sumdb);
			sumdb = xstrdup(v);
		} else if (!strcmp(l, "go-key")) {
			free(key);
			key = xstrdup(v);
		} else if (!strcmp(l, "maven-jar") && v[0] == '/' && strlen(v) < 512) {
			set(&src->maven_jar, v);
		}
	}
	take_cargo(&cargo, src);
	take_maven(&maven, src);
	_cleanup_free_ char *db = sumdb ? imgsrc_gosumdb(sumdb, key) : NULL;
	set(&src->go_sumdb, db);
}

void imgsrc_free(struct imgsrc *src)
{
	free(src->go_proxy);
	free(src->go_sumdb);
	free(src->cargo_index);
	free(src->maven_repo);
	free(src->maven_jar);
	*src = (struct imgsrc){ 0 };
}
