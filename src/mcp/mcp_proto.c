/* mcp_proto.c - see mcp_proto.h: the pure protocol layer of `sbxrun mcp`. */
#define _GNU_SOURCE
#include "mcp/mcp_proto.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void mcp_reader_feed(struct mcp_reader *r, const char *data, size_t n, mcp_line_fn fn, void *arg)
{
	while (n > 0) {
		const char *nl = memchr(data, '\n', n);
		size_t take = nl ? (size_t)(nl - data) : n;
		if (!r->discarding && r->len + take > MCP_LINE_MAX) {
			r->discarding = 1;
			r->len = 0;
			fn(arg, NULL, 0, 1);
		}
		if (!r->discarding && take) {
			if (r->len + take + 1 > r->cap) {
				r->cap = (r->len + take + 1) * 2;
				if (r->cap > MCP_LINE_MAX + 1)
					r->cap = MCP_LINE_MAX + 1;
				r->buf = xrealloc(r->buf, r->cap);
			}
			memcpy(r->buf + r->len, data, take);
			r->len += take;
		}
		if (!nl)
			return;
		size_t len = r->len;
		if (!r->discarding && len && r->buf[len - 1] == '\r')
			len--;
		if (!r->discarding && len) { /* blank lines are skipped */
			r->buf[len] = '\0';
			fn(arg, r->buf, len, 0);
		}
		r->discarding = 0;
		r->len = 0;
		data = nl + 1;
		n -= take + 1;
	}
}

void mcp_reader_free(struct mcp_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

static void invalid(struct mcp_msg *m, int code, const char *why)
{
	m->kind = MCP_INVALID;
	m->code = code;
	snprintf(m->why, sizeof(m->why), "%s", why);
}

static int id_ok(struct json_object *id)
{
	return json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int);
}

void mcp_parse(const char *line, size_t len, struct mcp_msg *m)
{
	struct json_tokener *tok = json_tokener_new_ex(64);
	struct json_object *v;

	memset(m, 0, sizeof(*m));
	m->root = tok && len < (size_t)INT32_MAX ? json_tokener_parse_ex(tok, line, (int)len) : NULL;
	if (m->root && tok->char_offset != (int)len)
		json_object_put(m->root), m->root = NULL; /* trailing bytes */
	if (tok)
		json_tokener_free(tok);
	if (!m->root)
		return invalid(m, MCP_PARSE_ERROR, "parse error: not one JSON value");
	if (!json_object_is_type(m->root, json_type_object))
		return invalid(m, MCP_INVALID_REQUEST, "invalid request: not a JSON object");
	if (json_object_object_get_ex(m->root, "id", &v) && id_ok(v))
		m->id = v;
	if (!json_object_object_get_ex(m->root, "jsonrpc", &v) || !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), "2.0") != 0)
		return invalid(m, MCP_INVALID_REQUEST, "invalid request: \"jsonrpc\" must be \"2.0\"");
	if (json_object_object_get_ex(m->root, "params", &v) && v) {
		if (!json_object_is_type(v, json_type_object))
			return invalid(m, MCP_INVALID_REQUEST, "invalid request: \"params\" must be an object");
		m->params = v;
	}
	if (!json_object_object_get_ex(m->root, "method", &v)) {
		m->kind = MCP_RESPONSE; /* to a request of ours (we send none) */
		return;
	}
	if (!json_object_is_type(v, json_type_string))
		return invalid(m, MCP_INVALID_REQUEST, "invalid request: \"method\" must be a string");
	m->method = json_object_get_string(v);
	int has_id = json_object_object_get_ex(m->root, "id", &v);
	if (has_id && !m->id)
		return invalid(m, MCP_INVALID_REQUEST, "invalid request: \"id\" must be a string or an integer");
	m->kind = has_id ? MCP_REQUEST : MCP_NOTIFICATION;
}

void mcp_msg_free(struct mcp_msg *m)
{
	if (m->root)
		json_object_put(m->root);
	memset(m, 0, sizeof(*m));
}

static struct json_object *envelope(struct json_object *id)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(o, "id", id ? json_object_get(id) : NULL);
	return o;
}

struct json_object *mcp_result(struct json_object *id, struct json_object *result)
{
	struct json_object *o = envelope(id);
	json_object_object_add(o, "result", result ? result : json_object_new_object());
	return o;
}

struct json_object *mcp_error(struct json_object *id, int code, const char *msg)
{
	struct json_object *o = envelope(id), *e = json_object_new_object();
	json_object_object_add(e, "code", json_object_new_int(code));
	json_object_object_add(e, "message", json_object_new_string(msg));
	json_object_object_add(o, "error", e);
	return o;
}

struct json_object *mcp_notification(const char *method, struct json_object *params)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(o, "method", json_object_new_string(method));
	json_object_object_add(o, "params", params);
	return o;
}

const char *mcp_negotiate(const char *requested)
{
	static const char *const known[] = { "2025-11-25", "2025-06-18" };
	for (size_t i = 0; requested && i < ARRAY_SIZE(known); i++)
		if (strcmp(requested, known[i]) == 0)
			return known[i];
	return known[0];
}

struct json_object *mcp_tool_text(const char *text, int is_error, struct json_object *structured)
{
	struct json_object *r = json_object_new_object(), *c = json_object_new_array(), *t = json_object_new_object();
	json_object_object_add(t, "type", json_object_new_string("text"));
	json_object_object_add(t, "text", json_object_new_string(text));
	json_object_array_add(c, t);
	json_object_object_add(r, "content", c);
	if (structured)
		json_object_object_add(r, "structuredContent", structured);
	if (is_error)
		json_object_object_add(r, "isError", json_object_new_boolean(1));
	return r;
}

/* Argument decoding: one row per argument of each tool. */
enum argtype { A_STR, A_STRV, A_SECONDS, A_MS, A_ENV };
struct argdef {
	const char *tool, *name;
	enum argtype type;
	int required;
	size_t off;
};
#define O(f) offsetof(struct mcp_args, f)
static const struct argdef argdefs[] = {
	{ "exec", "cmd", A_STRV, 1, O(cmd) },
	{ "exec", "session_name", A_STR, 0, O(session_name) },
	{ "exec", "workdir", A_STR, 0, O(workdir) },
	{ "exec", "timeout", A_SECONDS, 0, O(timeout_ms) },
	{ "exec", "env", A_ENV, 0, O(env) },
	{ "exec", "user", A_STR, 0, O(user) },
	{ "exec", "yield_time_ms", A_MS, 0, O(yield_ms) },
	{ "feed_chars", "session_name", A_STR, 1, O(session_name) },
	{ "feed_chars", "chars", A_STR, 1, O(chars) },
	{ "feed_chars", "yield_time_ms", A_MS, 0, O(yield_ms) },
	{ "download", "url", A_STR, 1, O(url) },
	{ "download", "filepath", A_STR, 1, O(filepath) },
	{ "open_image", "path", A_STR, 1, O(path) },
	{ "read_file", "path", A_STR, 1, O(path) },
	{ "write_file", "path", A_STR, 1, O(path) },
	{ "write_file", "content", A_STR, 1, O(content) },
	{ "snapshot", "name", A_STR, 0, O(path) },
	{ "restore", "snapshot", A_STR, 1, O(path) },
	{ "diff_changes", "paths", A_STRV, 0, O(cmd) },
};
/* tools without arguments */
static const char *const argless[] = { "list_snapshots", "list_changes", "network_requests" };

static int bad(char *why, size_t size, const char *name, const char *what)
{
	snprintf(why, size, "argument '%s': %s", name, what);
	return -1;
}

static int decode_strv(struct json_object *v, const char ***out)
{
	size_t n = json_object_array_length(v);
	if (n == 0 || n > 4096)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string))
			return -1;
	*out = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		(*out)[i] = json_object_get_string(json_object_array_get_idx(v, i));
	return 0;
}

static int decode_env(struct json_object *v, char ***out, char *why, size_t size)
{
	size_t n = (size_t)json_object_object_length(v), i = 0;
	*out = xcalloc(n + 1, sizeof(char *));
	json_object_object_foreach(v, key, val) {
		if (!key[0] || strchr(key, '=') || !json_object_is_type(val, json_type_string))
			return bad(why, size, "env", "an object of NAME: \"value\" strings");
		(*out)[i++] = xasprintf("%s=%s", key, json_object_get_string(val));
	}
	return 0;
}

static int decode_ms(struct json_object *v, double scale, int64_t *out)
{
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return -1;
	double d = json_object_get_double(v) * scale;
	if (!isfinite(d) || d < 0 || d > 1e12)
		return -1;
	*out = (int64_t)d;
	return 0;
}

static int decode_one(const struct argdef *d, struct json_object *v, struct mcp_args *a, char *why, size_t size)
{
	void *field = (char *)a + d->off;
	switch (d->type) {
	case A_STR:
		if (!json_object_is_type(v, json_type_string))
			return bad(why, size, d->name, "must be a string");
		if (strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
			return bad(why, size, d->name, "must not contain NUL characters");
		*(const char **)field = json_object_get_string(v);
		return 0;
	case A_STRV:
		if (!json_object_is_type(v, json_type_array) || decode_strv(v, field) < 0)
			return bad(why, size, d->name, "must be a non-empty array of strings");
		return 0;
	case A_SECONDS:
		return decode_ms(v, 1000, field) < 0 ? bad(why, size, d->name, "must be a number of seconds >= 0") : 0;
	case A_MS:
		return decode_ms(v, 1, field) < 0 ? bad(why, size, d->name, "must be a number of milliseconds >= 0") : 0;
	case A_ENV:
		if (!json_object_is_type(v, json_type_object))
			return bad(why, size, d->name, "must be an object of NAME: \"value\" strings");
		return decode_env(v, field, why, size);
	}
	return -1;
}

static const struct argdef *find_arg(const char *tool, const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(argdefs); i++)
		if (!strcmp(argdefs[i].tool, tool) && !strcmp(argdefs[i].name, name))
			return &argdefs[i];
	return NULL;
}

int mcp_args_decode(const char *tool, struct json_object *args, struct mcp_args *a, char *why, size_t size)
{
	memset(a, 0, sizeof(*a));
	a->timeout_ms = a->yield_ms = -1;
	int known = 0;
	for (size_t i = 0; i < ARRAY_SIZE(argdefs); i++)
		known |= !strcmp(argdefs[i].tool, tool);
	for (size_t i = 0; i < ARRAY_SIZE(argless); i++)
		known |= !strcmp(argless[i], tool);
	if (!known)
		return snprintf(why, size, "unknown tool '%s'", tool), -2;
	if (args && !json_object_is_type(args, json_type_object))
		return snprintf(why, size, "'arguments' must be an object"), -1;
	if (args) {
		json_object_object_foreach(args, key, val) {
			const struct argdef *d = find_arg(tool, key);
			if (!d)
				return bad(why, size, key, "not an argument of this tool");
			if (val && decode_one(d, val, a, why, size) < 0)
				return -1;
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(argdefs); i++) {
		struct json_object *v;
		if (!strcmp(argdefs[i].tool, tool) && argdefs[i].required &&
		    !(args && json_object_object_get_ex(args, argdefs[i].name, &v) && v))
			return bad(why, size, argdefs[i].name, "missing (required)");
	}
	return 0;
}

void mcp_args_free(struct mcp_args *a)
{
	free(a->cmd);
	for (char **e = a->env; e && *e; e++)
		free(*e);
	free(a->env);
	memset(a, 0, sizeof(*a));
}

void mcp_out_add(struct mcp_out *o, const char *p, size_t n)
{
	size_t cap = o->cap ? o->cap : MCP_OUTPUT_CAP;
	size_t keep = o->len >= cap ? 0 : n < cap - o->len ? n : cap - o->len;

	if (keep) {
		o->data = xrealloc(o->data, o->len + keep + 1);
		memcpy(o->data + o->len, p, keep);
		o->len += keep;
		o->data[o->len] = '\0';
	}
	o->dropped += n - keep;
}

/* Length of the valid UTF-8 sequence at p (0 if invalid). */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t want = p[0] < 0x80 ? 1 : (p[0] & 0xe0) == 0xc0 ? 2 : (p[0] & 0xf0) == 0xe0 ? 3
		      : (p[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (!want || want > n || (want == 2 && p[0] < 0xc2) || (want == 4 && p[0] > 0xf4))
		return 0;
	for (size_t i = 1; i < want; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if (want == 3 && ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0)))
		return 0;
	if (want == 4 && ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90)))
		return 0;
	return want;
}

char *mcp_out_text(const struct mcp_out *o)
{
	const unsigned char *p = (const unsigned char *)(o->data ? o->data : "");
	char *s = xmalloc(o->len * 3 + 128), *q = s;

	for (size_t i = 0; i < o->len;) {
		size_t k = utf8_len(p + i, o->len - i);
		if (k == 0 || p[i] == 0) { /* bad bytes and NUL become U+FFFD */
			memcpy(q, "\xef\xbf\xbd", 3);
			q += 3;
			i++;
			continue;
		}
		memcpy(q, p + i, k);
		q += k;
		i += k;
	}
	if (o->dropped)
		q += sprintf(q, "\n[... %llu more bytes of output dropped ...]\n", (unsigned long long)o->dropped);
	*q = '\0';
	return s;
}

void mcp_out_free(struct mcp_out *o)
{
	free(o->data);
	memset(o, 0, sizeof(*o));
}

const char *mcp_image_mime(const unsigned char *p, size_t n)
{
	if (n >= 8 && !memcmp(p, "\x89PNG\r\n\x1a\n", 8))
		return "image/png";
	if (n >= 3 && !memcmp(p, "\xff\xd8\xff", 3))
		return "image/jpeg";
	if (n >= 6 && (!memcmp(p, "GIF87a", 6) || !memcmp(p, "GIF89a", 6)))
		return "image/gif";
	if (n >= 12 && !memcmp(p, "RIFF", 4) && !memcmp(p + 8, "WEBP", 4))
		return "image/webp";
	return NULL;
}

char *mcp_base64(const unsigned char *p, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *s = xmalloc((n + 2) / 3 * 4 + 1), *q = s;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
		*q++ = tab[v >> 18 & 63];
		*q++ = tab[v >> 12 & 63];
		*q++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
		*q++ = i + 2 < n ? tab[v & 63] : '=';
	}
	*q = '\0';
	return s;
}
