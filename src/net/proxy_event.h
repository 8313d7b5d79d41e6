/* proxy_event.h - what the egress proxy tells: JSON-lines events, one
 * stderr line per refused host, and the text of its refusals. */
#ifndef SBX_PROXY_EVENT_H
#define SBX_PROXY_EVENT_H

#include <stddef.h>
#include <stdint.h>

struct proxy_events {
	char *profile;
	int fd;             /* -1: no events file */
	char **refused;     /* hosts already named on stderr */
	size_t nrefused;
};

void proxy_event_init(struct proxy_events *ev, const char *profile, int fd);
/* One event line on fd (-1: none): o, with "time" and "event" = kind added;
 * takes o. Shared by the proxy, the DNS stub and the package gateway. */
struct json_object;
void proxy_event_write(int fd, struct json_object *o, const char *kind);
void proxy_event_fini(struct proxy_events *ev);
/* decision: "allowed" or "refused"; a refusal is also told on stderr once
 * per host. host "" stands for a request too malformed to name one. */
void proxy_event_decision(struct proxy_events *ev, const char *host, int port, const char *decision,
			  const char *reason);
void proxy_event_close(struct proxy_events *ev, const char *host, int port, uint64_t up, uint64_t down);
/* The DNS stub answered a lookup of name (type "A", "AAAA", ...) with
 * answer ("" for none); rcode 0 is NOERROR; left_out: lookups before this
 * one that were not told (over the rate). */
void proxy_event_dns(struct proxy_events *ev, const char *name, const char *type, const char *answer,
		     int rcode, uint64_t left_out);
/* The DNS stub dropped dropped queries over its rate (total: so far). */
void proxy_event_dns_limit(struct proxy_events *ev, uint64_t dropped, uint64_t total, unsigned rate);
/* A live rule added (rule: "allow-once", "allow-session", "deny") by whom. */
void proxy_event_rule(struct proxy_events *ev, const char *rule, const char *entry, const char *by);
/* An open connection closed because a rule no longer lets it through. */
void proxy_event_cut(struct proxy_events *ev, const char *host, int port, const char *reason);
/* The administrator's policy read again: what it says now, or the error
 * that kept the rules held before. */
void proxy_event_policy(struct proxy_events *ev, const char *what, const char *error);
/* A brokered credential: var's secret put on a request to host
 * ("used"), or a request carrying its placeholder refused ("refused").
 * Only the fd is touched: safe from the TLS relay's threads. */
void proxy_event_credential(int fd, const char *var, const char *host, int port, const char *decision);
/* A decision event alone (no stderr line): safe from another thread. */
void proxy_event_decision_fd(int fd, const char *host, int port, const char *decision, const char *reason);
/* Formats the HTTP error response; returns its length. */
int proxy_event_response(const struct proxy_events *ev, char *buf, size_t size, int status,
			 const char *host, const char *why);

/* The allow list set again: {"allow": "a.org b.org:8443 ...", "by": ...}. */
void proxy_event_hosts(struct proxy_events *ev, const char *allow, const char *by);

#endif
