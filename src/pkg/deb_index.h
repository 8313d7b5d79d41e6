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
#include "pkg/sri.h"

#define DEB_PATH_MAX 1024

/* A request path as the index keys it: %XX decoded, "//" and "/./"
 * collapsed, no leading '/'. -1 for "..", a NUL, a control character or
 * bad escapes. */
int deb_path_norm(const char *in, size_t len, char *out, size_t size);

enum deb_kind {
	DEB_ARTIFACT,  /* a .deb, .udeb or .ddeb: served only as its index says */
	DEB_BYHASH,    /* .../by-hash/SHA256/HEX: checked against its own name */
	DEB_PACKAGES,  /* a Packages or Sources index (plain or compressed): read
			* into the table of the files it lists, passed on */
	DEB_INDEX,     /* InRelease, Release, Release.gpg, Translation-LANG,
			* Contents-ARCH (plain or compressed) and their pdiffs: apt's
			* own index files, which it checks against the signed
			* Release; passed on */
	DEB_OTHER,     /* anything else: served only where a Sources index lists
			* it (a source package's .dsc, tarballs, signatures), as a
			* .deb is; else refused */
};
/* The kind of a normalised path; for DEB_BYHASH, hex gets the digest and
 * *packages tells whether it sits in a binary-ARCH or source directory (a
 * Packages or Sources index). */
enum deb_kind deb_classify(const char *path, char hex[65], int *packages);

/* "HOST/ROOT" the Filename fields of the Packages index at HOST/PATH are
 * relative to: what precedes "/dists/", else the index's directory. */
void deb_index_root(const char *key, char *out, size_t size);

/* One file an index lists, as deb_index_each hands it over: a .deb of a
 * Packages index, or one file of a source package in a Sources index
 * (package and version then the source package's). */
struct deb_stanza {
	char path[DEB_PATH_MAX];  /* its Filename, normalised (deb_path_norm) */
	char package[256], version[256];
	unsigned char sha256[32];
	uint64_t size;            /* 0: the index gave none */
};
typedef void (*deb_stanza_fn)(void *arg, const struct deb_stanza *s);

/* Calls fn, in the text's order, for each stanza of one Packages text
 * (plain) that names a Filename, Package, Version and a well-formed
 * SHA256, and for each file of a Sources stanza that names a Package,
 * Version, Directory and, in one Checksums-Sha256, the file's SHA256, size
 * and a name without '/'; returns how many, or -1 with err when it is
 * neither index. */
long deb_index_each(const char *text, size_t len, deb_stanza_fn fn, void *arg, struct sbx_err *err);

/* Unpacks gzip, xz, bzip2, zstd (what libarchive's filters read) or
 * passes plain text on, written to fd from where it stands (the caller
 * maps it to read it: deb_index_each); fewer than max bytes out, their
 * count in *out_len. 0 or -1 with err. */
int deb_unpack(const void *p, size_t n, size_t max, int fd, size_t *out_len, struct sbx_err *err);

#endif
