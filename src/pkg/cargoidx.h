/* cargoidx.h - Cargo's sparse registry (RFC 2789), read without any I/O:
 * crate names and the index file's path a name has, one index line (a
 * JSON object per version: name, vers, cksum, yanked, pubtime), an index
 * file filtered line by line, and the registry's config.json. Every byte
 * comes from the network (the upstream's index) or the sandbox (a
 * request), so each is bounded and checked here. */
#ifndef SBX_CARGOIDX_H
#define SBX_CARGOIDX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CARGOIDX_NAME_MAX 64            /* crates.io's longest name */
#define CARGOIDX_VER_MAX 128            /* a semver with pre-release and build */
#define CARGOIDX_PATH_MAX (CARGOIDX_NAME_MAX + 8)
#define CARGOIDX_LINE_MAX (1U << 20)    /* one version's line, its dependencies included */
#define CARGOIDX_LINES_MAX 50000        /* versions in one index file */
#define CARGOIDX_FILE_MAX (32ULL << 20) /* an index file */
#define CARGOIDX_DL_MAX 512             /* config.json's dl */

/* A crate name as a request gives it: ASCII letters, digits, '-' and '_',
 * a letter or '_' first, 1 to 64 bytes; written lower case to out (index
 * paths are). Returns 0 or -1. */
int cargoidx_name(const char *s, size_t len, char *out, size_t size);

/* The index file's path of a (lower-case) name: "1/a", "2/ab", "3/a/abc",
 * "ab/cd/abcd...". */
void cargoidx_path(const char *name, char *out, size_t size);

/* A request's index path ("3/s/syn"): the name, when the path is the one
 * that name has. Returns 0 or -1. */
int cargoidx_path_name(const char *path, size_t len, char *name, size_t size);

/* Whether v is a version as an index line or a download path writes it
 * (a semver: a digit first, then letters, digits and ".+-"). */
bool cargoidx_version(const char *v, size_t n);

struct cargoidx_line {
	char name[CARGOIDX_NAME_MAX + 1]; /* as the line writes it */
	char vers[CARGOIDX_VER_MAX + 1];
	char cksum[65];                   /* sha256 of the .crate, 64 lower-case hex digits */
	bool yanked;
	int64_t pubtime;                  /* Unix seconds; 0: the line has none */
};

/* One line (no newline): 0, or -1 with why (not a JSON object, no name,
 * vers or cksum of the right shape, a pubtime that is not a date). */
int cargoidx_line(const char *p, size_t len, struct cargoidx_line *out, const char **why);

/* What a filter is told of each line of the crate's file: whether it is
 * served (0) or dropped (-1). Lines that do not parse, or name another
 * crate, are dropped before it is asked. */
typedef int (*cargoidx_keep_fn)(void *arg, const struct cargoidx_line *l);

struct cargoidx_filtered {
	char *out;        /* the lines kept, verbatim, each ending in '\n' (malloc'd) */
	size_t len;
	size_t kept, dropped, bad;  /* bad: did not parse or named another crate */
};

/* The index file body of crate name (lower case) with the lines keep
 * refuses taken out. Returns 0, or -1 with why when the file passes a
 * bound (size, a line's length, the number of lines). */
int cargoidx_filter(const char *body, size_t len, const char *name, cargoidx_keep_fn keep, void *arg,
		    struct cargoidx_filtered *f, const char **why);

/* The first line of version vers of crate name: 1 found, 0 none, -1
 * past a bound (why). */
int cargoidx_find(const char *body, size_t len, const char *name, const char *vers, struct cargoidx_line *out,
		  const char **why);

/* config.json's "dl" (a URL, its markers {crate} {version} {prefix}
 * {lowerprefix} {sha256-checksum} or none): 0, or -1 with why. */
int cargoidx_config_dl(const char *body, size_t len, char *dl, size_t size, const char **why);

/* The download URL of one version from dl, as Cargo builds it: the
 * markers replaced, or "/{crate}/{version}/download" appended when dl has
 * none. Returns 0, or -1 when it does not fit. */
int cargoidx_dl_url(const char *dl, const struct cargoidx_line *l, char *out, size_t size);

#endif
