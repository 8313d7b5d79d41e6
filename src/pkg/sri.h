/* sri.h - the digest an index promises for an artifact (npm's SRI
 * `dist.integrity`, its older `dist.shasum`; later PyPI's and Debian's
 * sha256), and checking bytes against it as they stream past. */
#ifndef SBX_SRI_H
#define SBX_SRI_H

#include <stdbool.h>
#include <stddef.h>

/* SRI_GOH1: Go's h1: hash of a module zip (gosum.h), which no stream of
 * the zip's bytes can be checked against: sri_check_fd checks a file. */
enum sri_algo { SRI_SHA1, SRI_SHA256, SRI_SHA512, SRI_GOH1 };

struct sri {
	enum sri_algo algo;
	unsigned char digest[64];
	size_t len;
	char hex[129];  /* the digest in hex: the artifact's name in the cache */
};

/* npm: the strongest of integrity (SRI, "sha512-<base64>", several
 * space-separated allowed) and shasum (40 hex digits). Returns 0, or -1
 * when neither gives a digest sbxrun can check (sha1 inside an SRI string
 * is taken too; md5 never). */
int sri_from_npm(const char *integrity, const char *shasum, struct sri *out);
/* sha256 as 64 hex digits (PyPI, Debian). */
int sri_from_hex256(const char *hex, struct sri *out);
/* A digest of algo (SHA1, SHA256, SHA512) as hex (Maven's .sha1 and
 * .sha256 files): 0, or -1 when it is not one. */
int sri_from_hex(const char *hex, enum sri_algo algo, struct sri *out);
const char *sri_algo_name(enum sri_algo a);

struct sri_check;
struct sri_check *sri_check_new(const struct sri *want);
/* Go's h1 (32 bytes) as the want of an artifact: 0, or -1 when h is NULL. */
int sri_from_goh1(const unsigned char *h, struct sri *out);
void sri_check_update(struct sri_check *c, const void *p, size_t n);
/* Whether what went through matches; got_hex (129 bytes) gets what it was. */
bool sri_check_end(struct sri_check *c, char *got_hex);
void sri_check_free(struct sri_check *c);
/* Checks a whole open file from offset 0 (the cache's check on serving;
 * for SRI_GOH1, the only check there is). */
bool sri_check_fd(const struct sri *want, int fd);
/* The digest of algo (not SRI_GOH1) of a whole open file, or of n bytes,
 * in hex into hex (129 bytes): 0, or -1 when the file cannot be read. */
int sri_hex_fd(enum sri_algo algo, int fd, char *hex);
void sri_hex_mem(enum sri_algo algo, const void *p, size_t n, char *hex);
/* The SHA256 of n bytes: 32 bytes into digest. */
void sri_sha256(const void *p, size_t n, unsigned char digest[32]);

#endif
