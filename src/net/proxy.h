/* proxy.h - the host side of `packages` egress: an allow-listing HTTP proxy
 * (CONNECT and absolute-form plain HTTP) driven from the supervisor's loop. */
#ifndef SBX_PROXY_H
#define SBX_PROXY_H

#include <stdbool.h>
#include <stdint.h>

#include "base/config.h"
#include "base/err.h"
#include "base/policy.h"
#include "net/cred.h"
#include "net/hostmatch.h"
#include "net/tlsca.h"

/* Who a connection comes from: its address family, then the address (an
 * IPv6 address's /64, a v4-mapped address as IPv4). */
#define PROXY_PEER_KEY 17

struct sbx_proxy;

/* A service behind the proxy's door for one reserved host name (the package
 * gateway, src/gateway/): a plain-HTTP request for http://HOST/ is handed
 * over whole, before the allow list, and the service runs in the proxy's
 * loop (its pollfd sits in the proxy's epoll). The proxy frees it. */
struct proxy_local {
	const char *host;  /* canonical; NULL: none */
	void *ctx;
	int pollfd;        /* readable when dispatch has work */
	void (*dispatch)(void *ctx);
	/* fd: the client's socket (non-blocking), its own now; peer: who it
	 * is (PROXY_PEER_KEY bytes, for clients_of); head[0..len): what was
	 * read, the complete request head first. Once answered, the service
	 * closes fd or gives it back to door (proxy_keep). */
	void (*take)(void *ctx, struct sbx_proxy *door, int fd, const unsigned char *peer, const char *head,
		     size_t len);
	/* NULL, or whether a plain-HTTP request for another host that passed
	 * the allow list is the service's too (apt's, for the gateway) */
	bool (*claims)(void *ctx, const char *host, int port);
	/* NULL, or how many of the connections taken from peer (NULL: from
	 * anyone) are still open: they count toward the proxy's max_per_peer
	 * and max_conns */
	size_t (*clients_of)(void *ctx, const unsigned char *peer);
	void (*free)(void *ctx);
};

struct sbx_proxy_conf {
	const char *profile_name;         /* for messages */
	const struct sbx_strlist *allow;  /* patterns and @apt/@npm/@pypi */
	struct hostmatch_sets sets;       /* the image's sets */
	int events_fd;                    /* -1, or where JSON-lines events go */
	/* Holding the line against many connections (0: the default). */
	unsigned max_conns;               /* open at once (128), the local service's
					   * included; past it the oldest idle one is
					   * shed, else the new one refused */
	bool queue_when_full;             /* a sandbox's own door (its one client):
					   * past max_conns, new connections wait in
					   * the listen backlog, and only a connection
					   * that has had its answer is shed */
	unsigned max_per_peer;            /* per source address (an IPv6 /64); 0: no cap */
	unsigned head_timeout_ms;         /* to send a complete request head (10 s) */
	const char *auth;                 /* NULL, or the secret a Proxy-Authorization
					   * must prove (net/proxy_auth.h) */
	const struct hostmatch_list *hosts; /* the network plan's list, compiled (copied);
					     * NULL: allow and the sets above */
	const struct sbx_policy *policy;  /* NULL, or the ceiling read at start (proxy_set_policy) */
	struct proxy_local local;         /* .host NULL: none; freed by the proxy,
					   * even when proxy_new fails */
	/* [credentials] (net/cred.h) and the CA a CONNECT to a bound host is
	 * answered under (net/tlsca.h); NULL: none. Both outlive the proxy. */
	const struct sbx_creds *cred;
	struct sbx_tlsca *tlsca;
};

/* For the --json record. */
struct sbx_proxy_counters {
	uint64_t allowed;     /* connections let through */
	uint64_t refused;     /* requests refused (403, 400, 502...) */
	uint64_t bytes_up;    /* sandbox to upstream */
	uint64_t bytes_down;  /* upstream to sandbox */
	uint64_t shed;        /* idle connections closed to make room */
	uint64_t turned_away; /* connections closed at once: no room */
	uint64_t open;        /* connections open now */
};

/* How long a connection the local service kept open may wait for its next
 * request (the service says so in Keep-Alive: timeout=). */
#define PROXY_KEEPALIVE_MS 10000

/* Sets SIGPIPE to SIG_IGN for the process (splice cannot suppress it):
 * reset it to SIG_DFL in any child before exec.
 * listen_fd: the listening TCP socket the sandbox made on its 127.0.0.1;
 * the proxy takes it over (non-blocking, closed by proxy_free). */
int proxy_new(const struct sbx_proxy_conf *conf, int listen_fd, struct sbx_proxy **out,
	      struct sbx_err *err);
/* An epoll fd, readable when proxy_dispatch has work. */
int proxy_pollfd(struct sbx_proxy *p);
/* Handles every ready event without blocking. Returns 0; -1 only if the
 * proxy's own epoll fails (nothing from inside the sandbox makes it fail). */
int proxy_dispatch(struct sbx_proxy *p);
/* From the local service: fd, answered, stays open (HTTP/1.1 keep-alive);
 * its next request is read and checked here as a new connection's is,
 * next[0..len) the bytes of it already read. The proxy owns fd now. */
void proxy_keep(struct sbx_proxy *p, int fd, const unsigned char *peer, const char *next, size_t len);
void proxy_counters(const struct sbx_proxy *p, struct sbx_proxy_counters *out);

/* Live rules (`sbxrun net allow|deny`, docs/egress.md). An allow is one
 * more rule above the allow list and below the rest: it never lifts a live
 * deny, the package rules' withholding, the administrator's policy or an
 * address class (an approved host is dialled as an unlisted one would be:
 * no loopback, private, link-local or metadata address, nor the host's
 * own). A deny applies to every new connection at once and cuts the open
 * tunnels and relayed requests it names. */
enum proxy_rule { PROXY_ALLOW_ONCE, PROXY_ALLOW_SESSION, PROXY_DENY };
/* entry: HOST or HOST:PORT (no *.DOMAIN, no @set); who: for the event
 * ("net allow", a user's name). An allow that could never take effect is
 * refused with why. Returns 0, or -1 with err. */
int proxy_rule_add(struct sbx_proxy *p, const char *entry, enum proxy_rule kind, const char *who,
		   struct sbx_err *err);
/* Calls fn for each rule the proxy holds now: kind "allow" (the profile's
 * list and package sets, expanded), "allow-once", "allow-session",
 * "deny", "policy" (an administrator's [network] allow ceiling, FILE: ENTRY). */
void proxy_rules_each(const struct sbx_proxy *p, void (*fn)(void *arg, const char *kind, const char *entry),
		      void *arg);
/* The administrator's ceiling, read again (policy.ini changed): every
 * file's [network] allow, expanded with the image's sets, must let a host
 * through besides the allow list or a live allow; a file capping egress
 * below 'packages' lets nothing through. Open connections no longer
 * allowed are cut; the change is an event ("policy"). NULL: no ceiling. */
int proxy_set_policy(struct sbx_proxy *p, const struct sbx_policy *pol, struct sbx_err *err);
/* Asking ([network] ask, a session): a CONNECT or plain request to a host
 * that no rule allows or refuses is held, with no answer to the client,
 * for timeout_ms (0: refused at once, as without ask), and listed by
 * proxy_pending_each; a rule added (proxy_rule_add) or a policy read
 * decides the held connections at once; past the deadline it is the same
 * 403 as without ask. Hosts an approval could never reach are refused at
 * once, never held. */
void proxy_set_ask(struct sbx_proxy *p, uint64_t timeout_ms);
void proxy_pending_each(const struct sbx_proxy *p,
			void (*fn)(void *arg, uint64_t id, const char *host, int port, uint64_t waited_ms,
				   uint64_t left_ms),
			void *arg);
/* The allow list read again (the profile changed): hosts, a network plan's
 * compiled list, is copied and applies to every new connection; a change
 * is an event ("rules": {"allow": the list, "by": by}). What is open stays
 * open (a live deny or the policy cuts it). */
void proxy_set_hosts(struct sbx_proxy *p, const struct hostmatch_list *hosts, const char *by);
/* Says on the event stream (and stderr, once per message) that a policy
 * file could not be read again and the rules held are kept. */
void proxy_policy_error(struct sbx_proxy *p, const char *msg);
/* One "policy" event: what now holds and why (error may be NULL). */
void proxy_note_policy(struct sbx_proxy *p, const char *what, const char *error);
/* The local service the proxy hands its host to (conf.local). */
const struct proxy_local *proxy_service(const struct sbx_proxy *p);
void proxy_free(struct sbx_proxy *p);

#endif
