/* mcp_ask.c - [network] ask for the MCP client's user (issue 42): a
 * connection the session holds is asked with elicitation/create (MCP
 * 2025-06-18) where the client declared the elicitation capability, and
 * the user's answer becomes the live rule it named; the tool
 * network_requests lists what is held, read-only. Approval comes only from
 * the client's user through an elicitation: no tool call of the agent's
 * can allow a host. With no one to ask, a held connection is refused at
 * its ask_timeout, as without ask (docs/mcp.md). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "mcp/mcp_job.h"
#include "mcp/mcp_server.h"
#include "session/session_client.h"

#define ASK_EVERY_MS 100
#define ID_PREFIX "sbxrun-ask-"

/* The user's choices: the live rule each makes, as net allow|deny names them. */
static const struct { const char *choice, *action, *duration; } choices[] = {
	{ "allow-once", "allow", "once" },
	{ "allow-session", "allow", "session" },
	{ "deny", "deny", NULL },
};

void mcp_ask_initialize(struct mcp_server *srv, struct json_object *params)
{
	struct json_object *caps, *e;

	srv->elicit = params && json_object_object_get_ex(params, "capabilities", &caps) &&
		      json_object_is_type(caps, json_type_object) &&
		      json_object_object_get_ex(caps, "elicitation", &e) && e;
}

/* The session's held connections, or NULL. */
static struct json_object *pending(struct mcp_server *srv)
{
	struct json_object *req = json_object_new_object(), *reply = NULL, *list;
	struct sbx_err err;

	json_object_object_add(req, "op", json_object_new_string("pending"));
	if (session_ask(srv->session, req, &reply, &err) < 0)
		return NULL;
	if (!json_object_object_get_ex(reply, "pending", &list) || !json_object_is_type(list, json_type_array)) {
		json_object_put(reply);
		return NULL;
	}
	json_object_get(list);
	json_object_put(reply);
	return list;
}

/* HOST:PORT of a held connection, and its number (0: none given) */
static uint64_t entry_of(struct json_object *p, char *out, size_t size)
{
	struct json_object *h = NULL, *port = NULL, *id = NULL;
	json_object_object_get_ex(p, "host", &h);
	json_object_object_get_ex(p, "id", &id);
	json_object_object_get_ex(p, "port", &port);
	const char *host = h ? json_object_get_string(h) : "?";
	snprintf(out, size, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port ? json_object_get_int(port) : 0);
	return id ? (uint64_t)json_object_get_int64(id) : 0;
}

static ssize_t asked_of(const struct mcp_server *srv, const char *entry)
{
	for (size_t i = 0; i < srv->nasked; i++)
		if (strcmp(srv->asked[i].entry, entry) == 0)
			return (ssize_t)i;
	return -1;
}

static void forget(struct mcp_server *srv, size_t i)
{
	srv->asked[i] = srv->asked[--srv->nasked];
}

/* One elicitation/create for entry: the message names the rule each
 * choice makes, as the terminal's question does. */
static void elicit(struct mcp_server *srv, const char *entry, uint64_t conn, int64_t left_ms)
{
	struct json_object *params = json_object_new_object(), *schema = json_object_new_object(),
			   *props = json_object_new_object(), *d = json_object_new_object(),
			   *e = json_object_new_array(), *req = json_object_new_array(), *msg = json_object_new_object();
	char text[1024], id[64];

	if (srv->nasked == MCP_MAX_ASKED)
		return;
	snprintf(text, sizeof(text),
		 "The sandbox asks to reach %s: no rule allows or refuses it, and it is refused in %lld s without an "
		 "answer. allow-once: the rule allow-once %s (one connection); allow-session: allow-session %s (until "
		 "the session ends); deny: deny %s (refused now, 403).",
		 entry, (long long)(left_ms + 999) / 1000, entry, entry, entry);
	for (size_t i = 0; i < ARRAY_SIZE(choices); i++)
		json_object_array_add(e, json_object_new_string(choices[i].choice));
	json_object_object_add(d, "type", json_object_new_string("string"));
	json_object_object_add(d, "title", json_object_new_string("Decision"));
	json_object_object_add(d, "enum", e);
	json_object_object_add(props, "decision", d);
	json_object_array_add(req, json_object_new_string("decision"));
	json_object_object_add(schema, "type", json_object_new_string("object"));
	json_object_object_add(schema, "properties", props);
	json_object_object_add(schema, "required", req);
	json_object_object_add(params, "message", json_object_new_string(text));
	json_object_object_add(params, "requestedSchema", schema);
	snprintf(id, sizeof(id), ID_PREFIX "%lld", (long long)++srv->ask_seq);
	srv->asked[srv->nasked].upto = conn;
	snprintf(srv->asked[srv->nasked].entry, sizeof(srv->asked[0].entry), "%s", entry);
	snprintf(srv->asked[srv->nasked++].id, sizeof(srv->asked[0].id), "%s", id);
	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "id", json_object_new_string(id));
	json_object_object_add(msg, "method", json_object_new_string("elicitation/create"));
	json_object_object_add(msg, "params", params);
	mcp_send(srv, msg);
}

void mcp_ask_check(struct mcp_server *srv, uint64_t now)
{
	if (!srv->elicit || !srv->cfg->net_ask || !srv->session || now < srv->next_ask_ms)
		return;
	srv->next_ask_ms = now + ASK_EVERY_MS;
	struct json_object *list = pending(srv);
	char entry[300];

	/* a dismissed question no longer held is forgotten */
	for (size_t i = 0; i < srv->nasked;) {
		bool held = false;
		for (size_t k = 0; list && k < json_object_array_length(list); k++) {
			entry_of(json_object_array_get_idx(list, k), entry, sizeof(entry));
			held |= strcmp(entry, srv->asked[i].entry) == 0;
		}
		if (held || srv->asked[i].id[0])
			i++;
		else
			forget(srv, i);
	}
	/* Each held connection is asked once: one question covers every
	 * connection to its HOST:PORT held while it is open; one held after a
	 * question was dismissed (a larger number than it covered) is asked
	 * anew. Numbers, not the entry's absence, tell a new connection from
	 * an old one, so a connection held again between two looks is not
	 * taken for the one already asked. */
	for (size_t k = 0; list && k < json_object_array_length(list); k++) {
		struct json_object *p = json_object_array_get_idx(list, k), *left = NULL;
		uint64_t conn = entry_of(p, entry, sizeof(entry));
		ssize_t i = asked_of(srv, entry);
		json_object_object_get_ex(p, "left_ms", &left);
		if (i >= 0 && srv->asked[i].id[0]) {
			srv->asked[i].upto = conn > srv->asked[i].upto ? conn : srv->asked[i].upto;
			continue;
		}
		if (i >= 0 && conn <= srv->asked[i].upto)
			continue;
		if (i >= 0)
			forget(srv, (size_t)i);
		elicit(srv, entry, conn, left ? json_object_get_int64(left) : 0);
	}
	json_object_put(list);
}

int mcp_ask_timeout(const struct mcp_server *srv, uint64_t now)
{
	if (!srv->elicit || !srv->cfg->net_ask || !srv->session)
		return -1;
	return srv->next_ask_ms <= now ? 0 : (int)(srv->next_ask_ms - now);
}

/* The user's answer as the live rule it names, through the session's
 * control socket (as `sbxrun net allow|deny`). */
static bool decide(struct mcp_server *srv, const char *entry, const char *choice)
{
	struct json_object *req = json_object_new_object(), *reply = NULL;
	struct sbx_err err;

	for (size_t i = 0; i < ARRAY_SIZE(choices); i++) {
		if (strcmp(choice, choices[i].choice) != 0)
			continue;
		json_object_object_add(req, "op", json_object_new_string("net"));
		json_object_object_add(req, "action", json_object_new_string(choices[i].action));
		json_object_object_add(req, "host", json_object_new_string(entry));
		if (choices[i].duration)
			json_object_object_add(req, "for", json_object_new_string(choices[i].duration));
		json_object_object_add(req, "by", json_object_new_string("the MCP client's user"));
		bool made = session_ask(srv->session, req, &reply, &err) == 0;
		if (!made)
			log_warn("mcp: %s", err.msg);
		json_object_put(reply);
		return made;
	}
	json_object_put(req);
	log_warn("mcp: the client answered %s with '%s', which is no choice: left to its timeout", entry, choice);
	return false;
}

void mcp_ask_response(struct mcp_server *srv, const struct mcp_msg *m)
{
	struct json_object *r, *action, *content, *decision;
	const char *id = m->id && json_object_is_type(m->id, json_type_string) ? json_object_get_string(m->id) : "";

	if (strncmp(id, ID_PREFIX, strlen(ID_PREFIX)) != 0)
		return;
	for (size_t i = 0; i < srv->nasked; i++) {
		if (strcmp(srv->asked[i].id, id) != 0)
			continue;
		char entry[300];
		snprintf(entry, sizeof(entry), "%s", srv->asked[i].entry);
		srv->asked[i].id[0] = '\0'; /* dismissed: what it covered is left to its timeout */
		if (!json_object_object_get_ex(m->root, "result", &r) ||
		    !json_object_object_get_ex(r, "action", &action))
			return; /* an error: no one answered */
		const char *a = json_object_get_string(action);
		bool made = false;
		if (strcmp(a, "decline") == 0)
			made = decide(srv, entry, "deny");
		else if (strcmp(a, "accept") == 0 && json_object_object_get_ex(r, "content", &content) &&
			 json_object_object_get_ex(content, "decision", &decision))
			made = decide(srv, entry, json_object_get_string(decision));
		if (!made)
			return; /* cancelled, or no rule made: left to its timeout */
		/* Decided: the rule has acted on what is held (the session's
		 * answer comes after it), so whatever is still held to entry
		 * (allow-once lets one through) is asked anew. */
		forget(srv, i);
		return;
	}
}

void mcp_network_requests(struct mcp_server *srv, struct json_object *id)
{
	struct json_object *list = srv->session ? pending(srv) : NULL;
	char text[4096], entry[300];
	size_t len = 0;

	text[0] = '\0';
	for (size_t k = 0; list && k < json_object_array_length(list) && len < sizeof(text); k++) {
		struct json_object *left = NULL, *p = json_object_array_get_idx(list, k);
		entry_of(p, entry, sizeof(entry));
		json_object_object_get_ex(p, "left_ms", &left);
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s held, refused in %lld s\n", entry,
					left ? (long long)(json_object_get_int64(left) + 999) / 1000 : 0LL);
	}
	if (!len)
		snprintf(text, sizeof(text), "no connection is held\n");
	snprintf(text + strlen(text), sizeof(text) - strlen(text),
		 "Only the user can allow a host: %s",
		 srv->elicit ? "each held connection is asked of the user through the client."
			     : "the client asks no questions (no elicitation), so the user answers with `sbxrun net "
			       "allow` from a shell; unanswered, a connection is refused at its timeout.");
	struct json_object *sc = json_object_new_object();
	json_object_object_add(sc, "held", list ? list : json_object_new_array());
	mcp_reply(srv, id, mcp_tool_text(text, 0, sc));
}
