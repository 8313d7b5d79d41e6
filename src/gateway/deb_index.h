/* deb_index.h - what the gateway knows of Debian archives: the Packages
 * indexes apt fetched through it, read into the .deb files they list
 * (path -> package, version, SHA256, size; kept as debidx.h says), the
 * request paths apt sends, normalised and sorted into kinds, and
 * compressed indexes unpacked. */
#ifndef SBX_DEB_INDEX_H
#define SBX_DEB_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "gateway/sri.h"

#define DEB_PATH_MAX 1024

/* A request path as the index keys it: %XX decoded, "//" and "/./"
 * collapsed, no leading '/'. -1 for "..", a NUL, a control character or
 * bad escapes. */
int deb_path_norm(const char *in, size_t len, char *out, size_t size);

enum deb_kind {
	DEB_ARTIFACT,  /* a .deb, .udeb or .ddeb: served only as its index says */
	DEB_BYHASH,    /* .../by-hash/SHA256/HEX: checked against its own name */
	DEB_PACKAGES,  /* a Packages index (plain or compressed): parsed, passed on */
	DEB_INDEX,     /* InRelease, Release, Release.gpg, Sources, Translation-LANG,
			* Contents-ARCH (plain or compressed) and their pdiffs: apt's
			* own index files, which it checks against the signed
			* Release; passed on */
	DEB_OTHER,     /* anything else (source packages, any other file, under
			* dists/ or not): refused */
};
/* The kind of a normalised path; for DEB_BYHASH, hex gets the digest and
 * the kind tells whether it sits in a binary-ARCH directory (a Packages). */
enum deb_kind deb_classify(const char *path, char hex[65], int *packages);

/* "HOST/ROOT" the Filename fields of the Packages index at HOST/PATH are
 * relative to: what precedes "/dists/", else the index's directory. */
void deb_index_root(const char *key, char *out, size_t size);

/* One .deb a Packages index lists, as deb_index_each hands it over. */
struct deb_stanza {
	char path[DEB_PATH_MAX];  /* its Filename, normalised (deb_path_norm) */
	char package[256], version[256];
	unsigned char sha256[32];
	uint64_t size;            /* 0: the index gave none */
};
typedef void (*deb_stanza_fn)(void *arg, const struct deb_stanza *s);

/* Calls fn for each stanza of one Packages text (plain) that names a
 * Filename, Package, Version and a well-formed SHA256, in the text's
 * order; returns how many, or -1 with err when it is no Packages index. */
long deb_index_each(const char *text, size_t len, deb_stanza_fn fn, void *arg, struct sbx_err *err);

/* Unpacks gzip, xz, bzip2, zstd (what libarchive's filters read) or
 * passes plain text on, written to fd from where it stands (the caller
 * maps it to read it: deb_index_each); fewer than max bytes out, their
 * count in *out_len. 0 or -1 with err. */
int deb_unpack(const void *p, size_t n, size_t max, int fd, size_t *out_len, struct sbx_err *err);

#endif
