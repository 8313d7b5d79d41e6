/* proxy_rules.h - what the egress proxy decides a host by: the profile's
 * allow list, the live rules (`sbxrun net allow|deny`) and the
 * administrator's ceilings (policy.ini's [network]), as one value the
 * proxy's loop consults and changes. No connection state lives here. */
#ifndef SBX_PROXY_RULES_H
#define SBX_PROXY_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "base/hostentry.h"
#include "base/policy.h"
#include "net/hostmatch.h"
#include "net/proxy.h"

/* A live rule (net allow/deny). */
struct proxy_live_rule {
	struct hostentry e;
	enum proxy_rule kind;
	bool used;                    /* an allow-once that let its connection through */
};

/* One policy file's [network] ceiling. */
struct proxy_ceiling {
	char *path;
	bool none;                    /* egress capped below packages */
	bool listed;                  /* [network] allow set: l is the ceiling */
	struct hostmatch_list l;
	char *text;                   /* for proxy_rules_each */
};

struct proxy_rules {
	struct hostmatch_list allow;  /* the profile's, sets expanded */
	struct hostmatch_sets sets;   /* the image's, for the policy's @sets */
	struct proxy_live_rule *live;
	size_t nlive;
	struct proxy_ceiling ceil[SBX_POLICY_MAX_FILES];
	size_t nceil;
	char *policy_error;           /* the last one told */
};

/* hosts: the network plan's compiled list (copied), or NULL to compile
 * allow with sets. Returns 0, or -1 with err (r then holds nothing). */
int proxy_rules_init(struct proxy_rules *r, const struct hostmatch_list *hosts, const struct sbx_strlist *allow,
		     const struct hostmatch_sets *sets, struct sbx_err *err);
void proxy_rules_free(struct proxy_rules *r);

/* Why canon:port is refused before the allow list is read (a live deny,
 * a policy ceiling), into buf; NULL if neither refuses it. */
const char *proxy_rules_refusal(const struct proxy_rules *r, const char *canon, int port, char *buf, size_t size);
/* The allow list's verdict on canon:port, with g filled; a live allow
 * lifts NOT_LISTED and BAD_PORT to OK with an empty grant (an approved host
 * is dialled as an unlisted one would be) and spends an allow-once. Call
 * after proxy_rules_refusal said NULL. */
enum hostmatch_result proxy_rules_check(struct proxy_rules *r, const char *canon, int port,
					struct hostmatch_grant *g);
/* Why no approval could ever reach host (loopback names, sbxrun's own,
 * an address class sbxrun never dials), or NULL: asking about it would be
 * a question no answer can lift. */
const char *proxy_rules_unapprovable(const char *host, char *buf, size_t size);

/* Adds a live rule. entry: HOST or HOST:PORT. An allow that could never
 * take effect is refused with why. On success text holds the rule as
 * events and listings print it. Returns 0, or -1 with err. */
int proxy_rules_add(struct proxy_rules *r, const char *entry, enum proxy_rule kind, char *text, size_t size,
		    struct sbx_err *err);
const char *proxy_rules_kind_name(enum proxy_rule k);
/* As proxy_rules_each in proxy.h. */
void proxy_rules_list(const struct proxy_rules *r, void (*fn)(void *arg, const char *kind, const char *entry),
		      void *arg);

/* Replaces the allow list with hosts (a network plan's, compiled again:
 * the profile read again), copied; summary gets the new list as one line.
 * Whether it differs from the list held before. */
bool proxy_rules_set_hosts(struct proxy_rules *r, const struct hostmatch_list *hosts, char *summary, size_t size);
/* Replaces the ceilings with pol's (NULL: none); summary gets what each
 * file caps, for the event. Returns 0, or -1 with err (the old ones kept). */
int proxy_rules_set_policy(struct proxy_rules *r, const struct sbx_policy *pol, char *summary, size_t size,
			   struct sbx_err *err);
/* Whether msg is a policy error not told yet (it is remembered as told). */
bool proxy_rules_policy_error_new(struct proxy_rules *r, const char *msg);

#endif
