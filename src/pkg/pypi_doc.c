/* pypi_doc.c - see pypi_doc.h. json-c parses the JSON form; the HTML form
 * is read by a small scanner of the anchors only (PEP 503 pages are a list
 * of <a> elements; comments, other tags and their quoted attributes are
 * skipped whole). A page is untrusted input from upstream: every member is
 * checked for its type, every name and digest for its characters. */
#define _GNU_SOURCE
#include "pkg/pypi_doc.h"

#include <ctype.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/util.h"

#define JSON_TYPE "application/vnd.pypi.simple.v1+json"

static char *dupn(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static int hexval(char ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
		: ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* Percent-decodes raw into out; -1 on a bad escape, a NUL or overflow. */
static int unescape(const char *raw, size_t len, char *out, size_t size)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		int ch = (unsigned char)raw[i];
		if (ch == '%') {
			if (i + 2 >= len)
				return -1;
			int hi = hexval(raw[i + 1]), lo = hexval(raw[i + 2]);
			if (hi < 0 || lo < 0)
				return -1;
			ch = hi << 4 | lo;
			i += 2;
		}
		if (ch == 0 || n + 1 >= size)
			return -1;
		out[n++] = (char)ch;
	}
	out[n] = '\0';
	return 0;
}

int pypi_doc_name(const char *raw, size_t len, char *out, size_t size)
{
	char buf[PYPI_NAME_MAX + 1];
	size_t o = 0;

	if (unescape(raw, len, buf, sizeof(buf)) < 0 || !buf[0] || !isalnum((unsigned char)buf[0]) ||
	    !isalnum((unsigned char)buf[strlen(buf) - 1]))
		return -1;
	for (const char *p = buf; *p; p++) {
		if (!isalnum((unsigned char)*p) && !strchr("-_.", *p))
			return -1;
		if (o + 1 >= size)
			return -1;
		if (strchr("-_.", *p)) {
			if (out[o - 1] != '-')
				out[o++] = '-';
		} else {
			out[o++] = (char)tolower((unsigned char)*p);
		}
	}
	out[o] = '\0';
	return 0;
}

static bool file_char(char ch)
{
	return isalnum((unsigned char)ch) || (ch && strchr("._+!-", ch));
}

static bool plain_filename(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > PYPI_FILE_MAX || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!file_char(s[i]))
			return false;
	return true;
}

int pypi_doc_filename(const char *raw, size_t len, char *out, size_t size)
{
	char buf[PYPI_FILE_MAX + 2];

	if (unescape(raw, len, buf, sizeof(buf)) < 0 || !plain_filename(buf) || strlen(buf) >= size)
		return -1;
	memcpy(out, buf, strlen(buf) + 1);
	return 0;
}

/* "#sha256=HEX" (other hash names are not checked by sbxrun). */
static void fragment_sha256(const char *frag, char *out)
{
	out[0] = '\0';
	if (strncasecmp(frag, "sha256=", 7) != 0 || strlen(frag + 7) != 64)
		return;
	for (size_t i = 0; i < 64; i++)
		if (hexval(frag[7 + i]) < 0)
			return;
	for (size_t i = 0; i < 64; i++)
		out[i] = (char)tolower((unsigned char)frag[7 + i]);
	out[64] = '\0';
}

static void add_file(struct pypi_page *p, struct pypi_file *f)
{
	if (!f->filename || !plain_filename(f->filename) || !f->url || !f->url[0]) {
		free(f->filename);
		free(f->url);
		free(f->requires_python);
		free(f->yanked);
		return;
	}
	p->files = xrealloc(p->files, (p->n + 1) * sizeof(*p->files));
	p->files[p->n++] = *f;
}

/* The URL without its fragment, and the fragment's sha256. */
static void split_url(struct pypi_file *f, const char *href)
{
	const char *hash = strchr(href, '#');

	f->url = hash ? dupn(href, (size_t)(hash - href)) : xstrdup(href);
	if (hash)
		fragment_sha256(hash + 1, f->sha256);
}

/* --- JSON (PEP 691, PEP 700) --- */

static json_object *member(json_object *o, const char *key, json_type type)
{
	json_object *v;
	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, type) ? v : NULL;
}

static char *str_dup(json_object *o, const char *key)
{
	json_object *v = member(o, key, json_type_string);
	return v ? xstrdup(json_object_get_string(v)) : NULL;
}

static void json_file(struct pypi_page *p, json_object *fo)
{
	struct pypi_file f = { .size = -1 };
	json_object *v, *h = member(fo, "hashes", json_type_object);
	const char *url = json_object_get_string(member(fo, "url", json_type_string));
	const char *sha = json_object_get_string(member(h, "sha256", json_type_string));

	f.filename = str_dup(fo, "filename");
	if (url)
		split_url(&f, url);
	f.sha256[0] = '\0';  /* only hashes counts in JSON */
	if (sha) {
		_cleanup_free_ char *frag = xasprintf("sha256=%s", sha);
		fragment_sha256(frag, f.sha256);
	}
	f.requires_python = str_dup(fo, "requires-python");
	if ((v = member(fo, "yanked", json_type_string)))
		f.yanked = xstrdup(json_object_get_string(v));
	else if ((v = member(fo, "yanked", json_type_boolean)) && json_object_get_boolean(v))
		f.yanked = xstrdup("");
	f.upload_time = rules_time(json_object_get_string(member(fo, "upload-time", json_type_string)));
	if ((v = member(fo, "size", json_type_int)) && json_object_get_int64(v) >= 0)
		f.size = json_object_get_int64(v);
	add_file(p, &f);
}

static int parse_json(const char *doc, size_t len, struct pypi_page *p, struct sbx_err *err)
{
	json_tokener *tok = json_tokener_new_ex(64);
	json_object *o = tok ? json_tokener_parse_ex(tok, doc, (int)len) : NULL, *files, *vers;

	if (tok && o && json_tokener_get_parse_end(tok) != len) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	if (!o || !(files = member(o, "files", json_type_array)) || !member(o, "meta", json_type_object)) {
		json_object_put(o);
		return err_set(err, 0, "not a PEP 691 project page");
	}
	p->json = true;
	for (size_t i = 0; i < json_object_array_length(files); i++) {
		json_object *fo = json_object_array_get_idx(files, i);
		if (json_object_is_type(fo, json_type_object))
			json_file(p, fo);
	}
	if ((vers = member(o, "versions", json_type_array))) {
		p->versions = xcalloc(json_object_array_length(vers) + 1, sizeof(char *));
		for (size_t i = 0; i < json_object_array_length(vers); i++) {
			json_object *v = json_object_array_get_idx(vers, i);
			if (json_object_is_type(v, json_type_string))
				p->versions[p->nversions++] = xstrdup(json_object_get_string(v));
		}
	}
	json_object_put(o);
	return 0;
}

/* --- HTML (PEP 503): the anchors --- */

/* Text with the character references decoded (&amp; &#38; &#x26; and the
 * few named ones simple pages use); an unknown one stays as written. */
static char *decode(const char *s, size_t n)
{
	static const struct { const char *name; char ch; } named[] = {
		{ "amp;", '&' }, { "lt;", '<' }, { "gt;", '>' }, { "quot;", '"' }, { "apos;", '\'' } };
	char *out = xmalloc(n + 1);
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		size_t k, rest = n - i - 1;
		if (s[i] != '&') {
			out[o++] = s[i];
			continue;
		}
		for (k = 0; k < ARRAY_SIZE(named); k++)
			if (rest >= strlen(named[k].name) && strncmp(s + i + 1, named[k].name, strlen(named[k].name)) == 0)
				break;
		if (k < ARRAY_SIZE(named)) {
			out[o++] = named[k].ch;
			i += strlen(named[k].name);
			continue;
		}
		unsigned long cp = 0;
		size_t j = i + 1;
		bool hex = j + 1 < n && s[j] == '#' && (s[j + 1] == 'x' || s[j + 1] == 'X');
		j += hex ? 2 : 1;
		size_t start = j;
		while (j < n && j - start < 7 && (hex ? hexval(s[j]) >= 0 : isdigit((unsigned char)s[j])))
			cp = cp * (hex ? 16 : 10) + (unsigned long)hexval(s[j++]);
		if (s[i + 1] == '#' && j > start && j < n && s[j] == ';' && cp > 0 && cp < 0x80) {
			out[o++] = (char)cp;  /* ASCII only: names, versions and URLs */
			i = j;
		} else {
			out[o++] = '&';
		}
	}
	out[o] = '\0';
	return out;
}

struct anchor {
	char *href, *requires_python, *yanked;
	bool has_yanked;
};

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f';
}

/* Reads the attributes of a tag from *pp up to its '>'; an anchor's
 * attributes of interest go to a (NULL: only skipped). Returns false when
 * the tag does not end. */
static bool attributes(const char **pp, const char *end, struct anchor *a)
{
	const char *p = *pp;

	for (;;) {
		while (p < end && (is_space(*p) || *p == '/'))
			p++;
		if (p >= end)
			return false;
		if (*p == '>') {
			*pp = p + 1;
			return true;
		}
		const char *name = p, *val = NULL;
		while (p < end && !is_space(*p) && *p != '=' && *p != '>' && *p != '/')
			p++;
		size_t nlen = (size_t)(p - name), vlen = 0;
		while (p < end && is_space(*p))
			p++;
		if (p < end && *p == '=') {
			p++;
			while (p < end && is_space(*p))
				p++;
			if (p < end && (*p == '"' || *p == '\'')) {
				const char *q = memchr(p + 1, *p, (size_t)(end - p - 1));
				if (!q)
					return false;
				val = p + 1;
				vlen = (size_t)(q - val);
				p = q + 1;
			} else {
				val = p;
				while (p < end && !is_space(*p) && *p != '>')
					p++;
				vlen = (size_t)(p - val);
			}
		}
		if (!a || nlen == 0)
			continue;
		char **slot = nlen == 4 && strncasecmp(name, "href", 4) == 0 ? &a->href
			: nlen == 20 && strncasecmp(name, "data-requires-python", 20) == 0 ? &a->requires_python
			: nlen == 11 && strncasecmp(name, "data-yanked", 11) == 0 ? &a->yanked : NULL;
		if (slot && !*slot) {
			*slot = decode(val ? val : "", val ? vlen : 0);
			a->has_yanked |= slot == &a->yanked;
		}
	}
}

/* The text of an anchor up to "</a", decoded and trimmed. */
static char *anchor_text(const char **pp, const char *end)
{
	const char *p = *pp, *s;

	for (s = p; s + 3 <= end; s++)
		if (s[0] == '<' && s[1] == '/' && (s[2] == 'a' || s[2] == 'A') && (s + 3 == end || !isalnum((unsigned char)s[3])))
			break;
	if (s + 3 > end)
		return NULL;
	*pp = s + 3;
	while (p < s && is_space(*p))
		p++;
	while (s > p && is_space(s[-1]))
		s--;
	return decode(p, (size_t)(s - p));
}

static void html_anchor(struct pypi_page *pg, struct anchor *a, char *text)
{
	struct pypi_file f = { .size = -1 };

	if (a->href && text && !memchr(text, '<', strlen(text))) {
		f.filename = steal_ptr(text);
		split_url(&f, a->href);
		f.requires_python = a->requires_python && a->requires_python[0] ? steal_ptr(a->requires_python) : NULL;
		f.yanked = a->has_yanked ? steal_ptr(a->yanked) : NULL;
		if (a->has_yanked && !f.yanked)
			f.yanked = xstrdup("");
		add_file(pg, &f);
	}
	free(text);
	free(a->href);
	free(a->requires_python);
	free(a->yanked);
}

static int parse_html(const char *doc, size_t len, struct pypi_page *pg, struct sbx_err *err)
{
	const char *p = doc, *end = doc + len;

	if (memchr(doc, '\0', len))
		return err_set(err, 0, "not a PEP 503 project page (a NUL byte)");
	while ((p = memchr(p, '<', (size_t)(end - p)))) {
		if ((size_t)(end - p) >= 4 && memcmp(p, "<!--", 4) == 0) {
			const char *c = memmem(p + 4, (size_t)(end - p - 4), "-->", 3);
			if (!c)
				break;
			p = c + 3;
			continue;
		}
		bool is_a = p + 2 < end && (p[1] == 'a' || p[1] == 'A') && (is_space(p[2]) || p[2] == '>');
		struct anchor a = { 0 };
		p += is_a ? 2 : 1;
		if (!is_a) {
			while (p < end && isalnum((unsigned char)*p))
				p++;
		}
		if (!attributes(&p, end, is_a ? &a : NULL)) {
			free(a.href), free(a.requires_python), free(a.yanked);
			break;
		}
		if (is_a)
			html_anchor(pg, &a, anchor_text(&p, end));
	}
	return 0;
}

int pypi_doc_parse(const char *doc, size_t len, struct pypi_page *out, struct sbx_err *err)
{
	size_t i = 0;

	memset(out, 0, sizeof(*out));
	while (i < len && is_space(doc[i]))
		i++;
	if (i < len && doc[i] == '{')
		return parse_json(doc, len, out, err);
	if (i == len || doc[i] != '<')
		return err_set(err, 0, "not a simple index page");
	return parse_html(doc, len, out, err);
}

void pypi_page_free(struct pypi_page *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->files[i].filename);
		free(p->files[i].url);
		free(p->files[i].requires_python);
		free(p->files[i].yanked);
	}
	for (size_t i = 0; i < p->nversions; i++)
		free(p->versions[i]);
	free(p->files);
	free(p->versions);
	memset(p, 0, sizeof(*p));
}

const struct pypi_file *pypi_doc_find(const struct pypi_page *p, const char *filename)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->files[i].filename, filename) == 0)
			return &p->files[i];
	return NULL;
}

/* --- what the gateway serves --- */

void pypi_doc_keep(const struct pypi_page *p, const char *name, const struct gw_rules *r, int64_t now_s,
		   bool *keep)
{
	char why[256];

	char v[128];

	for (size_t i = 0; i < p->n; i++) {
		pypi_doc_version(name, p->files[i].filename, v, sizeof(v));
		keep[i] = rules_age(r, "pypi", name, v, p->files[i].upload_time, now_s, why, sizeof(why)) == 0 &&
			  rules_version(r, "pypi", name, v, why, sizeof(why)) == 0;
	}
}

static void put_escaped(FILE *m, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", m); break;
		case '<': fputs("&lt;", m); break;
		case '>': fputs("&gt;", m); break;
		case '"': fputs("&quot;", m); break;
		case '\'': fputs("&#39;", m); break;
		default: fputc(*s, m);
		}
	}
}

static bool served(const struct pypi_page *p, const bool *keep, size_t i)
{
	return p->files[i].sha256[0] && (!keep || keep[i]);
}

char *pypi_doc_html(const struct pypi_page *p, const char *name, const char *base, const bool *keep,
		    size_t *len)
{
	char *out = NULL;
	FILE *m = open_memstream(&out, len);

	if (!m)
		return NULL;
	fputs("<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.0\">"
	      "<title>Links for ", m);
	put_escaped(m, name);
	fputs("</title></head><body><h1>Links for ", m);
	put_escaped(m, name);
	fputs("</h1>\n", m);
	for (size_t i = 0; i < p->n; i++) {
		const struct pypi_file *f = &p->files[i];
		if (!served(p, keep, i))
			continue;
		fprintf(m, "<a href=\"%s%s#sha256=%s\"", base, f->filename, f->sha256);
		if (f->requires_python) {
			fputs(" data-requires-python=\"", m);
			put_escaped(m, f->requires_python);
			fputc('"', m);
		}
		if (f->yanked) {
			fputs(" data-yanked=\"", m);
			put_escaped(m, f->yanked);
			fputc('"', m);
		}
		fprintf(m, ">%s</a><br>\n", f->filename);
	}
	fputs("</body></html>\n", m);
	if (fclose(m) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

static json_object *json_out_file(const struct pypi_file *f, const char *base)
{
	json_object *o = json_object_new_object(), *h = json_object_new_object();
	_cleanup_free_ char *url = xasprintf("%s%s", base, f->filename);

	json_object_object_add(o, "filename", json_object_new_string(f->filename));
	json_object_object_add(o, "url", json_object_new_string(url));
	json_object_object_add(h, "sha256", json_object_new_string(f->sha256));
	json_object_object_add(o, "hashes", h);
	if (f->requires_python)
		json_object_object_add(o, "requires-python", json_object_new_string(f->requires_python));
	if (f->yanked)
		json_object_object_add(o, "yanked", f->yanked[0] ? json_object_new_string(f->yanked)
							       : json_object_new_boolean(1));
	if (f->size >= 0)
		json_object_object_add(o, "size", json_object_new_int64(f->size));
	if (f->upload_time > 0) {
		char t[32];
		struct tm tm;
		time_t s = (time_t)f->upload_time;
		strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&s, &tm));
		json_object_object_add(o, "upload-time", json_object_new_string(t));
	}
	return o;
}

char *pypi_doc_json(const struct pypi_page *p, const char *name, const char *base, const bool *keep,
		    size_t *len)
{
	json_object *o = json_object_new_object(), *meta = json_object_new_object(), *files = json_object_new_array();
	bool sizes = true;

	for (size_t i = 0; i < p->n; i++) {
		if (!served(p, keep, i))
			continue;
		sizes &= p->files[i].size >= 0;
		json_object_array_add(files, json_out_file(&p->files[i], base));
	}
	/* 1.1 (PEP 700) promises versions and every file's size */
	bool v11 = p->versions && sizes;
	json_object_object_add(meta, "api-version", json_object_new_string(v11 ? "1.1" : "1.0"));
	json_object_object_add(o, "meta", meta);
	json_object_object_add(o, "name", json_object_new_string(name));
	json_object_object_add(o, "files", files);
	if (v11) {
		json_object *vers = json_object_new_array();
		for (size_t i = 0; i < p->nversions; i++)
			json_object_array_add(vers, json_object_new_string(p->versions[i]));
		json_object_object_add(o, "versions", vers);
	}
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	*len = strlen(s);
	char *out = xstrdup(s);
	json_object_put(o);
	return out;
}

/* The q value an Accept header gives one media type (exact, or with wild
 * also "type/ *" and "* / *"), or -1 when it names none of them. */
static double accept_q(const char *accept, const char *type, bool wild)
{
	double best = -1;
	const char *slash = strchr(type, '/');

	for (const char *p = accept; *p;) {
		size_t n = strcspn(p, ",");
		_cleanup_free_ char *item = dupn(p, n);
		char *semi = strchr(item, ';'), *s = item, *e;
		double q = 1;
		p += n + (p[n] == ',');
		if (semi) {
			*semi = '\0';
			char *qs = strstr(semi + 1, "q=");
			if (qs)
				q = strtod(qs + 2, NULL);
		}
		while (is_space(*s))
			s++;
		for (e = s + strlen(s); e > s && is_space(e[-1]);)
			*--e = '\0';
		bool match = strcasecmp(s, type) == 0 || (wild && strcmp(s, "*/*") == 0) ||
			     (wild && strlen(s) == (size_t)(slash - type) + 2 && strncasecmp(s, type, (size_t)(slash - type) + 1) == 0 &&
			      s[slash - type + 1] == '*');
		if (match && q > best)
			best = q;
	}
	return best;
}

bool pypi_doc_wants_json(const char *accept)
{
	/* JSON only when named: a client that takes anything gets HTML */
	double json = accept_q(accept, JSON_TYPE, false), html = accept_q(accept, "text/html", true);
	double vhtml = accept_q(accept, "application/vnd.pypi.simple.v1+html", true);

	double latest = accept_q(accept, "application/vnd.pypi.simple.latest+json", false);

	if (vhtml > html)
		html = vhtml;
	if (latest > json)
		json = latest;
	return json > 0 && json >= html;
}

void pypi_doc_version(const char *project, const char *filename, char *out, size_t size)
{
	size_t n = strlen(filename), plen = strlen(project);
	const char *ext[] = { ".whl", ".tar.gz", ".zip", ".tar.bz2", ".tgz", ".egg" };
	size_t stem = n;
	char norm[PYPI_NAME_MAX + 1];

	out[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(ext); i++) {
		size_t el = strlen(ext[i]);
		if (n > el && strcasecmp(filename + n - el, ext[i]) == 0) {
			stem = n - el;
			break;
		}
	}
	if (stem == n)
		return;
	/* a wheel's and an egg's: NAME-VERSION-...; an sdist's: NAME-VERSION,
	 * where an old NAME may hold '-': compared normalised */
	const char *d1 = memchr(filename, '-', stem);
	if (d1 && (strcasecmp(filename + stem, ".whl") == 0 || strcasecmp(filename + stem, ".egg") == 0)) {
		const char *d2 = memchr(d1 + 1, '-', stem - (size_t)(d1 + 1 - filename));
		snprintf(out, size, "%.*s", (int)((d2 ? d2 : filename + stem) - d1 - 1), d1 + 1);
		return;
	}
	for (size_t cut = 1; cut < stem; cut++) {
		if (filename[cut] != '-')
			continue;
		_cleanup_free_ char *head = dupn(filename, cut);
		if (pypi_doc_name(head, cut, norm, sizeof(norm)) == 0 && strlen(norm) == plen &&
		    strcmp(norm, project) == 0) {
			snprintf(out, size, "%.*s", (int)(stem - cut - 1), filename + cut + 1);
			return;
		}
	}
	const char *last = memrchr(filename, '-', stem);
	if (last)
		snprintf(out, size, "%.*s", (int)(stem - (size_t)(last + 1 - filename)), last + 1);
}
