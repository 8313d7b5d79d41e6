/* session_askterm.c - a session's held requests asked on its client's
 * terminal (session_askterm.h). The client reads them through the control
 * socket every ASK_EVERY_MS (as `sbxrun mcp` does, mcp_ask.c); an answer is
 * sent at once, and the session decides the held connection within 50 ms
 * of receiving it (proxy_live.c). */
#define _GNU_SOURCE
#include "session/session_askterm.h"

#include <json-c/json.h>
#include <string.h>

#include "base/util.h"
#include "session/session_client.h"

#define ASK_EVERY_MS 100

static void held_each(void *ctx, askterm_seen_fn fn, void *arg)
{
	struct session_askterm *a = ctx;
	struct json_object *req = json_object_new_object(), *reply = NULL, *list;
	struct sbx_err err;

	json_object_object_add(req, "op", json_object_new_string("pending"));
	if (session_ask(a->name, req, &reply, &err) < 0)
		return;
	if (json_object_object_get_ex(reply, "pending", &list) && json_object_is_type(list, json_type_array))
		for (size_t i = 0; i < json_object_array_length(list); i++) {
			struct json_object *p = json_object_array_get_idx(list, i), *id = NULL, *h, *port, *w, *l;
			json_object_object_get_ex(p, "id", &id);
			if (json_object_object_get_ex(p, "host", &h) && json_object_object_get_ex(p, "port", &port) &&
			    json_object_object_get_ex(p, "waited_ms", &w) && json_object_object_get_ex(p, "left_ms", &l))
				fn(arg, id ? (uint64_t)json_object_get_int64(id) : 0, json_object_get_string(h), json_object_get_int(port),
				   (uint64_t)json_object_get_int64(w), (uint64_t)json_object_get_int64(l));
		}
	json_object_put(reply);
}

static int decide(void *ctx, const char *entry, enum proxy_rule kind, const char *who, struct sbx_err *err)
{
	struct session_askterm *a = ctx;
	struct json_object *req = json_object_new_object(), *reply = NULL;

	json_object_object_add(req, "op", json_object_new_string("net"));
	json_object_object_add(req, "action", json_object_new_string(kind == PROXY_DENY ? "deny" : "allow"));
	json_object_object_add(req, "host", json_object_new_string(entry));
	json_object_object_add(req, "for", json_object_new_string(kind == PROXY_ALLOW_ONCE ? "once" : "session"));
	json_object_object_add(req, "by", json_object_new_string(who));
	if (session_ask(a->name, req, &reply, err) < 0)
		return -1;
	json_object_put(reply);
	return 0;
}

void session_askterm_init(struct session_askterm *a, const char *name, bool tty)
{
	_cleanup_free_ char *ask = tty ? session_info_string(name, "ask") : NULL;

	*a = (struct session_askterm){ .name = name };
	if (!ask || strcmp(ask, "yes") != 0)
		return;
	a->on = true;
	a->profile = session_profile(name);
	a->term.profile = a->profile;
}

int session_askterm_wait_ms(const struct session_askterm *a)
{
	if (!a->on)
		return -1;
	uint64_t now = now_ms();
	return a->next_ms > now ? (int)(a->next_ms - now) : 0;
}

void session_askterm_step(struct session_askterm *a, struct sbx_pty_relay *relay)
{
	struct askterm_source src = { held_each, decide, a };
	uint64_t now = now_ms();

	if (!a->on || relay->master < 0)
		return;
	/* an answer is sent at once; the held list is read on its tick */
	if (now < a->next_ms && !relay->answer)
		return;
	if (now >= a->next_ms)
		a->next_ms = now + ASK_EVERY_MS;
	askterm_step(&a->term, &src, relay);
}

void session_askterm_free(struct session_askterm *a)
{
	askterm_free(&a->term);
	free(steal_ptr(a->profile));
}
