/* csname.c - names and bytes of a change set as shown (csname.h). A
 * terminal reads a sandbox's text as commands: ESC [ 2 K and a carriage
 * return erase a line before it is read, OSC 52 writes the clipboard, a
 * right-to-left override shows `txt.exe` as `exe.txt`. What is printed of
 * a change set is therefore escaped, never filtered: a reviewer sees that
 * something was there. */
#define _GNU_SOURCE
#include "undo/csname.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* The length of the UTF-8 character at s (n bytes left) with its code
 * point, 0 when s does not start a valid one (overlong, surrogate, past
 * U+10FFFF), or -1 when the n bytes are the valid start of one. */
static int utf8_char(const unsigned char *s, size_t n, uint32_t *cp)
{
	int len = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3
		: (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };

	if (!len)
		return 0;
	uint32_t c = len == 1 ? s[0] : s[0] & (0x7f >> len);
	for (int i = 1; i < len; i++) {
		if ((size_t)i >= n)
			return -1;
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min[len] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* A code point that acts on a terminal or on the order and look of what is
 * shown, and is never needed to read a name or a line. */
static int hidden(uint32_t c)
{
	return (c >= 0x80 && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) ||
	       c == 0x200e || c == 0x200f || c == 0x061c || (c >= 0x200b && c <= 0x200d) || c == 0x2060 ||
	       c == 0xfeff || c == 0x2028 || c == 0x2029;
}

/* A space that begins or ends a name (or a component of a path) would
 * not be seen: `trail  ` looks like `trail`. */
static bool edge_space(const char *s, const unsigned char *p, const unsigned char *end)
{
	return *p == ' ' && ((const char *)p == s || p[-1] == '/' || p + 1 == end || p[1] == '/');
}

char *csname_show(const char *s)
{
	size_t n = strlen(s);
	char *out = xmalloc(n * 4 + 1), *o = out;
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	while (p < end) {
		uint32_t c = 0;
		int len = utf8_char(p, (size_t)(end - p), &c);
		if (len > 1 && !hidden(c)) {
			memcpy(o, p, (size_t)len);
			o += len, p += len;
			continue;
		}
		if (len < 1)
			len = 1; /* not UTF-8: each byte on its own */
		for (int i = 0; i < len; i++, p++) {
			if (*p == '\\')
				o += sprintf(o, "\\\\");
			else if (*p == '\n')
				o += sprintf(o, "\\n");
			else if (*p == '\t')
				o += sprintf(o, "\\t");
			else if (*p < 0x20 || *p >= 0x7f || edge_space(s, p, end))
				o += sprintf(o, "\\x%02x", *p);
			else
				*o++ = (char)*p;
		}
	}
	*o = '\0';
	return out;
}

char *csname_git(const char *prefix, const char *path)
{
	_cleanup_free_ char *whole = xasprintf("%s%s", prefix, path);
	size_t n = strlen(whole);
	int quote = 0;

	for (const unsigned char *p = (const unsigned char *)whole; *p; p++)
		quote |= *p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\';
	if (!quote)
		return steal_ptr(whole);
	char *out = xmalloc(n * 4 + 3), *o = out;
	*o++ = '"';
	for (const unsigned char *p = (const unsigned char *)whole; *p; p++) {
		const char *c = strchr("\a\b\t\n\v\f\r\"\\", *p);
		if (c && *p)
			o += sprintf(o, "\\%c", "abtnvfr\"\\"[c - "\a\b\t\n\v\f\r\"\\"]);
		else if (*p < 0x20 || *p >= 0x7f)
			o += sprintf(o, "\\%03o", *p);
		else
			*o++ = (char)*p;
	}
	*o++ = '"';
	*o = '\0';
	return out;
}

struct escaping {
	FILE *out;
	unsigned char pend[4]; /* the start of a UTF-8 character split by a write */
	size_t npend;
};

static void put_byte(FILE *out, unsigned char b)
{
	if (b == '\n' || b == '\t' || (b >= 0x20 && b < 0x7f))
		fputc(b, out);
	else if (b < 0x20)
		fprintf(out, "^%c", b + 0x40);
	else if (b == 0x7f)
		fputs("^?", out);
	else
		fprintf(out, "\\x%02x", b);
}

/* Writes what of s can be judged now; returns how many bytes it took. */
static size_t escape_some(FILE *out, const unsigned char *s, size_t n, int last)
{
	size_t i = 0;

	while (i < n) {
		uint32_t c = 0;
		int len = utf8_char(s + i, n - i, &c);
		if (len < 0 && !last)
			break;
		if (len > 1 && hidden(c))
			fprintf(out, "<U+%04X>", (unsigned)c);
		else if (len > 1)
			fwrite(s + i, 1, (size_t)len, out);
		else
			put_byte(out, s[i]), len = 1;
		i += (size_t)len;
	}
	return i;
}

static ssize_t escaping_write(void *cookie, const char *buf, size_t n)
{
	struct escaping *e = cookie;
	size_t used = 0;

	while (e->npend && used < n) {
		/* finish the character the last write began */
		e->pend[e->npend++] = (unsigned char)buf[used++];
		size_t took = escape_some(e->out, e->pend, e->npend, e->npend == sizeof(e->pend));
		memmove(e->pend, e->pend + took, e->npend - took);
		e->npend -= took;
	}
	if (e->npend)
		return ferror(e->out) ? -1 : (ssize_t)n;
	size_t took = escape_some(e->out, (const unsigned char *)buf + used, n - used, 0);
	e->npend = n - used - took;
	memcpy(e->pend, buf + used + took, e->npend);
	return ferror(e->out) ? -1 : (ssize_t)n;
}

static int escaping_close(void *cookie)
{
	struct escaping *e = cookie;

	escape_some(e->out, e->pend, e->npend, 1);
	int r = fflush(e->out) == 0 ? 0 : -1;
	free(e);
	return r;
}

FILE *csname_escaping(FILE *out)
{
	struct escaping *e = xcalloc(1, sizeof(*e));
	cookie_io_functions_t io = { .write = escaping_write, .close = escaping_close };

	e->out = out;
	FILE *f = fopencookie(e, "w", io);
	if (!f)
		free(e);
	return f;
}

void csname_mode(char type, unsigned perm, char out[11])
{
	out[0] = type == 'f' ? '-' : type == 'd' ? 'd' : type == 'l' ? 'l' : '?';
	for (int i = 0; i < 9; i++)
		out[1 + i] = perm & (0400u >> i) ? "rwxrwxrwx"[i] : '-';
	out[10] = '\0';
}

/* --- the manifest's line encoding (written in entries, read back) --- */

char *changeset_escape(const char *s)
{
	size_t n = strlen(s);
	char *out = xmalloc(n * 4 + 1), *o = out;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\\')
			o += sprintf(o, "\\\\");
		else if (*p == '\n')
			o += sprintf(o, "\\n");
		else if (*p == '\t')
			o += sprintf(o, "\\t");
		else if (*p < 0x20 || *p == 0x7f)
			o += sprintf(o, "\\x%02x", *p);
		else
			*o++ = (char)*p;
	}
	*o = '\0';
	return out;
}

char *changeset_unescape(const char *s)
{
	char *out = xmalloc(strlen(s) + 1), *o = out;

	for (const char *p = s; *p; p++) {
		if (*p != '\\') {
			*o++ = *p;
			continue;
		}
		p++;
		unsigned v;
		if (*p == '\\')
			*o++ = '\\';
		else if (*p == 'n')
			*o++ = '\n';
		else if (*p == 't')
			*o++ = '\t';
		else if (*p == 'x' && sscanf(p + 1, "%2x", &v) == 1 && v && p[1] && p[2]) {
			*o++ = (char)v;
			p += 2;
		} else {
			free(out);
			return NULL;
		}
	}
	*o = '\0';
	return out;
}
