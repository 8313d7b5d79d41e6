/* proxy_auth.c - checks the credentials a peer of `sbxrun proxy --listen`
 * sends against the shared secret, in time that does not depend on where
 * the first wrong byte is (a network peer may measure the answer). */
#define _GNU_SOURCE
#include "net/proxy_auth.h"

#include <string.h>
#include <strings.h>

int proxy_auth_valid(const char *secret, const char *what, struct sbx_err *err)
{
	size_t n = strlen(secret);

	if (n == 0)
		return err_set(err, 0, "%s: the proxy's secret is empty", what);
	if (n > PROXY_AUTH_MAX)
		return err_set(err, 0, "%s: the proxy's secret is longer than %d bytes", what,
			       PROXY_AUTH_MAX);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)secret[i] < 0x20 || secret[i] == 0x7f)
			return err_set(err, 0, "%s: the proxy's secret must be one line of printable text",
				       what);
	if (secret[0] == ':')
		return err_set(err, 0, "%s: the proxy's secret has an empty user name (write USER:PASSWORD, or a password alone)",
			       what);
	return 0;
}

static int b64val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int proxy_auth_b64decode(const char *in, size_t len, char *out, size_t size)
{
	unsigned acc = 0;
	int bits = 0;
	size_t n = 0;

	while (len > 0 && in[len - 1] == '=')
		len--;
	if (len % 4 == 1)
		return -1;
	for (size_t i = 0; i < len; i++) {
		int v = b64val((unsigned char)in[i]);
		if (v < 0)
			return -1;
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n + 1 >= size)
				return -1;
			out[n++] = (char)((acc >> bits) & 0xff);
		}
	}
	out[n] = 0;
	return (int)n;
}

/* Equal in length and bytes; loops over want's length whatever got is. */
static bool same(const char *want, size_t wn, const char *got, size_t gn)
{
	volatile unsigned char diff = (unsigned char)(wn != gn);

	for (size_t i = 0; i < wn; i++)
		diff |= (unsigned char)want[i] ^ (unsigned char)(i < gn ? got[i] : 0);
	return diff == 0;
}

bool proxy_auth_check(const char *secret, const char *value)
{
	char plain[PROXY_AUTH_MAX * 2 + 8];
	const char *b64 = value + 6, *given;
	size_t sn = strlen(secret);

	if (strncasecmp(value, "Basic ", 6) != 0)
		return false;
	while (*b64 == ' ')
		b64++;
	int n = proxy_auth_b64decode(b64, strlen(b64), plain, sizeof(plain));
	if (n < 0 || memchr(plain, 0, (size_t)n))
		return false;
	given = plain;
	if (!strchr(secret, ':')) { /* a password alone: any user name */
		const char *colon = strchr(plain, ':');
		if (!colon)
			return false;
		given = colon + 1;
	}
	return same(secret, sn, given, strlen(given));
}
