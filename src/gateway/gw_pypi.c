/* gw_pypi.c - the PyPI ecosystem of the gateway, at /pypi/: a project's
 * simple page (/pypi/simple/NAME/) is fetched from the upstream index in
 * its JSON form when upstream offers it (PEP 691, with PEP 700's
 * upload-time for the age rule), else HTML; kept briefly and revalidated
 * with its ETag; and served in the form the client asks for, every file
 * link pointing back here (/pypi/files/NAME/FILE#sha256=...). A file
 * request is looked up in its project's page, never fetched by a URL the
 * client gives; its bytes must match the page's sha256 before they are
 * cached or served, and a file the page gives no sha256 is refused. The
 * profile's rules (pkg/rules.h): a name refused is never asked
 * upstream, files younger than min_age are hidden and refused, offline
 * serves pages as last fetched. */
#define _GNU_SOURCE
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "gateway/gw.h"
#include "gateway/gw_doc.h"
#include "pkg/pypi_doc.h"

#define PAGE_MAX (32ULL << 20)          /* an enormous page is refused */
#define FILE_MAX (4ULL << 30)
#define UPSTREAM_ACCEPT "application/vnd.pypi.simple.v1+json, " \
	"application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1"
#define JSON_TYPE "application/vnd.pypi.simple.v1+json"
#define HTML_TYPE "text/html; charset=utf-8"
#define FILES_URL "http://" GATEWAY_HOST "/pypi/files/"

struct pypi_req {
	char name[PYPI_NAME_MAX + 1];   /* normalised */
	char file[PYPI_FILE_MAX + 1];   /* a file's name, or "" for the page */
	bool json;                      /* the client's form */
};

static char *page_url(struct gw *gw, const char *name)
{
	return xasprintf("%s%s/", gw->pypi_upstream, name);
}

/* A link of the page, made absolute against the page's URL. */
static char *absolute(const char *base, const char *href)
{
	CURLU *u = curl_url();
	char *s = NULL, *out = NULL;

	if (u && curl_url_set(u, CURLUPART_URL, base, 0) == CURLUE_OK &&
	    curl_url_set(u, CURLUPART_URL, href, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_URL, &s, 0) == CURLUE_OK)
		out = xstrdup(s);
	curl_free(s);
	curl_url_cleanup(u);
	return out;
}

/* pip's own "No matching distribution" cannot say why: this line does,
 * once per project. */
static void tell_hidden(struct gw *gw, const char *name, const struct pypi_page *pg, const bool *keep)
{
	char hiding[160], key[PYPI_NAME_MAX + 8], told[256] = "", v[64];
	size_t n = 0, o = 0;

	for (size_t i = 0; i < pg->n; i++) {
		if (keep[i] || !pg->files[i].sha256[0])
			continue;
		pypi_doc_version(name, pg->files[i].filename, v, sizeof(v));
		if (n++ < 8 && o < sizeof(told) && !strstr(told, v))
			o += (size_t)snprintf(told + o, sizeof(told) - o, "%s%s", o ? ", " : "", v);
	}
	if (!n)
		return;
	rules_hiding(&gw->conf.rules, "pypi", hiding, sizeof(hiding));
	snprintf(key, sizeof(key), "pypi:%s", name);
	gw_tell_once(gw, key, "pypi '%s': %zu file%s %s hidden (version %s)", name, n, n == 1 ? "" : "s", hiding,
		     told);
}

static void serve_page(struct gw *gw, struct gw_client *cl, struct pypi_req *r, const struct pypi_page *pg)
{
	_cleanup_free_ bool *keep = xcalloc(pg->n + 1, sizeof(bool));
	_cleanup_free_ char *base = xasprintf("%s%s/", FILES_URL, r->name), *out = NULL;
	size_t len = 0;

	/* young files are hidden: the installer picks an older version */
	pypi_doc_keep(pg, r->name, &gw->conf.rules, (int64_t)time(NULL), keep);
	tell_hidden(gw, r->name, pg, keep);
	out = r->json ? pypi_doc_json(pg, r->name, base, keep, &len) : pypi_doc_html(pg, r->name, base, keep, &len);
	if (!out)
		gw_fail(gw, cl, 503, NULL, NULL, NULL, "out of memory");
	else
		gw_reply(gw, cl, 200, r->json ? JSON_TYPE : HTML_TYPE, out, len);
}

static void serve_file(struct gw *gw, struct gw_client *cl, struct pypi_req *r, const struct pypi_page *pg)
{
	const struct pypi_file *f = pypi_doc_find(pg, r->file);
	struct gw_artifact_req ar = { .eco = "pypi", .name = r->name, .max = FILE_MAX };
	char version[128], why[256];
	_cleanup_free_ char *page = page_url(gw, r->name), *url = NULL;

	pypi_doc_version(r->name, r->file, version, sizeof(version));
	if (!f) {
		gw_fail(gw, cl, 404, "pypi", r->name, version, "pypi %s: the index has no file '%s'", r->name,
			r->file);
	} else if (sri_from_hex256(f->sha256, &ar.want) < 0) {
		gw_fail(gw, cl, 502, "pypi", r->name, version, "pypi %s %s: its index gives no sha256 for '%s' "
			"(refused)", r->name, version, r->file);
	} else if (rules_age(&gw->conf.rules, "pypi", r->name, version, f->upload_time, (int64_t)time(NULL), why, sizeof(why)) < 0) {
		gw_fail(gw, cl, 403, "pypi", r->name, version, "pypi %s %s: %s", r->name, version, why);
	} else if (rules_version(&gw->conf.rules, "pypi", r->name, version, why, sizeof(why)) < 0) {
		gw_fail(gw, cl, 403, "pypi", r->name, version, "%s", why);
	} else if (!(url = absolute(page, f->url))) {
		gw_fail(gw, cl, 502, "pypi", r->name, version, "pypi %s %s: the index's link for '%s' is not a URL",
			r->name, version, r->file);
	} else {
		ar.version = version;
		ar.url = url;
		gw_artifact_get(gw, cl, &ar);
	}
}

/* The page (kept as upstream sent it), or a file it links. */
static void serve_doc(struct gw *gw, struct gw_client *cl, const struct gw_doc *d, void *arg)
{
	struct pypi_req *r = arg;
	struct pypi_page pg;
	struct sbx_err err;

	gw_doc_keep(gw, d);
	if (pypi_doc_parse(d->body, d->len, &pg, &err) < 0) {
		gw_fail(gw, cl, 502, "pypi", r->name, NULL, "pypi %s: upstream: %s", r->name, err.msg);
		return;
	}
	if (r->file[0])
		serve_file(gw, cl, r, &pg);
	else
		serve_page(gw, cl, r, &pg);
	pypi_page_free(&pg);
}

/* The page (gw_doc.c: kept briefly, then revalidated with its
 * validators). Offline: as last fetched, however old (its files come from
 * the cache only: gw_artifact_get), or a refusal. */
static void get_doc(struct gw *gw, struct gw_client *cl, struct pypi_req *r)
{
	_cleanup_free_ char *url = page_url(gw, r->name);

	gw_doc_get(gw, cl, &(struct gw_doc_req){ .eco = "pypi", .upstream = gw->pypi_upstream, .key = r->name,
						 .name = r->name, .url = url, .accept = UPSTREAM_ACCEPT,
						 .max = PAGE_MAX, .revalidate = true, .gone = "no such project upstream",
						 .then = serve_doc, .arg = r });
}

/* /pypi/simple/: the list of projects is not served from upstream (an
 * index's can be tens of megabytes, and installers never read it). */
static void serve_root(struct gw *gw, struct gw_client *cl)
{
	static const char html[] = "<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" "
				   "content=\"1.0\"><title>Simple index</title></head><body></body></html>\n";
	static const char json[] = "{\"meta\":{\"api-version\":\"1.0\"},\"projects\":[]}";

	if (pypi_doc_wants_json(cl->accept))
		gw_reply(gw, cl, 200, JSON_TYPE, json, sizeof(json) - 1);
	else
		gw_reply(gw, cl, 200, HTML_TYPE, html, sizeof(html) - 1);
}

/* "simple/NAME/" or "files/NAME/FILE" into r; -1 when it is neither. */
static int parse_path(const char *path, size_t len, struct pypi_req *r)
{
	const char *name, *slash;
	size_t rest;

	if (len > 7 && strncmp(path, "simple/", 7) == 0) {
		name = path + 7;
		rest = len - 7;
		if (name[rest - 1] == '/')
			rest--;
		return memchr(name, '/', rest) ? -1 : pypi_doc_name(name, rest, r->name, sizeof(r->name));
	}
	if (len <= 6 || strncmp(path, "files/", 6) != 0)
		return -1;
	name = path + 6;
	rest = len - 6;
	if (!(slash = memchr(name, '/', rest)) || pypi_doc_name(name, (size_t)(slash - name), r->name, sizeof(r->name)) < 0)
		return -1;
	rest -= (size_t)(slash + 1 - name);
	if (memchr(slash + 1, '/', rest))
		return -1;
	return pypi_doc_filename(slash + 1, rest, r->file, sizeof(r->file));
}

static void pypi_request(struct gw *gw, struct gw_client *cl, const char *path)
{
	size_t len = strcspn(path, "?#");
	struct pypi_req *r;
	char why[512], version[128];

	if (!gw->pypi_upstream) {
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "no PyPI upstream is configured");
		return;
	}
	if (len == 6 && strncmp(path, "simple", 6) == 0) {
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "the index is at /pypi/simple/");
		return;
	}
	if (len == 7 && strncmp(path, "simple/", 7) == 0) {
		serve_root(gw, cl);
		return;
	}
	r = xcalloc(1, sizeof(*r));
	if (parse_path(path, len, r) < 0) {
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "not a PyPI project or file path");
		free(r);
		return;
	}
	if (rules_name(&gw->conf.rules, "pypi", r->name, why, sizeof(why)) < 0) {
		pypi_doc_version(r->name, r->file, version, sizeof(version));
		gw_fail(gw, cl, 403, "pypi", r->name, r->file[0] ? version : NULL, "%s", why);
		free(r);
		return;
	}
	r->json = pypi_doc_wants_json(cl->accept);
	get_doc(gw, cl, r);
}

const struct gw_ecosystem gw_pypi = { .name = "pypi", .request = pypi_request };
