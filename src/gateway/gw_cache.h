/* gw_cache.h - the gateway cache's index documents (npm's packuments,
 * PyPI's pages, apt's Release and Packages files), each kept by the
 * ecosystem, the upstream it came from and its key, so that a profile
 * never reads another upstream's index, online or offline (the rest of
 * the cache's calls: gw.h; the layout on disk: pkgcache.h). */
#ifndef SBX_GW_CACHE_H
#define SBX_GW_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct gw_cache;

/* upstream: the base URL the document is fetched below, as the gateway
 * names it ("https://registry.example/"); a digest of it is in the key.
 * Returns 1 with body (free it), etag ("" if none) and age: the user's
 * copy or the system cache's, the younger; 0 when neither has one. */
int gw_cache_index_get(struct gw_cache *c, const char *eco, const char *upstream, const char *key,
		       char **body, size_t *len, char *etag, size_t etag_size, int64_t *age_ms);
/* Keeps the document (replaced whole: temporary file, fsync, rename) and
 * counts it under the cache's cap, evicting past it (gw_cache_trim). */
void gw_cache_index_put(struct gw_cache *c, const char *eco, const char *upstream, const char *key,
			const char *body, size_t len, const char *etag);
/* Revalidated (a 304): fresh again. */
void gw_cache_index_touch(struct gw_cache *c, const char *eco, const char *upstream, const char *key);

#endif
