/* npm_doc.h - npm's packuments (the index document of one package), read
 * and rewritten without any I/O: what the gateway serves and what a
 * tarball request is checked against. */
#ifndef SBX_NPM_DOC_H
#define SBX_NPM_DOC_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "pkg/rules.h"

#define NPM_NAME_MAX 214

/* A package name from a request path ("express", "@types/node", the
 * scope's '/' also as "%2f"): checked against npm's rules (lowercase
 * letters in new names, but old ones have capitals; no "..", no
 * control or URL characters) and written canonical ("@scope/name") to
 * out. Returns 0 or -1. */
int npm_doc_name(const char *raw, size_t len, char *out, size_t size);

/* Every version's dist.tarball becomes base + name + "/-/" + the file name
 * it had upstream; a version whose tarball URL has no plain file name is
 * dropped. out: the new document (malloc'd). Returns 0 or -1 (not a
 * packument: err). */
int npm_doc_rewrite(const char *doc, size_t len, const char *name, const char *base, char **out,
		    size_t *out_len, struct sbx_err *err);

/* What a packument is served under, and what that hid. */
struct npm_serve {
	const struct gw_rules *rules;  /* min_age, not_after, a feed: the versions they refuse are hidden */
	int64_t now_s;
	size_t hidden;                 /* out: how many */
	char told[400];                /* out: the newest of them with their ages,
					* "2.0.0 (published 2 days ago), ..." */
};

/* npm_doc_rewrite, and under min_age the young versions taken out of
 * "versions" and "time"; then every dist-tag whose version is gone points
 * at the newest version left of its kind (a release, or for a prerelease
 * tag a release or prerelease) no newer than it had, or is dropped. */
int npm_doc_serve(const char *doc, size_t len, const char *name, const char *base,
		  struct npm_serve *s, char **out, size_t *out_len, struct sbx_err *err);

struct npm_dist {
	char version[256];
	char *tarball;    /* the upstream URL (malloc'd) */
	char *integrity;  /* NULL when the version has none */
	char *shasum;
	int64_t published_s;  /* from "time" (the full packument), 0: unknown */
};

/* The version whose tarball's file name is file. Returns 1 found, 0 not
 * there, -1 not a packument (err). */
int npm_doc_find(const char *doc, size_t len, const char *file, struct npm_dist *out,
		 struct sbx_err *err);
void npm_dist_free(struct npm_dist *d);

#endif
