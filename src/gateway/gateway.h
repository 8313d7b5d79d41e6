/* gateway.h - the package gateway: package managers inside a `packages`
 * sandbox talk plain HTTP to http://packages.sbxrun.internal/<ecosystem>/
 * through the proxy's door; the host side fetches from the real upstream
 * over verified HTTPS, checks every artifact against the digest its index
 * gives and keeps it in a content-addressed cache shared by the user's
 * sandboxes. Runs in the proxy's loop (net/proxy.h, struct proxy_local). */
#ifndef SBX_GATEWAY_H
#define SBX_GATEWAY_H

#include <stddef.h>
#include <stdint.h>

#include "base/config.h"
#include "base/err.h"
#include "pkg/rules.h"
#include "net/hostmatch.h"
#include "net/proxy.h"

/* Reserved: an image can never grant *.sbxrun.internal (base/hostaddr.c). */
#define GATEWAY_HOST "packages.sbxrun.internal"
#define GATEWAY_NPM_URL "http://" GATEWAY_HOST "/npm/"
#define GATEWAY_PYPI_URL "http://" GATEWAY_HOST "/pypi/simple/"
#define GATEWAY_GO_URL "http://" GATEWAY_HOST "/go"
#define GATEWAY_CARGO_URL "http://" GATEWAY_HOST "/cargo/"
#define GATEWAY_MAVEN_URL "http://" GATEWAY_HOST "/maven/"

struct sbx_gateway_conf {
	const char *profile_name;
	const struct sbx_strlist *allow;   /* the proxy's allow list: every hop */
	const struct hostmatch_sets *sets; /* must pass it, redirects included */
	const char *npm_upstream;          /* a registry URL, or NULL: no /npm/; its
					    * host is allowed with the allow list */
	const char *pypi_upstream;         /* a simple index URL, or NULL: no /pypi/; the
					    * same: its host must be on the allow list */
	const char *go_upstream;           /* a Go module proxy URL, or NULL: no /go/; the same */
	const char *go_sumdb;              /* "NAME+HASH+KEY URL": every Go module is checked
					    * against it (needed with go_upstream) */
	const char *cargo_upstream;        /* "INDEX-URL [DOWNLOAD-URL]", or NULL: no /cargo/; the
					    * same (the downloads' host, config.json's dl, too) */
	const char *maven_upstream;        /* a Maven repository URL (Central's layout), or
					    * NULL: no /maven/; the same */
	int events_fd;                     /* -1, or where JSON-lines events go */
	uint64_t timeout_ms;               /* an upstream silent this long fails (0: 30 s) */
	int64_t index_max_age_ms;          /* an index document is served from the cache this
					    * long before upstream is asked (0: 2 minutes; < 0: ask each time) */
	int64_t index_max_stale_ms;        /* past that, one this much older is still served
					    * while upstream is asked behind (0: none) */
	const char *cache_dir;             /* NULL: the user's (~/.cache/sbxrun/packages) */
	const char *system_cache;          /* read first (root's); NULL or "none": none */
	uint64_t cache_max;                /* the cache's cap in bytes; 0: none */
	uint64_t held_max;                 /* answers not yet read, in bytes (0: GW_HELD_MAX) */
	bool peer_share;                   /* one peer's at most an eighth of it (a
					    * sandbox's gateway has one peer: none) */
	uint64_t answer_ms;                /* an answer's time from its first byte, and
					    * 1 s per MiB of it (0: GW_ANSWER_MS) */
	struct gw_rules rules;             /* [packages] allow, deny, min_age, not_after, offline */
	const struct sbx_strlist *malicious; /* [packages] malicious: read by gateway_new
					    * into rules.feed; one that cannot be read
					    * fails the gateway (never half a feed) */
};

struct sbx_gateway;

/* The npm upstream a sandbox of cfg gets: the profile's [packages] npm,
 * else the image's registry (read at import); NULL: no gateway for npm. */
const char *gateway_npm_upstream(const struct sbx_config *cfg, const char *image_registry);
/* The PyPI index a sandbox of cfg gets: the profile's [packages] pypi,
 * else the first of the image's pip indexes (read at import), copied to
 * buf; NULL: no gateway for PyPI. */
const char *gateway_pypi_upstream(const struct sbx_config *cfg, const char *image_index, char *buf,
				  size_t size);

/* GOSUMDB for a sandbox of cfg and img: "NAME+HASH+KEY http://GATEWAY/go/sumdb/NAME"
 * (the profile's key, or with go = @go the image's; the gateway's
 * passthrough). 0, or -1 when there is no Go upstream. */
int gateway_go_sumdb(const struct sbx_config *cfg, const struct hostmatch_sets *img, char *buf, size_t size);

/* What a gateway for cfg takes from the profile ([packages], the allow
 * list after the policy) and the image's sources (its npm registry and pip
 * index: the upstreams when the profile names none; its go, cargo and
 * maven sources where the profile says @go, @cargo, @maven). A sandbox's (sandbox/plan.c)
 * and `sbxrun proxy`'s are made here alike; the caller adds profile_name,
 * sets and events_fd where the gateway starts. *pypi holds the PyPI
 * upstream's storage (free it after the gateway's end). */
void gateway_conf_init(struct sbx_gateway_conf *conf, const struct sbx_config *cfg,
		       const struct hostmatch_sets *img, char **pypi);
/* The proxy's hook for the gateway of conf (gateway_new, gateway_local),
 * when it serves anything: an npm or PyPI upstream, or the image's apt
 * hosts (conf->sets); otherwise *out is left with no host (no gateway). */
int gateway_local_for(const struct sbx_gateway_conf *conf, struct proxy_local *out,
		      struct sbx_err *err);

/* This process's gateways write to the system cache at dir, readable by
 * all (root's `sbxrun cache fill --system`). */
void gateway_fill_system(const char *dir);

int gateway_new(const struct sbx_gateway_conf *conf, struct sbx_gateway **out, struct sbx_err *err);
/* The hook the proxy runs the gateway through; the proxy frees it. */
struct proxy_local gateway_local(struct sbx_gateway *gw);
void gateway_free(struct sbx_gateway *gw);

/* The gateway behind a proxy's local service, or NULL when it is none. */
struct sbx_gateway *gateway_of(const struct proxy_local *l);
/* The package rules read again (gw_live.c): cfg's [packages] allow, deny,
 * min_age and offline, and its allow list for every hop, apply to the
 * requests that come next. When they differ from what it held, one event
 * ("rules": {"packages": "deny = npm:x (FILE:LINE); offline", "by": by}).
 * Returns 0, or -1 with err (the rules held are kept). */
int gateway_set_rules(struct sbx_gateway *gw, const struct sbx_config *cfg, const char *by, struct sbx_err *err);

#endif
