/* gomod.c - the Go module proxy protocol's names and documents (gomod.h).
 * The checks follow golang.org/x/mod/module (CheckPath, the escaping of
 * capitals) and golang.org/x/mod/semver; what they accept is a subset of
 * what the go command accepts, never more: a name the gateway cannot
 * prove well-formed is refused, not passed upstream. */
#define _GNU_SOURCE
#include "pkg/gomod.h"

#include <json-c/json.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"

static bool path_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
	       c == '.' || c == '_' || c == '~';
}

/* '!' + lower case letter is that capital; a capital or a lone '!' is an
 * error (the escaped form is unique). */
static int unescape(const char *esc, size_t len, char *out, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		char c = esc[i];
		if ((c >= 'A' && c <= 'Z') || (unsigned char)c <= ' ' || (unsigned char)c >= 0x7f)
			return -1;  /* a NUL would cut the name short */
		if (c == '!') {
			if (++i >= len || esc[i] < 'a' || esc[i] > 'z')
				return -1;
			c = (char)(esc[i] - 'a' + 'A');
		}
		if (o + 1 >= size)
			return -1;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

int gomod_escape(const char *s, char *out, size_t size)
{
	size_t o = 0;

	for (; *s; s++) {
		bool cap = *s >= 'A' && *s <= 'Z';
		if (o + 2 + cap >= size)
			return -1;
		if (cap)
			out[o++] = '!';
		out[o++] = cap ? (char)(*s - 'A' + 'a') : *s;
	}
	out[o] = '\0';
	return 0;
}

/* Windows' reserved names, refused by CheckPath as an element's part
 * before its first dot. */
static bool reserved(const char *e, size_t n)
{
	static const char *const names[] = { "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4",
					     "COM5", "COM6", "COM7", "COM8", "COM9", "LPT1", "LPT2", "LPT3",
					     "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9" };
	const char *dot = memchr(e, '.', n);
	size_t short_len = dot ? (size_t)(dot - e) : n;

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strlen(names[i]) == short_len && strncasecmp(e, names[i], short_len) == 0)
			return true;
	/* a short (8.3) name's tilde: "~" then digits at the end of the part */
	const char *t = memrchr(e, '~', short_len);
	if (t && t + 1 < e + short_len && strspn(t + 1, "0123456789") >= (size_t)(e + short_len - t - 1))
		return true;
	return false;
}

static int check_elem(const char *e, size_t n, bool first, const char **why)
{
	size_t dots = 0;

	if (n == 0)
		return *why = "an empty path element", -1;
	for (size_t i = 0; i < n; i++) {
		if (!path_char(e[i]))
			return *why = "a character a module path may not hold", -1;
		if (first && !((e[i] >= 'a' && e[i] <= 'z') || (e[i] >= '0' && e[i] <= '9') || e[i] == '-' ||
			       e[i] == '.'))
			return *why = "the first path element is not a lower-case domain name", -1;
		dots += e[i] == '.';
	}
	if (dots == n || e[0] == '.' || e[n - 1] == '.')
		return *why = "a path element starts or ends with '.'", -1;
	if (first && (e[0] == '-' || !memchr(e, '.', n)))
		return *why = "the first path element is not a domain name", -1;
	if (reserved(e, n))
		return *why = "a path element Windows reserves", -1;
	return 0;
}

int gomod_path(const char *esc, size_t len, char *out, size_t size, const char **why)
{
	const char *w = "a bad escape of a capital";

	if (!why)
		why = &w;
	if (len == 0 || len >= GOMOD_PATH_MAX || size < GOMOD_PATH_MAX)
		return *why = "an empty or too long module path", -1;
	if (unescape(esc, len, out, size) < 0)
		return *why = w, -1;
	size_t n = strlen(out);
	for (size_t i = 0, start = 0; i <= n; i++) {
		if (i < n && out[i] != '/')
			continue;
		if (check_elem(out + start, i - start, start == 0, why) < 0)
			return -1;
		start = i + 1;
	}
	return 0;
}

/* Digits without a leading zero (but "0"); returns how many, 0 when none. */
static size_t number(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	return i == 0 || (i > 1 && s[0] == '0') ? 0 : i;
}

/* Dot-separated identifiers of [0-9A-Za-z-], numeric ones without a
 * leading zero. */
static bool prerelease(const char *s, size_t n)
{
	size_t start = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.') {
			char c = s[i];
			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-'))
				return false;
			continue;
		}
		size_t l = i - start;
		if (l == 0)
			return false;
		if (strspn(s + start, "0123456789") >= l && l > 1 && s[start] == '0')
			return false;
		start = i + 1;
	}
	return true;
}

static bool canonical(const char *v)
{
	size_t n = strlen(v), i = 1, k;

	if (n < 6 || v[0] != 'v')
		return false;
	for (int part = 0; part < 3; part++) {
		if (!(k = number(v + i, n - i)))
			return false;
		i += k;
		if (part < 2 && (i >= n || v[i++] != '.'))
			return false;
	}
	const char *plus = strchr(v + i, '+');
	size_t end = plus ? (size_t)(plus - v) : n;
	if (i < end && (v[i] != '-' || !prerelease(v + i + 1, end - i - 1)))
		return false;
	return !plus || strcmp(plus, "+incompatible") == 0;
}

int gomod_version(const char *esc, size_t len, char *out, size_t size, const char **why)
{
	const char *w;

	if (!why)
		why = &w;
	if (len == 0 || len >= GOMOD_VER_MAX || size < GOMOD_VER_MAX || unescape(esc, len, out, size) < 0)
		return *why = "an empty, too long or badly escaped version", -1;
	if (!canonical(out))
		return *why = "not a canonical semantic version (vMAJOR.MINOR.PATCH[-PRE][+incompatible])", -1;
	return 0;
}

static int split_version(const char *p, size_t len, struct gomod_req *r, const char **why)
{
	static const struct { const char *ext; enum gomod_kind kind; } exts[] = {
		{ ".info", GOMOD_INFO }, { ".mod", GOMOD_MOD }, { ".zip", GOMOD_ZIP } };

	for (size_t i = 0; i < ARRAY_SIZE(exts); i++) {
		size_t el = strlen(exts[i].ext);
		if (len <= el || memcmp(p + len - el, exts[i].ext, el) != 0)
			continue;
		r->kind = exts[i].kind;
		if (gomod_version(p, len - el, r->version, sizeof(r->version), why) < 0)
			return -1;
		snprintf(r->vesc, sizeof(r->vesc), "%.*s", (int)(len - el), p);
		return 0;
	}
	return *why = "not list, VERSION.info, .mod or .zip", -1;
}

int gomod_request(const char *p, size_t len, struct gomod_req *r, const char **why)
{
	const char *at = NULL, *w;
	size_t mlen;

	if (!why)
		why = &w;
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i + 1 < len; i++)
		if (p[i] == '/' && p[i + 1] == '@') {
			at = p + i;
			break;
		}
	if (!at)
		return *why = "not MODULE/@v/... or MODULE/@latest", -1;
	mlen = (size_t)(at - p);
	if (gomod_path(p, mlen, r->path, sizeof(r->path), why) < 0)
		return -1;
	snprintf(r->esc, sizeof(r->esc), "%.*s", (int)mlen, p);
	const char *rest = at + 1;
	size_t rlen = len - mlen - 1;
	if (rlen == 7 && memcmp(rest, "@latest", 7) == 0)
		return r->kind = GOMOD_LATEST, 0;
	if (rlen == 7 && memcmp(rest, "@v/list", 7) == 0)
		return r->kind = GOMOD_LIST, 0;
	if (rlen <= 3 || memcmp(rest, "@v/", 3) != 0 || memchr(rest + 3, '/', rlen - 3))
		return *why = "not MODULE/@v/... or MODULE/@latest", -1;
	return split_version(rest + 3, rlen - 3, r, why);
}

int gomod_list(const char *body, size_t len, char (*out)[GOMOD_VER_MAX], size_t max, size_t *n,
	       size_t *dropped)
{
	const char *p = body, *end = body + len;

	*n = *dropped = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
		size_t l = (size_t)(e - p);
		while (l && (p[l - 1] == '\r' || p[l - 1] == ' ' || p[l - 1] == '\t'))
			l--;
		char v[GOMOD_VER_MAX], esc[GOMOD_VER_MAX * 2];
		if (l == 0) {
			/* a blank line */
		} else if (l >= sizeof(v) || memchr(p, '\0', l)) {
			(*dropped)++;
		} else {
			/* the list holds versions unescaped: escape, then check */
			snprintf(v, sizeof(v), "%.*s", (int)l, p);
			if (gomod_escape(v, esc, sizeof(esc)) < 0 ||
			    gomod_version(esc, strlen(esc), v, sizeof(v), NULL) < 0) {
				(*dropped)++;
			} else {
				if (*n >= max)
					return -1;
				memcpy(out[(*n)++], v, sizeof(v));
			}
		}
		p = e + (nl != NULL);
	}
	return 0;
}

int gomod_info_version(const char *body, size_t len, char *out, size_t size)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o = NULL, *v;
	int r = -1;
	char esc[GOMOD_VER_MAX * 2];

	if (!tok || len > (1U << 20))
		goto out;
	o = json_tokener_parse_ex(tok, body, (int)len);
	if (!o || json_tokener_get_error(tok) != json_tokener_success || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "Version", &v) || !json_object_is_type(v, json_type_string))
		goto out;
	const char *s = json_object_get_string(v);
	if ((size_t)json_object_get_string_len(v) != strlen(s) || gomod_escape(s, esc, sizeof(esc)) < 0 ||
	    gomod_version(esc, strlen(esc), out, size, NULL) < 0)
		goto out;
	r = 0;
out:
	json_object_put(o);
	if (tok)
		json_tokener_free(tok);
	return r;
}
