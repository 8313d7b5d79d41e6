/* proxy_conn.h - the egress proxy's own state, shared by its files only
 * (proxy.c, the loop; proxy_admit.c, who gets a connection); never
 * included outside src/net/proxy*.c. */
#ifndef SBX_PROXY_CONN_H
#define SBX_PROXY_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "net/hostmatch.h"
#include "net/httpreq.h"
#include "net/proxy.h"
#include "net/proxy_chain.h"
#include "net/proxy_event.h"
#include "net/proxy_rules.h"
#include "net/relay.h"
#include "net/resolver.h"
#include "net/tlsmitm.h"

/* Each relayed connection holds two sockets and two pipes. */
#define MAX_CONNS 128
#define HEAD_TIMEOUT_MS 10000
/* Accepts per wake-up, so a stream of connections cannot starve the rest. */
#define ACCEPT_BATCH 64
#define RESOLVE_TIMEOUT_MS 20000
#define CONNECT_TIMEOUT_MS 10000
#define IDLE_TIMEOUT_MS 300000
#define DRAIN_TIMEOUT_MS 2000

/* epoll tags: a conn pointer with the low bits naming the side. */
enum { TAG_CLIENT = 0, TAG_UPSTREAM = 1 };
#define TAG_LISTEN 1ULL
#define TAG_RESOLVER 2ULL
#define TAG_TIMER 3ULL
#define TAG_LOCAL 5ULL

enum conn_state { C_HEAD, C_HELD, C_RESOLVE, C_CONNECT, C_CHAIN, C_RELAY, C_DRAIN, C_DEAD };

#define CHAIN_ANSWER_MAX 4096

struct conn {
	struct conn *next;
	uint64_t id;                  /* in order of arrival: the lowest is the oldest */
	unsigned char peer[PROXY_PEER_KEY];       /* family, then the address (IPv6: its /64) */
	enum conn_state state;
	int cfd, ufd;
	char *head;
	size_t head_len;
	struct httpreq req;
	char host[HOSTMATCH_MAX + 8];
	struct hostmatch_grant grant;
	struct resolver_result res;   /* the vetted addresses */
	struct resolver_result dial;  /* what to connect to: those, or the upstream proxy */
	int dial_port;
	size_t next_addr;
	char target[300];             /* chained: the CONNECT target, else "" */
	char *answer;                 /* chained: the upstream proxy's answer */
	size_t answer_len;
	struct relay_dir up, down;
	uint64_t bytes_up, bytes_down;
	int64_t deadline;
	bool kept;                    /* back from the local service, between requests */
	int64_t held_since;           /* C_HELD: when it was held */
	uint64_t held_id;             /* C_HELD: its number, new each time one is held */
	const char *cred_var;         /* plain HTTP: the binding whose secret it carries */
};

struct sbx_proxy {
	struct proxy_events ev;
	struct proxy_rules rules;     /* allow list, live rules, policy ceilings */
	uint64_t ask_ms;              /* 0: refuse what no rule allows; else hold it this long */
	uint64_t held_seq;            /* the last held_id given */
	struct sbx_resolver *resolver;
	struct proxy_chain chain;
	int epfd, lfd, tfd;
	struct conn *conns;
	size_t nconns;                /* in the list, the dead not yet reaped included */
	size_t live;
	uint64_t next_id;
	unsigned max_conns, max_per_peer, head_timeout_ms;
	bool queue;                   /* full: new connections wait in the backlog */
	bool paused;                  /* not accepting: full (queue) */
	char *auth;
	struct proxy_local local;
	struct sbx_proxy_counters count;
	const struct sbx_creds *cred; /* [credentials], or NULL */
	struct sbx_tlsmitm *mitm;     /* their HTTPS side (net/tlsmitm.h), or NULL */
};

/* proxy_cred.c: credentials (net/cred.h). The gate: false when c carries
 * a placeholder where it does not belong (why says so; the event is
 * told); a plain request to a bound host gets the secret in its head. */
bool proxy_cred_gate(struct sbx_proxy *p, struct conn *c, char *why, size_t size);
/* c allowed and connected: a CONNECT to a bound host has its sockets
 * handed to the TLS relay after ok[0..len) and is killed (1), or -1 with
 * *why when it cannot be; else 0, the relay starts (a plain request that
 * carries a secret is told as used). */
int proxy_cred_start(struct sbx_proxy *p, struct conn *c, const char *ok, size_t len, const char **why);
/* A tightening: the brokered connections it no longer lets through end. */
void proxy_cred_cut(struct sbx_proxy *p);

/* Closes c's sockets now; it is freed when the batch of events is done. */
void proxy_conn_kill(struct sbx_proxy *p, struct conn *c);
/* Frees the connections killed since the last call. */
void proxy_reap(struct sbx_proxy *p);
/* Answers c with status and why (an event, and a line on stderr), then
 * lingers for the client's end. */
void proxy_refuse(struct sbx_proxy *p, struct conn *c, int status, const char *why);
/* Decides c's request by the rules: on to the local service, refused,
 * held (asking), or on to the lookup and the connect. */
void proxy_check_request(struct sbx_proxy *p, struct conn *c);

/* proxy_admit.c: who a connection comes from, and whether there is room
 * for it (shedding idle ones if need be). */
void proxy_peer_key(const struct sockaddr_storage *ss, unsigned char key[PROXY_PEER_KEY]);
bool proxy_room_for(struct sbx_proxy *p, const unsigned char *peer);
/* A paused door (queue, full): whether a connection could be taken now. */
bool proxy_may_resume(struct sbx_proxy *p);

#endif
