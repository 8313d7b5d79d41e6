/* gw_doc.h - one index document of an ecosystem of the gateway (a Go
 * version list, a checksum database's record, a Cargo index file, a Maven
 * maven-metadata.xml or checksum, an npm packument, a PyPI page): from the
 * cache while it is fresh (for good when it is immutable, however old
 * when offline), else from upstream; offline with no copy, a 503. What
 * comes is handed to the ecosystem's "then", which judges it and keeps it
 * (gw_doc_keep) once it accepts it; upstream's failures are answered here
 * (a 404 when it has no such document, else the last copy, else a 502). */
#ifndef SBX_GW_DOC_H
#define SBX_GW_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gw;
struct gw_client;

/* The document, as a "then" is given it. */
struct gw_doc {
	const char *eco, *upstream, *key;  /* as the cache keeps it (gw_cache.h) */
	const char *name, *what;           /* the package and version (or NULL) a refusal names */
	const char *body;                  /* not NUL-terminated */
	size_t len;
	bool fetched;                      /* from upstream now; else the cache's copy */
	const char *validators;            /* the answer's, kept with it ("": none) */
};

typedef void (*gw_doc_then)(struct gw *gw, struct gw_client *cl, const struct gw_doc *d, void *arg);

/* What an ecosystem asks for. The strings are copied. */
struct gw_doc_req {
	const char *eco, *upstream, *key, *name, *what;
	const char *url;          /* upstream's, of this document */
	const char *accept;       /* the Accept header, or NULL */
	uint64_t max;             /* bytes, the cap */
	bool immutable;           /* a cached copy is never asked for again */
	/* asked again with the copy's validators (If-None-Match, a 304
	 * renews it), and within [packages] index_max_stale served at once
	 * while upstream is asked in the background (gw_reval.c) */
	bool revalidate;
	const char *offline_key;  /* offline, a copy under this key will do too; or NULL */
	const char *gone;         /* what the 404 says after "ECO NAME: "; NULL: upstream has no 'KEY' */
	gw_doc_then then;
	/* called instead of that 404 when upstream has no such document
	 * (404, 410, 451), with body NULL; or NULL */
	gw_doc_then missing;
	void *arg;                /* taken: free()d once then (or missing) returns, or the client is answered */
};

/* Answers cl through q->then, now or when the fetch ends, or with an
 * error; q->arg is freed either way. */
void gw_doc_get(struct gw *gw, struct gw_client *cl, const struct gw_doc_req *q);

/* Keeps d in the cache when it was fetched now (what a "then" does once
 * the document passed its checks). */
void gw_doc_keep(struct gw *gw, const struct gw_doc *d);

#endif
