/* proxy_auth.c - checks the credentials a peer of `sbxrun proxy --listen`
 * sends against the shared secret, in time that does not depend on where
 * the first wrong byte is (a network peer may measure the answer). */
#define _GNU_SOURCE
#include "net/proxy_auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <string.h>
#include <strings.h>

#define B64 "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

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

int proxy_auth_b64decode(const char *in, size_t len, char *out, size_t size)
{
	unsigned char padded[PROXY_AUTH_MAX * 4 + 8];
	size_t pad = 0;

	while (len > 0 && in[len - 1] == '=')
		len--, pad++;
	if (len % 4 == 1 || pad > 2 || len + 3 >= sizeof(padded) || strspn(in, B64) < len)
		return -1;
	/* libcrypto decodes whole quanta only: padded back to one */
	memcpy(padded, in, len);
	for (pad = 0; (len + pad) % 4; pad++)
		padded[len + pad] = '=';
	if ((len + pad) / 4 * 3 + 1 > size) /* what it writes, padding included */
		return -1;
	int n = EVP_DecodeBlock((unsigned char *)out, padded, (int)(len + pad));
	if (n < (int)pad)
		return -1;
	n -= (int)pad; /* EVP_DecodeBlock counts the padding as zero bytes */
	out[n] = 0;
	return n;
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
	/* the same time whatever byte is the first wrong one: compared over
	 * the secret's length, against a zero-padded copy of that size */
	char cmp[sizeof(plain)] = { 0 };
	size_t gn = strlen(given);
	memcpy(cmp, given, gn < sn ? gn : sn);
	return (CRYPTO_memcmp(secret, cmp, sn) == 0) & (gn == sn);
}
