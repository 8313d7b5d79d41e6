/* askterm.c - the proxy's held requests asked on the caller's terminal
 * (askterm.h). One question at a time, the oldest held first; each key is
 * one live rule, named in the question as `session ls --json` names it. */
#define _GNU_SOURCE
#include "sandbox/askterm.h"

#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/profwrite.h"
#include "base/util.h"

struct answer {
	char key;
	enum proxy_rule kind;
};

static const struct answer answers[] = {
	{ 'o', PROXY_ALLOW_ONCE },
	{ 's', PROXY_ALLOW_SESSION },
	{ 'n', PROXY_DENY },
	{ 'a', PROXY_ALLOW_SESSION }, /* and the profile written */
};

struct find {
	const char *entry;     /* held still? */
	bool found;
	char first[300];       /* the oldest held, as HOST:PORT */
	uint64_t left_ms;
};

static void entry_of(const char *host, int port, char *out, size_t size)
{
	snprintf(out, size, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
}

static void seen(void *arg, uint64_t id, const char *host, int port, uint64_t waited_ms, uint64_t left_ms)
{
	struct find *f = arg;
	char e[300];

	(void)id;
	(void)waited_ms;
	entry_of(host, port, e, sizeof(e));
	if (f->entry && strcmp(e, f->entry) == 0)
		f->found = true;
	if (!f->first[0]) {
		snprintf(f->first, sizeof(f->first), "%s", e);
		f->left_ms = left_ms;
	}
}

/* The question, naming the rule each key makes; "always" only where the
 * profile is the user's own. */
static void ask(struct sbx_askterm *a, struct sbx_pty_relay *relay, const char *entry, uint64_t left_ms)
{
	char line[1600], always[700] = "";
	struct sbx_err err;

	snprintf(a->entry, sizeof(a->entry), "%s", entry);
	free(steal_ptr(a->always));
	if (a->profile && profwrite_own(a->profile, &a->always, &err) == 0)
		snprintf(always, sizeof(always), "  [a] allow-session %s and allow = %s in %s", entry, entry, a->always);
	snprintf(line, sizeof(line),
		 "sbxrun: the sandbox asks to reach %s (no rule allows or refuses it; refused in %llu s): "
		 "[o] allow-once %s  [s] allow-session %s  [n] deny %s%s ? ",
		 entry, (unsigned long long)(left_ms + 999) / 1000, entry, entry, entry, always);
	pty_relay_ask(relay, line, a->always ? "osna" : "osn");
}

static void apply(struct sbx_askterm *a, const struct askterm_source *src, char key)
{
	struct sbx_err err;

	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		if (answers[i].key != key)
			continue;
		if (src->decide(src->ctx, a->entry, answers[i].kind, "the terminal", &err) < 0)
			log_warn("%s", err.msg);
		else if (key == 'a' && a->always &&
			 profwrite_allow(a->always, "the answer 'always' on the terminal", a->entry, &err) < 0)
			log_warn("always: %s", err.msg);
	}
	a->entry[0] = '\0';
}

void askterm_step(struct sbx_askterm *a, const struct askterm_source *src, struct sbx_pty_relay *relay)
{
	char key = pty_relay_answer(relay);
	struct find f = { .entry = a->entry[0] ? a->entry : NULL };

	if (key && a->entry[0])
		apply(a, src, key);
	src->each(src->ctx, seen, &f);
	if (relay->asking && !f.found) {
		pty_relay_cancel(relay, "(decided elsewhere, or its time ran out: not asked any more)");
		a->entry[0] = '\0';
	}
	if (!relay->asking && f.first[0] && pty_relay_can_ask(relay))
		ask(a, relay, f.first, f.left_ms);
}

static void proxy_each(void *ctx, askterm_seen_fn fn, void *arg)
{
	proxy_pending_each(ctx, fn, arg);
}

static int proxy_decide(void *ctx, const char *entry, enum proxy_rule kind, const char *who, struct sbx_err *err)
{
	return proxy_rule_add(ctx, entry, kind, who, err);
}

struct askterm_source askterm_proxy(struct sbx_proxy *px)
{
	return (struct askterm_source){ proxy_each, proxy_decide, px };
}

void askterm_free(struct sbx_askterm *a)
{
	free(steal_ptr(a->always));
}
