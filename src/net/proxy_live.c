/* proxy_live.c - what changes while the proxy runs: live rules (`sbxrun
 * net allow|deny`), the administrator's policy and the allow list read
 * again, asking (held connections, their deadline's tick). Each change is
 * an event; a tightening cuts the open connections it names, and every
 * held connection is decided again at once. The rules' own logic is
 * proxy_rules.c; the loop that acts on connections is proxy.c. */
#define _GNU_SOURCE
#include <sys/timerfd.h>

#include "base/log.h"
#include "base/util.h"
#include "net/proxy_conn.h"

static bool host_named(const struct conn *c)
{
	return c->state == C_RESOLVE || c->state == C_CONNECT || c->state == C_CHAIN || c->state == C_RELAY;
}

/* Closes what a tightening no longer lets through: open tunnels and
 * relayed requests alike (docs/egress.md, "Live rules"). */
static void cut_open(struct sbx_proxy *p)
{
	char buf[300];

	for (struct conn *c = p->conns; c; c = c->next) {
		if (!host_named(c))
			continue;
		const char *why = proxy_rules_refusal(&p->rules, c->host, c->req.port, buf, sizeof(buf));
		if (!why)
			continue;
		proxy_event_cut(&p->ev, c->host, c->req.port, why);
		proxy_conn_kill(p, c);
	}
	proxy_reap(p);
	proxy_cred_cut(p);
}

/* A rule changed: every held connection is decided again at once (an
 * allow lets it on, a deny or the policy refuses it, else it waits on). */
static void recheck_held(struct sbx_proxy *p)
{
	for (struct conn *c = p->conns; c; c = c->next)
		if (c->state == C_HELD)
			proxy_check_request(p, c);
}

int proxy_rule_add(struct sbx_proxy *p, const char *entry, enum proxy_rule kind, const char *who,
		   struct sbx_err *err)
{
	char text[320];

	if (proxy_rules_add(&p->rules, entry, kind, text, sizeof(text), err) < 0)
		return -1;
	proxy_event_rule(&p->ev, proxy_rules_kind_name(kind), text, who ? who : "?");
	if (kind == PROXY_DENY)
		cut_open(p);
	recheck_held(p);
	return 0;
}

void proxy_rules_each(const struct sbx_proxy *p, void (*fn)(void *arg, const char *kind, const char *entry),
		      void *arg)
{
	proxy_rules_list(&p->rules, fn, arg);
}

int proxy_set_policy(struct sbx_proxy *p, const struct sbx_policy *pol, struct sbx_err *err)
{
	char summary[1024];

	if (proxy_rules_set_policy(&p->rules, pol, summary, sizeof(summary), err) < 0)
		return -1;
	proxy_event_policy(&p->ev, summary, NULL);
	cut_open(p);
	recheck_held(p);
	return 0;
}

void proxy_set_hosts(struct sbx_proxy *p, const struct hostmatch_list *hosts, const char *by)
{
	char summary[2048];

	if (!proxy_rules_set_hosts(&p->rules, hosts, summary, sizeof(summary)))
		return;
	proxy_event_hosts(&p->ev, summary, by);
	recheck_held(p);
}

void proxy_set_ask(struct sbx_proxy *p, uint64_t timeout_ms)
{
	p->ask_ms = timeout_ms;
	/* held connections are decided within 50 ms of an answer (the answer
	 * acts at once) and of their deadline (the timer ticks every 50 ms) */
	struct itimerspec its = { { 0, timeout_ms ? 50000000 : 0 }, { 0, timeout_ms ? 50000000 : 0 } };
	if (!timeout_ms)
		its = (struct itimerspec){ { 1, 0 }, { 1, 0 } };
	timerfd_settime(p->tfd, 0, &its, NULL);
	if (!timeout_ms)
		for (struct conn *c = p->conns; c; c = c->next)
			if (c->state == C_HELD)
				proxy_refuse(p, c, 403, "no one to ask any more");
}

void proxy_pending_each(const struct sbx_proxy *p,
			void (*fn)(void *arg, uint64_t id, const char *host, int port, uint64_t waited_ms,
				   uint64_t left_ms),
			void *arg)
{
	int64_t now = now_ms();

	for (const struct conn *c = p->conns; c; c = c->next)
		if (c->state == C_HELD)
			fn(arg, c->held_id, c->host, c->req.port, (uint64_t)(now - c->held_since),
			   c->deadline > now ? (uint64_t)(c->deadline - now) : 0);
}

void proxy_policy_error(struct sbx_proxy *p, const char *msg)
{
	if (!proxy_rules_policy_error_new(&p->rules, msg))
		return;
	proxy_event_policy(&p->ev, "unchanged (the rules held before are kept)", msg);
	log_warn("policy not read again, the rules held before are kept: %s", msg);
}

void proxy_note_policy(struct sbx_proxy *p, const char *what, const char *error)
{
	proxy_event_policy(&p->ev, what, error);
}
