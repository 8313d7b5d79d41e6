/* gosum.c - Go's checksum database, checked (gosum.h). The formats are
 * golang.org/x/mod's: sumdb/dirhash (Hash1), sumdb's lookup answer and
 * sumdb/note's signed notes and verifier keys. */
#define _GNU_SOURCE
#include "pkg/gosum.h"

#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "pkg/sri.h"

#define ZIP_FILES_MAX 100000

struct line {
	char *name;
	char hex[65];
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->name, ((const struct line *)b)->name);
}

/* Hash1 over the lines, sorted by name (bytewise, as Go's sort.Strings). */
static void hash1(struct line *l, size_t n, unsigned char h1[32])
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	unsigned int len = 32;

	if (n > 1)
		qsort(l, n, sizeof(*l), by_name);
	EVP_DigestInit_ex(c, EVP_sha256(), NULL);
	for (size_t i = 0; i < n; i++) {
		EVP_DigestUpdate(c, l[i].hex, 64);
		EVP_DigestUpdate(c, "  ", 2);
		EVP_DigestUpdate(c, l[i].name, strlen(l[i].name));
		EVP_DigestUpdate(c, "\n", 1);
	}
	EVP_DigestFinal_ex(c, h1, &len);
	EVP_MD_CTX_free(c);
}

void gosum_mod_h1(const void *p, size_t n, unsigned char h1[32])
{
	unsigned char d[32];
	struct line l = { .name = (char *)"go.mod" };

	sri_sha256(p, n, d);
	hex_encode(d, 32, l.hex);
	hash1(&l, 1, h1);
}

/* One entry's bytes hashed; total counts what was unzipped so far. */
static int entry_hash(struct archive *a, struct line *l, uint64_t *total, const char **why)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	unsigned char buf[65536], d[32];
	unsigned int dl = 32;
	la_ssize_t n;

	EVP_DigestInit_ex(c, EVP_sha256(), NULL);
	while ((n = archive_read_data(a, buf, sizeof(buf))) > 0) {
		if ((*total += (uint64_t)n) > GOSUM_ZIP_MAX) {
			EVP_MD_CTX_free(c);
			return *why = "the zip unpacks to more than 500 MiB", -1;
		}
		EVP_DigestUpdate(c, buf, (size_t)n);
	}
	EVP_DigestFinal_ex(c, d, &dl);
	EVP_MD_CTX_free(c);
	if (n < 0)
		return *why = "the zip is damaged", -1;
	hex_encode(d, 32, l->hex);
	return 0;
}

int gosum_zip_h1(int fd, unsigned char h1[32], const char **why)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	struct line *l = NULL;
	size_t n = 0;
	uint64_t total = 0;
	int r = -1, st;
	const char *w;

	if (!why)
		why = &w;
	*why = "the zip is damaged";
	if (!a || lseek(fd, 0, SEEK_SET) < 0 || archive_read_support_format_zip_seekable(a) != ARCHIVE_OK ||
	    archive_read_open_fd(a, fd, 65536) != ARCHIVE_OK)
		goto out;
	while ((st = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);
		if (!name || !name[0] || strchr(name, '\n')) {
			*why = "a file name in the zip the go command refuses";
			goto out;
		}
		if (n >= ZIP_FILES_MAX) {
			*why = "the zip holds too many files";
			goto out;
		}
		l = xrealloc(l, (n + 1) * sizeof(*l));
		l[n].name = xstrdup(name);
		if (entry_hash(a, &l[n++], &total, why) < 0)
			goto out;
	}
	if (st != ARCHIVE_EOF)
		goto out;
	hash1(l, n, h1);
	r = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(l[i].name);
	free(l);
	if (a)
		archive_read_free(a);
	return r;
}

/* Standard base64 (padded) of exactly want bytes, canonical only. */
static int b64(const char *s, size_t len, unsigned char *out, size_t want)
{
	unsigned char buf[128], back[192];

	if (len == 0 || len % 4 || len > 168 || 4 * ((want + 2) / 3) != len)
		return -1;
	char in[172];
	memcpy(in, s, len);
	in[len] = '\0';
	if (strspn(in, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") != len ||
	    EVP_DecodeBlock(buf, (const unsigned char *)in, (int)len) < (int)want)
		return -1;
	EVP_EncodeBlock(back, buf, (int)want);
	if (strlen((char *)back) != len || memcmp(back, in, len) != 0)
		return -1;
	memcpy(out, buf, want);
	return 0;
}

void gosum_h1_string(const unsigned char h[32], char *out, size_t size)
{
	unsigned char b[64];

	EVP_EncodeBlock(b, h, 32);
	snprintf(out, size, "h1:%s", b);
}

/* "PATH VERSION[/go.mod] h1:B64" for this path and version. */
static int record_line(const char *p, size_t l, const char *path, const char *version, unsigned char zip[32],
		       unsigned char mod[32], int *have)
{
	size_t pl = strlen(path), vl = strlen(version);

	if (l < pl + vl + 5 || memcmp(p, path, pl) != 0 || p[pl] != ' ' || memcmp(p + pl + 1, version, vl) != 0)
		return -1;
	const char *q = p + pl + 1 + vl, *end = p + l;
	bool is_mod = (size_t)(end - q) > 7 && memcmp(q, "/go.mod", 7) == 0;
	if (is_mod)
		q += 7;
	if (end - q < 4 || memcmp(q, " h1:", 4) != 0 || b64(q + 4, (size_t)(end - q - 4), is_mod ? mod : zip, 32) < 0)
		return -1;
	*have |= is_mod ? 2 : 1;
	return 0;
}

int gosum_lookup(const char *body, size_t len, const char *path, const char *version, unsigned char zip[32],
		 unsigned char mod[32], size_t *note, const char **why)
{
	const char *p = body, *end = body + len, *w;
	int have = 0;
	size_t lines = 0;

	if (!why)
		why = &w;
	for (;;) {
		const char *nl = p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		if (!nl)
			return *why = "the lookup answer ends before its signed note", -1;
		size_t l = (size_t)(nl - p);
		if (lines == 0) {
			if (l == 0 || l > 19 || strspn(p, "0123456789") < l)
				return *why = "the lookup answer does not start with a record number", -1;
		} else if (l == 0) {
			p = nl + 1;
			break;
		} else if (memchr(p, '\0', l) || record_line(p, l, path, version, zip, mod, &have) < 0) {
			return *why = "the lookup answer holds a line for another module or a bad hash", -1;
		}
		p = nl + 1;
		if (++lines > 3)
			return *why = "the lookup answer holds more than its two lines", -1;
	}
	if (have != 3)
		return *why = "the lookup answer lacks the zip's or the go.mod's hash", -1;
	*note = (size_t)(p - body);
	return 0;
}

/* The verifier key's parts: name, its 32-bit hash, the ed25519 key. */
static int vkey_parse(const char *vkey, size_t *nl, uint32_t *hash, unsigned char key[32], const char **why)
{
	const char *p1 = strchr(vkey, '+'), *p2 = p1 ? strchr(p1 + 1, '+') : NULL;
	unsigned char raw[33], d[32];
	char hex[9];

	*why = "not a verifier key NAME+HASH+KEY";
	if (!p1 || !p2 || p1 == vkey || p2 - p1 != 9 || strcspn(vkey, " \t\n\r") != strlen(vkey))
		return -1;
	memcpy(hex, p1 + 1, 8);
	hex[8] = '\0';
	if (strspn(hex, "0123456789abcdef") != 8 || b64(p2 + 1, strlen(p2 + 1), raw, 33) < 0)
		return -1;
	if (raw[0] != 1)
		return *why = "the verifier key is not an ed25519 key", -1;
	/* the hash: SHA-256 of NAME "\n" and the key's bytes, its first 4 */
	size_t n = (size_t)(p1 - vkey);
	_cleanup_free_ unsigned char *buf = xmalloc(n + 1 + 33);
	memcpy(buf, vkey, n);
	buf[n] = '\n';
	memcpy(buf + n + 1, raw, 33);
	sri_sha256(buf, n + 34, d);
	*hash = (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
	if (strtoul(hex, NULL, 16) != *hash)
		return *why = "the verifier key's hash does not match its name and key", -1;
	memcpy(key, raw + 1, 32);
	*nl = n;
	return 0;
}

int gosum_vkey_check(const char *vkey, size_t *name_len, const char **why)
{
	uint32_t h;
	unsigned char k[32];
	const char *w;

	return vkey_parse(vkey, name_len, &h, k, why ? why : &w);
}

static bool ed25519_ok(const unsigned char key[32], const unsigned char *sig, const char *msg, size_t n)
{
	EVP_PKEY *k = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, key, 32);
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	bool ok = k && c && EVP_DigestVerifyInit(c, NULL, NULL, NULL, k) == 1 &&
		  EVP_DigestVerify(c, sig, 64, (const unsigned char *)msg, n) == 1;

	EVP_MD_CTX_free(c);
	EVP_PKEY_free(k);
	return ok;
}

int gosum_note_verify(const char *note, size_t len, const char *vkey, const char **why)
{
	static const char dash[] = "\xe2\x80\x94 ";  /* U+2014 and a space */
	unsigned char key[32], sig[68];
	uint32_t hash;
	size_t nl, text = 0;
	const char *w;

	if (!why)
		why = &w;
	if (vkey_parse(vkey, &nl, &hash, key, why) < 0)
		return -1;
	for (size_t i = 0; i + 1 < len; i++)  /* the last blank line ends the text */
		if (note[i] == '\n' && note[i + 1] == '\n')
			text = i + 1;
	if (!text || memchr(note, '\0', len))
		return *why = "the signed note has no signatures", -1;
	for (const char *p = note + text + 1, *end = note + len; p < end;) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		if (!e)
			break;
		size_t l = (size_t)(e - p);
		if (l > 4 + nl + 1 && memcmp(p, dash, 4) == 0 && memcmp(p + 4, vkey, nl) == 0 && p[4 + nl] == ' ' &&
		    b64(p + 5 + nl, l - 5 - nl, sig, 68) == 0 &&
		    ((uint32_t)sig[0] << 24 | (uint32_t)sig[1] << 16 | (uint32_t)sig[2] << 8 | sig[3]) == hash)
			return ed25519_ok(key, sig + 4, note, text) ? 0 : (*why = "the note's signature is not valid", -1);
		p = e + 1;
	}
	return *why = "the note carries no signature by the checksum database's key", -1;
}
