/* fuzz_sri.c - libFuzzer harness for the digests an index promises
 * (pkg/sri.c): npm's SRI strings and shasums, the 64-digit sha256 of
 * PyPI and Debian, and the check of bytes against them as they stream past.
 * The input: an integrity string, '\n', a shasum, '\n', then the bytes of
 * an "artifact". Differential: the strings are also read by a plain
 * reference reader written here (RFC 4648 base64 with its padding, the
 * strongest algorithm first, the first of equals), and the digest of the
 * bytes fed in pieces of varying size must equal the digest computed in one
 * call, whether from memory or from a file; the check says yes exactly when
 * that digest is the promised one. */
#define _GNU_SOURCE
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/util.h"
#include "pkg/sri.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const size_t want_len[] = { [SRI_SHA1] = 20, [SRI_SHA256] = 32, [SRI_SHA512] = 64 };

static int b64val(char c)
{
	const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = c ? strchr(a, c) : NULL;
	return p ? (int)(p - a) : -1;
}

/* RFC 4648 base64 of exactly n bytes, padded; bits beyond them ignored. */
static int ref_b64(const char *s, size_t len, size_t n, unsigned char *out)
{
	size_t pad = (3 - n % 3) % 3, bits = 0, o = 0;
	unsigned acc = 0;

	if (len != 4 * ((n + 2) / 3))
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (i >= len - pad) {
			if (s[i] != '=')
				return -1;
			continue;
		}
		int v = b64val(s[i]);
		if (v < 0)
			return -1;
		acc = (acc << 6 | (unsigned)v) & 0xffffff;
		bits += 6;
		if (bits >= 8 && o < n) {
			out[o++] = (unsigned char)(acc >> (bits - 8));
			bits -= 8;
		}
	}
	return o == n ? 0 : -1;
}

static int ref_hex(const char *s, size_t n, unsigned char *out)
{
	if (strlen(s) != 2 * n)
		return -1;
	for (size_t i = 0; i < 2 * n; i++) {
		char c = s[i];
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (v < 0)
			return -1;
		out[i / 2] = (unsigned char)(i % 2 ? out[i / 2] | v : v << 4);
	}
	return 0;
}

static int ref_npm(const char *integrity, const char *shasum, struct sri *out)
{
	static const struct { const char *pre; enum sri_algo a; } algos[] = {
		{ "sha512-", SRI_SHA512 }, { "sha256-", SRI_SHA256 }, { "sha1-", SRI_SHA1 } };
	int have = 0;

	for (const char *p = integrity; *p;) {
		size_t len = strcspn(p, " \t");
		for (size_t i = 0; i < 3 && len; i++) {
			size_t pl = strlen(algos[i].pre), n = want_len[algos[i].a];
			unsigned char d[64];
			if (len <= pl || strncmp(p, algos[i].pre, pl) != 0)
				continue;
			size_t b = strcspn(p + pl, "?");
			if (b > len - pl)
				b = len - pl;
			if (ref_b64(p + pl, b, n, d) == 0 && (!have || algos[i].a > out->algo)) {
				out->algo = algos[i].a;
				out->len = n;
				memcpy(out->digest, d, n);
				have = 1;
			}
			break;
		}
		p += len;
		p += strspn(p, " \t");
	}
	if (!have && ref_hex(shasum, 20, out->digest) == 0) {
		out->algo = SRI_SHA1;
		out->len = 20;
		have = 1;
	}
	return have ? 0 : -1;
}

static void same(const struct sri *got, const struct sri *ref)
{
	char hex[129];
	static const char x[] = "0123456789abcdef";

	if (got->algo != ref->algo || got->len != ref->len || memcmp(got->digest, ref->digest, got->len) != 0)
		abort();
	for (size_t i = 0; i < got->len; i++) {
		hex[2 * i] = x[got->digest[i] >> 4];
		hex[2 * i + 1] = x[got->digest[i] & 15];
	}
	hex[2 * got->len] = '\0';
	if (strcmp(hex, got->hex) != 0)
		abort();
}

static const EVP_MD *md_of(enum sri_algo a)
{
	return a == SRI_SHA512 ? EVP_sha512() : a == SRI_SHA256 ? EVP_sha256() : EVP_sha1();
}

/* The bytes through sri_check in pieces, against one EVP_Digest call. */
static void stream(const struct sri *want, const uint8_t *p, size_t n)
{
	unsigned char d[64];
	unsigned dl = 0;
	char got[129], hex[129];
	struct sri self = *want;

	if (EVP_Digest(p, n, d, &dl, md_of(want->algo), NULL) != 1 || dl != want->len)
		abort();
	bool match = memcmp(d, want->digest, dl) == 0;
	struct sri_check *c = sri_check_new(want);
	if (!c)
		abort();
	for (size_t off = 0, k = 0; off < n; k++) {
		size_t piece = (size_t)(p[k % n] % 67);
		if (!piece) {  /* an empty piece, then a byte */
			sri_check_update(c, p + off, 0);
			piece = 1;
		}
		if (piece > n - off)
			piece = n - off;
		sri_check_update(c, p + off, piece);
		off += piece;
	}
	if (sri_check_end(c, got) != match)
		abort();
	sri_check_free(c);
	memcpy(self.digest, d, dl);
	c = sri_check_new(&self);
	sri_check_update(c, p, n);
	if (!sri_check_end(c, hex) || strcmp(hex, got) != 0)
		abort();
	sri_check_free(c);

	int fd = memfd_create("sri", MFD_CLOEXEC);
	if (fd < 0 || write_all(fd, p, n) < 0 || sri_check_fd(want, fd) != match || !sri_check_fd(&self, fd))
		abort();
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	struct sri got, ref;

	memcpy(buf, data, size);
	buf[size] = '\0';
	char *integrity = buf, *shasum = "", *rest = buf + size;
	char *nl = memchr(buf, '\n', size);
	if (nl) {
		*nl = '\0';
		shasum = nl + 1;
		char *nl2 = strchr(shasum, '\n');
		rest = nl2 ? nl2 + 1 : buf + size;
		if (nl2)
			*nl2 = '\0';
	}
	size_t rest_len = (size_t)(buf + size - rest);
	memset(&ref, 0, sizeof(ref));
	int r = sri_from_npm(integrity, shasum, &got), rr = ref_npm(integrity, shasum, &ref);
	if (r != rr)
		abort();
	if (r == 0) {
		same(&got, &ref);
		stream(&got, (const uint8_t *)rest, rest_len);
	}
	memset(&ref, 0, sizeof(ref));
	r = sri_from_hex256(integrity, &got);
	if (r != ref_hex(integrity, 32, ref.digest))
		abort();
	if (r == 0) {
		ref.algo = SRI_SHA256;
		ref.len = 32;
		same(&got, &ref);
		stream(&got, (const uint8_t *)rest, rest_len);
	}
	(void)sri_algo_name(got.algo);
	free(buf);
	return 0;
}
