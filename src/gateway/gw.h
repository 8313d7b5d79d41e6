/* gw.h - inside the package gateway: the core (gateway.c: requests, the
 * loop), clients, their answers and events (gw_client.c), upstream fetches
 * (gw_fetch.c), the cache (gw_cache.c; as a whole, pkgcache.h),
 * artifacts shared between requests (gw_artifact.c) and one file per
 * ecosystem behind struct gw_ecosystem (gw_npm.c, gw_deb.c, gw_pypi.c). */
#ifndef SBX_GW_H
#define SBX_GW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "gateway/gateway.h"
#include "gateway/gw_cache.h"
#include "pkg/sri.h"
#include "net/hostmatch.h"

struct gw;
struct gw_client;

/* One ecosystem: requests below /NAME/ go to its handler. */
struct gw_ecosystem {
	const char *name;
	/* path: below "/NAME/", still URL-encoded; answers cl now or later. */
	void (*request)(struct gw *gw, struct gw_client *cl, const char *path);
	void (*free)(struct gw *gw);
};
extern const struct gw_ecosystem gw_npm;
extern const struct gw_ecosystem gw_deb;
extern const struct gw_ecosystem gw_pypi;
extern const struct gw_ecosystem gw_go;
extern const struct gw_ecosystem gw_cargo;
extern const struct gw_ecosystem gw_maven;

struct gw_client {
	struct gw_client *next;
	struct gw *gw;
	uint64_t id;
	int fd;
	struct sbx_proxy *door;   /* that handed it over: it takes it back (keep) */
	bool keep;          /* HTTP/1.1 keep-alive: back to the door once answered */
	char *next_req;     /* what followed the request head (keep), or NULL */
	size_t next_len;
	unsigned char peer[PROXY_PEER_KEY]; /* who sent it (the proxy's per-peer cap) */
	bool dead;
	bool head_only;     /* HEAD: no body */
	bool json_errors;   /* an error's body as {"error": "..."} (npm shows it) */
	char accept[256];   /* the client's Accept header */
	char *out;          /* response head (and a small body) */
	size_t out_len, out_off;
	int body_fd;        /* then a file, or -1 */
	off_t body_off, body_len;
	size_t held;        /* body_fd is an answer spooled by gw_reply: its bytes */
	int64_t deadline;
	bool answering;     /* its answer's deadline is set: from the first byte, never renewed */
	void *req;          /* the ecosystem's state while it works */
	void (*req_free)(void *req);
};

struct gw_cache;
struct gw_deb;
struct gw_debidx;
struct debidx_entry;

struct gw {
	struct sbx_gateway_conf conf;
	struct hostmatch_list allow;
	int epfd, tfd, curl_tfd;
	void *multi;               /* CURLM */
	struct gw_client *clients;
	uint64_t next_id;
	struct gw_cache *cache;
	struct gw_fetch *fetches;  /* running */
	struct gw_fetch *queued;   /* waiting for a slot, oldest first */
	size_t nqueued;
	struct gw_artifact *artifacts;  /* being fetched or waited for */
	char *npm_upstream;        /* with a trailing '/' */
	struct hostmatch_list apt; /* @apt: the hosts whose plain HTTP is apt's (gw_deb.c) */
	struct gw_deb *deb;        /* the .debs waiting for a table (gw_deb.c) */
	struct gw_debidx *debidx;  /* the tables of the Packages indexes apt fetched (gw_debidx.c) */
	char *pypi_upstream;       /* the simple index, with a trailing '/' */
	char *go_upstream;         /* the Go module proxy, with a trailing '/' */
	char *go_sumdb_key;        /* its checksum database's verifier key */
	char *go_sumdb_name;       /* the key's name */
	char *go_sumdb_url;        /* and its URL, with a trailing '/' */
	char *cargo_upstream;      /* the Cargo sparse index, with a trailing '/' (gw_cargo.c) */
	char *maven_upstream;      /* the Maven repository, with a trailing '/' */
	/* the npm and PyPI upstreams' URLs, the profile's and the image's
	 * (@npm, @pypi), separated by spaces: hosts the deb route never
	 * reaches (gw_deb.c) */
	char *not_apt;
	struct gw_reval *revals;   /* index documents revalidated in the background */
	size_t nrevals;
	char *profile;
	uint64_t held;             /* bytes of the clients' spooled answers (gw_reply) */
	char **told;               /* what gw_tell_once said already */
	size_t ntold;
	struct gw_proxy *upproxy;  /* the upstream proxy of sbxrun's environment, or NULL (gw_proxy.c) */
	struct malfeed *feed;      /* [packages] malicious, read at the start (conf.rules.feed) */
	struct gw_feeds *feeds;    /* its URLs, fetched once serving (gw_feed.c), or NULL */
	/* conf.rules' lists, the gateway's own (set again while it runs:
	 * gw_live.c), and the rules as last told */
	struct sbx_strlist live_allow, live_deny;
	char *live_said;
};

/* --- when the gateway first saw a version (gw_seen.c) --- */
/* The record of one package: the cache's index document key of eco
 * below upstream ("seen/NAME"). */
struct gw_seen_key {
	const char *eco, *upstream, *key;
};
/* When the gateway first saw each of v[0..n) (Unix seconds; 0: never);
 * with record, one never seen is recorded as seen now, all in one write. */
void gw_first_seen(struct gw *gw, const struct gw_seen_key *k, const char *const *v, size_t n, int64_t *seen,
		   bool record);
/* 0 when a version first seen at seen may be served by the rules of
 * versions (a malicious-package feed; min_age and not_after with the time
 * first seen as its date; never seen: now, deny when unsure), else -1 with
 * why ("ECO NAME VERSION: first seen by the gateway ..."). */
int gw_seen_ok(struct gw *gw, const char *eco, const char *name, const char *version, int64_t seen, char *why,
	       size_t size);
/* Both for one version. */
int gw_seen_ok1(struct gw *gw, const struct gw_seen_key *k, const char *name, const char *version, bool record,
		char *why, size_t size);

/* --- [packages] malicious = URL (gw_feed.c) --- */
/* How a request held for the feed is served once it is in (gateway.c). */
typedef void (*gw_feed_route)(struct gw *gw, struct gw_client *c, const char *host, const char *path);
/* Reads the feeds' files (malfeed_load) and notes their URLs. */
int gw_feed_init(struct gw *gw, gw_feed_route route, struct sbx_err *err);
/* Starts what is to be fetched (the gateway's timer). */
void gw_feed_poll(struct gw *gw);
/* Whether request c (host, path) was taken: held until every URL's feed
 * is in, or answered 503 when one could not be loaded; false: serve it. */
bool gw_feed_hold(struct gw *gw, struct gw_client *c, const char *host, const char *path);
void gw_feed_fini(struct gw *gw);

/* --- the rules set again while it runs (gw_live.c) --- */
void gw_live_init(struct gw *gw);
void gw_live_fini(struct gw *gw);

#define GW_INDEX_MAX_AGE_MS 120000  /* [packages] index_max_age's default */

/* Whether an index document cached age_ms ago is served without asking
 * upstream ([packages] index_max_age). Here, not in gateway.c: the
 * ecosystems ask it, and gateway.c calls them. */
static inline bool gw_index_fresh(const struct gw *gw, int64_t age_ms)
{
	int64_t max = gw->conf.index_max_age_ms ? gw->conf.index_max_age_ms : GW_INDEX_MAX_AGE_MS;
	return age_ms >= 0 && age_ms < max;
}

/* Whether one past that may still be served at once while upstream is
 * asked in the background (RFC 5861's stale-while-revalidate): within
 * [packages] index_max_stale past index_max_age. */
static inline bool gw_index_stale_ok(const struct gw *gw, int64_t age_ms)
{
	int64_t max = gw->conf.index_max_age_ms ? gw->conf.index_max_age_ms : GW_INDEX_MAX_AGE_MS;
	return max > 0 && gw->conf.index_max_stale_ms > 0 && age_ms >= 0 &&
	       age_ms < max + gw->conf.index_max_stale_ms;
}

/* --- clients (gw_client.c) --- */
/* past an upstream's own total timeout (gw_fetch.c), without a byte sent */
#define GW_CLIENT_TIMEOUT_MS 660000
int gw_ep_add(struct gw *gw, int fd, uint32_t events, uint64_t tag);
bool gw_client_alive(struct gw *gw, uint64_t id);
struct gw_client *gw_client_find(struct gw *gw, uint64_t id);
/* What one answer may keep in memory until its client reads it; a larger
 * body is written to a file of the cache's (gw_cache_scratch) and sent from
 * there, and all such files of one gateway together hold at most
 * GW_HELD_MAX bytes (past it: 503). With at most 256 clients, the answers
 * waiting to be read hold at most 256 x (head + GW_INLINE_MAX) of memory. */
#define GW_INLINE_MAX (16U << 10)
#define GW_HELD_MAX (1ULL << 30)
/* `sbxrun proxy --listen`: one peer (an address, a /64) holds at most this
 * share of it (conf.peer_share), so that eight peers each get theirs
 * whatever one of them leaves unread. */
#define GW_PEER_SHARES 8
/* An answer is read whole within this of its first byte, plus a second
 * per MiB of it (a reader that takes a byte now and then is cut, not
 * kept for ever by each partial write). */
#define GW_ANSWER_MS 660000
#define GW_ANSWER_MIB_MS 1000
/* Answers: status, content type, a body (copied: the caller keeps it). */
void gw_reply(struct gw *gw, struct gw_client *cl, int status, const char *ctype, const char *body,
	      size_t len);
/* An error with a one-line text body; also told on sbxrun's stderr and as
 * a "package-refused" event when name is given (its "rule" is the one the
 * message names: rules_which). */
void gw_fail(struct gw *gw, struct gw_client *cl, int status, const char *eco, const char *name,
	     const char *version, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* [packages] mode = report (rules.h's on_report, arg the gateway): what a
 * rule would have refused, served. A "package-refused" event with
 * "decision": "report" once per package, version and rule; one line on
 * sbxrun's stderr once per package and rule. name NULL: the ecosystem
 * (apt's indexes under an allow list that names no deb:). */
void gw_report(void *gw, const char *eco, const char *name, const char *version, const char *why);
/* One line on sbxrun's stderr, the first time key is told in this gateway. */
void gw_tell_once(struct gw *gw, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Sends the open file fd (the client owns it now). */
void gw_reply_file(struct gw *gw, struct gw_client *cl, int fd, off_t size, const char *ctype);
/* A Packages table taken in: from the cache, or built ("built"; damaged:
 * why the cache's was not trusted, or NULL). */
void gw_event_index(struct gw *gw, const char *eco, const char *index, uint64_t entries, const char *table,
		    int64_t ms, const char *damaged);
void gw_event_artifact(struct gw *gw, const char *eco, const char *name, const char *version,
		       uint64_t bytes, const char *cache, int64_t upstream_ms);
/* Writes what is pending; once all is out, ends the connection, or
 * gives it back to the proxy for its next request (keep-alive). */
void gw_client_flush(struct gw_client *c);
void gw_client_kill(struct gw_client *c);
/* A client's connection gets a small send buffer (gw_client.c's SNDBUF). */
void gw_client_sndbuf(int fd);
void gw_client_reap(struct gw *gw);  /* frees the ended */

/* --- fetches (gw_fetch.c) --- */
struct gw_fetch {
	struct gw_fetch *next;
	/* in */
	char *url;
	char accept[128];
	/* the validators of a cached copy: an ETag (If-None-Match), then
	 * optionally a tab and a Last-Modified date (If-Modified-Since); "" for none */
	char etag[256];
	uint64_t max;          /* bytes, the cap */
	bool plain_http;       /* http:// allowed (apt's sources; apt checks its signed chain) */
	/* beyond the allow list, why a hop's host may not be reached, or
	 * NULL when it may (the deb route: apt's upstreams alone); NULL: none */
	const char *(*hop_refused)(const struct gw *gw, const char *host, int port);
	int fd;                /* the body goes here, or (-1) to a file of the
				* cache's, mapped at body when the fetch ends */
	void (*data)(struct gw_fetch *f, const void *p, size_t n);  /* as it streams, or NULL */
	void (*done)(struct gw *gw, struct gw_fetch *f);
	void *arg;
	/* out */
	long status;           /* the last hop's HTTP status; 0: no answer */
	char error[512];       /* "" when the transfer itself worked */
	char *body;            /* fd == -1: a 200's body, mapped read-only (not
				* NUL-terminated); else an error's first bytes */
	size_t len;            /* bytes of the body */
	char resp_etag[256];   /* the answer's validators, in the same form */
	int64_t start_ms, ms;
	/* private */
	void *curl;
	void *hdrs;
	int hops;
	struct hostmatch_grant grant;
	char resolve[320];
	void *resolve_list;
	bool too_big;
	const char *refused;
	char resp_lastmod[64];
	int spool;             /* fd == -1: where the body is written (spooled) */
	bool spooled;
	bool mapped;           /* body is spool's mapping */
	/* through the upstream proxy (gw_proxy.c) */
	const struct proxy_chain *via_proxy;  /* this hop's, or NULL: direct */
	void *connect_to;      /* the tunnel's vetted address (curl_slist) */
	bool lookup_pending;   /* waiting for sbxrun's own lookup of via_host */
	char via_host[HOSTMATCH_MAX];
	int via_port;
};
#define GW_VALIDATORS_MAX 255  /* what the cache keeps (gw_cache_index_put) */
/* Starts a fetch; f->done is called from the loop when it ends (never
 * from here). Returns -1 with f->error when the URL is refused at once. */
int gw_fetch_start(struct gw *gw, struct gw_fetch *f);
void gw_fetch_free(struct gw_fetch *f);  /* after done, or to cancel */
void gw_fetch_sock_event(struct gw *gw, int fd, uint32_t events);
void gw_fetch_timer(struct gw *gw);
void gw_fetch_fini(struct gw *gw);
/* From the loop, when GW_TAG_RESOLVE is readable: the hops that waited for
 * a lookup go on (gw_proxy_ready), each transfer started or ended with its
 * error. */
void gw_fetch_wake(struct gw *gw);

/* --- through the upstream proxy (gw_proxy.c) --- */
#define GW_TAG_RESOLVE 4ULL  /* the epoll tag of the lookups' eventfd */
struct proxy_chain;
/* Reads the upstream proxy from sbxrun's environment (none: nothing to do). */
int gw_proxy_init(struct gw *gw, struct sbx_err *err);
void gw_proxy_fini(struct gw *gw);
/* A new handle's options: the host's CA bundle ($SSL_CERT_FILE), no proxy. */
void gw_proxy_setup(struct gw *gw, void *curl);
/* Routes one checked hop to host:port: 0 when its transfer may start
 * (directly, or through the upstream proxy to an address sbxrun looked up
 * and vetted), 1 when it waits for that lookup (gw_fetch_wake goes on),
 * -1 with f->error. */
int gw_proxy_route(struct gw *gw, struct gw_fetch *f, const char *host, int port);
/* The next hop whose lookup ended, routed to the address it vetted (or
 * with f->error); NULL when none is left (gw_fetch_wake asks). */
struct gw_fetch *gw_proxy_ready(struct gw *gw);
/* Whether the socket libcurl opens for f may go to sa: NULL, or why not. */
const char *gw_proxy_socket_refusal(const struct gw_fetch *f, const struct sockaddr *sa);

/* --- the cache (gw_cache.c; the cache as a whole: pkgcache.h) --- */
/* The root: conf->cache_dir or the user's. Made 0700; shared: the system
 * cache root fills (0755, its files 0644). */
int gw_cache_open(const char *root, bool shared, struct gw_cache **out, struct sbx_err *err);
/* The size cap (bytes, 0: none) gw_cache_trim keeps. */
void gw_cache_cap(struct gw_cache *c, uint64_t max);
/* The system cache at dir (NULL or "none": none), looked up before this
 * one, read-only; ignored with a warning unless root owns it and nobody
 * else may write it. */
void gw_cache_system(struct gw_cache *c, const char *dir);
void gw_cache_close(struct gw_cache *c);
/* The same cache (the user's, without the system cache) for another
 * thread, or NULL. */
struct gw_cache *gw_cache_dup(const struct gw_cache *c);
/* An artifact by digest, from the system cache or the user's: 1 with *fd
 * open (verified against want; its last use recorded), 0 when missing;
 * damage found on disk removes the file and counts as missing. */
int gw_cache_artifact(struct gw_cache *c, const struct sri *want, int *fd, off_t *size);
/* A by-hash file of apt's (gw_deb.c): committed with the metadata
 * {"deb", GW_DEB_BYHASH_NAME, "", DIR}, DIR its HOST/PATH up to
 * "/by-hash/". Found as gw_cache_artifact finds a file, but only where the
 * metadata beside it records it so, for this very directory: never an
 * artifact (a .deb, a wheel, a tarball) by its digest, never another
 * archive's index. 1 with *fd, or 0. */
#define GW_DEB_BYHASH_NAME "(index)"
int gw_cache_deb_byhash(struct gw_cache *c, const struct sri *want, const char *dir, int *fd, off_t *size);
/* The lock of one digest, shared by every sbxrun process of the user: 1
 * with *fd held, 0 when another holds it (ask again later), -1 error. */
int gw_cache_lock(struct gw_cache *c, const struct sri *want, int *fd);
/* A temporary file beside the artifact, removed unless committed. */
int gw_cache_tmp(struct gw_cache *c, const struct sri *want, int *fd, char **name);
/* What an artifact is, kept beside it for `sbxrun cache ls`. */
struct gw_cache_meta {
	const char *eco, *name, *version, *file;
};
/* The metadata (m may be NULL), then fsync, rename into place, fsync of
 * the directory. */
int gw_cache_commit(struct gw_cache *c, const struct sri *want, int fd, const char *tmp,
		    const struct gw_cache_meta *m);
/* After a commit (and once its waiters have the file open): past the cap,
 * the least recently used are evicted, unless another process is at it. */
void gw_cache_trim(struct gw_cache *c);
void gw_cache_discard(struct gw_cache *c, const char *tmp);
/* An anonymous file (no name: it goes with its last fd) in the cache's
 * file system, for a body too large to hold in memory. 0 or -1 (errno). */
int gw_cache_scratch(struct gw_cache *c, int *fd);
/* Index documents: gw_cache.h. */
/* The table of a Debian Packages index (debidx.h) by the SHA256 of the
 * Packages file: the system cache's, else the user's, mapped and checked:
 * 1 with *p and *len (munmap them), 0 when there is none, -1 when the one
 * there failed its check (why says how; the user's is removed, to be
 * built again). */
int gw_cache_debidx_get(struct gw_cache *c, const unsigned char src[32], void **p, size_t *len, char *why,
			size_t why_size);
/* Stores a table (temporary file, fsync, rename), with key (the Packages
 * index's HOST/PATH) in its metadata; safe from a thread of its own. */
int gw_cache_debidx_put(struct gw_cache *c, const unsigned char src[32], const void *p, size_t len,
			const char *key);

/* --- the tables of Debian Packages indexes (gw_debidx.c) --- */
#define GW_TAG_DEBIDX 3ULL  /* the epoll tag of the worker's eventfd */
/* Takes in the table of the Packages index at key (HOST/PATH) whose file
 * as fetched has SHA256 src from the cache: 1, or 0 when the cache has
 * none to trust (then gw_debidx_build it). The table is bound to key: it
 * is consulted for the .debs below key's archive root alone
 * (deb_index_root), so key must be where those bytes came from (fetched
 * at that path, or cached as that path's: never a digest's file asked
 * under another archive's path). */
int gw_debidx_load(struct gw *gw, const char *key, const unsigned char src[32]);
/* Builds that table on the worker thread from the file (copied) and
 * stores it in the cache; gw_deb_wake is called once it is in. */
void gw_debidx_build(struct gw *gw, const char *key, const unsigned char src[32], const char *body,
		     size_t len);
/* Whether a table is still being built. */
bool gw_debidx_busy(const struct gw *gw);
/* The entry of the .deb at HOST/PATH, the newest index's first: 1 or 0. */
int gw_debidx_find(const struct gw *gw, const char *key, struct debidx_entry *e);
/* From the loop, when the worker's eventfd is readable: the tables built
 * are taken in. */
void gw_debidx_reap(struct gw *gw);
void gw_debidx_free(struct gw *gw);
/* gw_deb.c: the .debs that waited for tables are served (from the loop). */
void gw_deb_wake(struct gw *gw);

/* --- index documents revalidated in the background (gw_reval.c) --- */
/* What the foreground fetch of an index would ask: eco, upstream and key
 * as the cache has them, the URL, Accept, the cached copy's validators, the cap. */
struct gw_reval_req {
	const char *eco, *upstream, *key, *url, *accept, *etag;
	uint64_t max;
};
/* Asks upstream for a stale index document, served meanwhile: a 304
 * renews the cached copy, a 200 replaces it, a failure leaves it. One at
 * a time per document, a bounded number in all (beyond: not asked now;
 * the next request past index_max_age asks). An "index-revalidated" event
 * tells each end. */
void gw_revalidate(struct gw *gw, const struct gw_reval_req *r);
/* That event, for a revalidation in the foreground too (status 0: no
 * answer). */
void gw_event_revalidated(struct gw *gw, const char *eco, const char *key, long status, int64_t ms,
			  bool background);
void gw_reval_fini(struct gw *gw);

/* --- artifacts (gw_artifact.c): one upstream download per digest --- */
struct gw_artifact_req {
	const char *eco, *name, *version;
	const char *url;       /* upstream */
	struct sri want;
	uint64_t max;
	bool plain_http;       /* as struct gw_fetch's */
	bool sum;              /* answer the digest in sum_algo of the verified
				* bytes, in hex, not the file (Maven's .sha1) */
	enum sri_algo sum_algo;
};
/* Serves the artifact to the client from the cache, or fetches it once
 * (joining a download this process or another sbxrun process has under
 * way), verifies, caches, then serves; failures answer the client. */
void gw_artifact_get(struct gw *gw, struct gw_client *cl, const struct gw_artifact_req *r);
void gw_artifact_poll(struct gw *gw);  /* from the timer: waiting on other processes */
void gw_artifact_fini(struct gw *gw);

#endif
