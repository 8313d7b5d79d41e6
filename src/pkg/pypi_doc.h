/* pypi_doc.h - PyPI's simple index pages (PEP 503 HTML, PEP 691 JSON with
 * PEP 700's upload-time), read and written without any I/O: what the
 * gateway serves for a project and what a file request is checked
 * against. */
#ifndef SBX_PYPI_DOC_H
#define SBX_PYPI_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "pkg/rules.h"

#define PYPI_NAME_MAX 200
#define PYPI_FILE_MAX 255

/* A project name from a request path segment (percent-escapes decoded),
 * checked (letters, digits, "-_.", starting and ending with a letter or
 * digit) and written normalised (PEP 503: lower case, each run of "-_."
 * as one "-"). Returns 0 or -1. */
int pypi_doc_name(const char *raw, size_t len, char *out, size_t size);

/* A file name from a request path segment (percent-escapes decoded):
 * letters, digits and "._+!-", not starting with '.'. Returns 0 or -1. */
int pypi_doc_filename(const char *raw, size_t len, char *out, size_t size);

struct pypi_file {
	char *filename;
	char *url;               /* as upstream wrote it (may be relative), no fragment */
	char sha256[65];         /* lower-case hex; "" when the index gives none */
	char *requires_python;   /* NULL: none */
	char *yanked;            /* NULL: not yanked; "" yanked with no reason */
	int64_t upload_time;     /* Unix seconds; 0: unknown (HTML has none) */
	int64_t size;            /* -1: unknown */
};

struct pypi_page {
	struct pypi_file *files;
	size_t n;
	char **versions;         /* PEP 700's list (JSON 1.1), or NULL */
	size_t nversions;
	bool json;               /* upstream answered with the JSON form */
};

/* Parses an upstream project page: JSON when it starts with '{', else
 * HTML (its anchors only). Links with a file name that is not plain are
 * left out. Returns 0, or -1 (not a simple page: err). */
int pypi_doc_parse(const char *doc, size_t len, struct pypi_page *out, struct sbx_err *err);
void pypi_page_free(struct pypi_page *p);

/* The file of that name, or NULL. */
const struct pypi_file *pypi_doc_find(const struct pypi_page *p, const char *filename);

/* keep[i] (p->n entries): whether file i of project name passes the
 * rules' dates at now_s (rules_age with its upload-time: a page without
 * dates keeps nothing under min_age or not_after) and its version no
 * malicious-package feed names (rules_version). */
void pypi_doc_keep(const struct pypi_page *p, const char *name, const struct gw_rules *r, int64_t now_s,
		   bool *keep);

/* The page served for project name: every file with a sha256 and keep[i]
 * (keep NULL: all) linked at base + filename + "#sha256=..."; metadata
 * links (PEP 658/714) are left out, so clients fetch the file itself.
 * Returns the document (malloc'd), its length in *len; NULL when out of
 * memory. */
char *pypi_doc_html(const struct pypi_page *p, const char *name, const char *base, const bool *keep,
		    size_t *len);
char *pypi_doc_json(const struct pypi_page *p, const char *name, const char *base, const bool *keep,
		    size_t *len);

/* Content negotiation (PEP 691): whether an Accept header prefers the JSON
 * form to HTML; HTML is the fallback. */
bool pypi_doc_wants_json(const char *accept);

/* The version in a wheel's or an sdist's file name ("" when none). */
void pypi_doc_version(const char *project, const char *filename, char *out, size_t size);

#endif
