/* sri.c - see sri.h. libcrypto (loaded on first use, base/lazylib.c)
 * computes the digests; the strings an index gives are parsed strictly. */
#define _GNU_SOURCE
#include "pkg/sri.h"

#include <openssl/evp.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "pkg/gosum.h"

struct sri_check {
	EVP_MD_CTX *md;
	struct sri want;
};

static const size_t algo_len[] = { [SRI_SHA1] = 20, [SRI_SHA256] = 32, [SRI_SHA512] = 64, [SRI_GOH1] = 32 };

const char *sri_algo_name(enum sri_algo a)
{
	return a == SRI_GOH1 ? "goh1" : a == SRI_SHA512 ? "sha512" : a == SRI_SHA256 ? "sha256" : "sha1";
}

static int from_hex(const char *hex, enum sri_algo algo, struct sri *out)
{
	size_t n = algo_len[algo];

	if (strlen(hex) != 2 * n)
		return -1;
	for (size_t i = 0; i < 2 * n; i++) {
		char ch = hex[i];
		int v = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
			: ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
		if (v < 0)
			return -1;
		out->digest[i / 2] = (unsigned char)(i % 2 ? out->digest[i / 2] | v : v << 4);
	}
	out->algo = algo;
	out->len = n;
	hex_encode(out->digest, n, out->hex);
	return 0;
}

int sri_from_hex256(const char *hex, struct sri *out)
{
	return from_hex(hex, SRI_SHA256, out);
}

int sri_from_hex(const char *hex, enum sri_algo algo, struct sri *out)
{
	return algo == SRI_GOH1 ? -1 : from_hex(hex, algo, out);
}

/* One "algo-base64" token of an SRI string (options after '?' ignored). */
static int one_token(const char *tok, size_t len, struct sri *out)
{
	static const struct { const char *name; enum sri_algo algo; } names[] = {
		{ "sha512-", SRI_SHA512 }, { "sha256-", SRI_SHA256 }, { "sha1-", SRI_SHA1 } };
	unsigned char buf[96];

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		size_t nl = strlen(names[i].name), want = algo_len[names[i].algo];
		if (len <= nl || strncmp(tok, names[i].name, nl) != 0)
			continue;
		size_t b64 = strcspn(tok + nl, "?");
		if (b64 > len - nl)
			b64 = len - nl;
		/* base64 of n bytes, padded: 4 * ceil(n / 3) characters, the
		 * last (3 - n % 3) % 3 of them '=' and no other '=' */
		size_t pad = (3 - want % 3) % 3;
		if (b64 != 4 * ((want + 2) / 3))
			return -1;
		for (size_t k = 0; k < b64; k++) {
			char ch = tok[nl + k];
			if (k >= b64 - pad ? ch != '=' : !(ch >= 'A' && ch <= 'Z') && !(ch >= 'a' && ch <= 'z') &&
			    !(ch >= '0' && ch <= '9') && ch != '+' && ch != '/')
				return -1;
		}
		if (EVP_DecodeBlock(buf, (const unsigned char *)tok + nl, (int)b64) < (int)want)
			return -1;
		memcpy(out->digest, buf, want);
		out->algo = names[i].algo;
		out->len = want;
		hex_encode(out->digest, want, out->hex);
		return 0;
	}
	return -1;
}

int sri_from_npm(const char *integrity, const char *shasum, struct sri *out)
{
	struct sri best = { 0 }, t;
	bool have = false;

	for (const char *p = integrity ? integrity : ""; *p;) {
		size_t len = strcspn(p, " \t");
		if (len && one_token(p, len, &t) == 0 && (!have || t.algo > best.algo)) {
			best = t;
			have = true;
		}
		p += len;
		p += strspn(p, " \t");
	}
	if (!have && shasum && from_hex(shasum, SRI_SHA1, &t) == 0) {
		best = t;
		have = true;
	}
	if (!have)
		return -1;
	*out = best;
	return 0;
}

static const EVP_MD *algo_md(enum sri_algo a)
{
	return a == SRI_SHA512 ? EVP_sha512() : a == SRI_SHA256 ? EVP_sha256() : EVP_sha1();
}

int sri_from_goh1(const unsigned char *h, struct sri *out)
{
	if (!h)
		return -1;
	*out = (struct sri){ .algo = SRI_GOH1, .len = 32 };
	memcpy(out->digest, h, 32);
	hex_encode(h, 32, out->hex);
	return 0;
}

struct sri_check *sri_check_new(const struct sri *want)
{
	struct sri_check *c = xcalloc(1, sizeof(*c));

	c->want = *want;
	if (want->algo == SRI_GOH1)
		return c;  /* nothing streams: the file is checked whole */
	c->md = EVP_MD_CTX_new();
	if (!c->md || EVP_DigestInit_ex(c->md, algo_md(want->algo), NULL) != 1) {
		sri_check_free(c);
		return NULL;
	}
	return c;
}

void sri_check_update(struct sri_check *c, const void *p, size_t n)
{
	if (c->md)
		EVP_DigestUpdate(c->md, p, n);
}

bool sri_check_end(struct sri_check *c, char *got_hex)
{
	unsigned char d[64];
	unsigned n = 0;

	if (!c->md || EVP_DigestFinal_ex(c->md, d, &n) != 1 || n != c->want.len) {
		if (got_hex)
			got_hex[0] = '\0';
		return false;
	}
	if (got_hex)
		hex_encode(d, n, got_hex);
	return memcmp(d, c->want.digest, n) == 0;
}

void sri_check_free(struct sri_check *c)
{
	if (!c)
		return;
	if (c->md)
		EVP_MD_CTX_free(c->md);
	free(c);
}

bool sri_check_fd(const struct sri *want, int fd)
{
	struct sri_check *c = sri_check_new(want);
	char buf[65536];
	off_t off = 0;
	ssize_t n;
	bool ok = false;
	unsigned char h1[32];

	if (want->algo == SRI_GOH1) {
		sri_check_free(c);
		return gosum_zip_h1(fd, h1, NULL) == 0 && memcmp(h1, want->digest, 32) == 0;
	}
	if (!c)
		return false;
	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		sri_check_update(c, buf, (size_t)n);
		off += n;
	}
	if (n == 0)
		ok = sri_check_end(c, NULL);
	sri_check_free(c);
	return ok;
}

int sri_hex_fd(enum sri_algo algo, int fd, char *hex)
{
	struct sri any = { .algo = algo, .len = algo_len[algo] };
	struct sri_check *c = algo == SRI_GOH1 ? NULL : sri_check_new(&any);
	char buf[65536];
	off_t off = 0;
	ssize_t n;

	if (!c)
		return -1;
	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		sri_check_update(c, buf, (size_t)n);
		off += n;
	}
	sri_check_end(c, hex);
	sri_check_free(c);
	return n == 0 && hex[0] ? 0 : -1;
}

void sri_hex_mem(enum sri_algo algo, const void *p, size_t n, char *hex)
{
	struct sri any = { .algo = algo, .len = algo_len[algo] };
	struct sri_check *c = algo == SRI_GOH1 ? NULL : sri_check_new(&any);

	if (!c)
		abort();  /* out of memory: as xmalloc does */
	sri_check_update(c, p, n);
	sri_check_end(c, hex);
	sri_check_free(c);
}

void sri_sha256(const void *p, size_t n, unsigned char digest[32])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned int len = 0;

	if (!md || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1 || EVP_DigestUpdate(md, p, n) != 1 ||
	    EVP_DigestFinal_ex(md, digest, &len) != 1 || len != 32)
		abort();  /* out of memory: as xmalloc does */
	EVP_MD_CTX_free(md);
}
