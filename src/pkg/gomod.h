/* gomod.h - the Go module proxy protocol's names and documents, without
 * any I/O: module paths and versions as a request spells them (`!`-escaped
 * capitals), checked as strictly as the go command checks them; the
 * `@v/list` and `.info`/`@latest` documents from upstream. */
#ifndef SBX_GOMOD_H
#define SBX_GOMOD_H

#include <stdbool.h>
#include <stddef.h>

#define GOMOD_PATH_MAX 512  /* escaped; longer paths are refused */
#define GOMOD_VER_MAX 128

/* A module path as the proxy protocol escapes it (each capital written as
 * '!' and its lower-case letter): decoded into out, checked as
 * golang.org/x/mod/module's CheckPath checks one (ASCII letters, digits
 * and "-._~", elements neither empty nor starting or ending with '.', the
 * first a lower-case domain with a dot, no Windows-reserved element).
 * Returns 0 or -1 (why: a short reason). */
int gomod_path(const char *esc, size_t len, char *out, size_t size, const char **why);

/* A version, escaped the same way: canonical semantic version
 * (vMAJOR.MINOR.PATCH[-PRERELEASE][+incompatible]), no query or branch
 * name. Returns 0 or -1. */
int gomod_version(const char *esc, size_t len, char *out, size_t size, const char **why);

/* The escaped form of a checked path or version (the inverse). */
int gomod_escape(const char *s, char *out, size_t size);

/* What follows MOD/ in a request: the kind and, for the three files, the
 * version. */
enum gomod_kind { GOMOD_LIST, GOMOD_LATEST, GOMOD_INFO, GOMOD_MOD, GOMOD_ZIP };
struct gomod_req {
	enum gomod_kind kind;
	char path[GOMOD_PATH_MAX];     /* decoded */
	char esc[GOMOD_PATH_MAX];      /* as upstream is asked (canonical escape) */
	char version[GOMOD_VER_MAX];   /* decoded; "" for list and latest */
	char vesc[GOMOD_VER_MAX];
};
/* A whole request path below the proxy's root ("MOD/@v/list",
 * "MOD/@v/VER.info|.mod|.zip", "MOD/@latest"). Returns 0 or -1. */
int gomod_request(const char *p, size_t len, struct gomod_req *r, const char **why);

/* An `@v/list` body: one version a line; lines that are not a canonical
 * version are dropped (counted in *dropped). The versions are written
 * into out, each NUL-terminated, and *n says how many. Returns 0, or -1
 * when the list is too large (max versions). */
int gomod_list(const char *body, size_t len, char (*out)[GOMOD_VER_MAX], size_t max, size_t *n,
	       size_t *dropped);

/* The Version of an `.info` or `@latest` document ({"Version": ..., "Time":
 * ...}): 0 with it checked and copied, or -1. Time is never read: a
 * publisher chooses it. */
int gomod_info_version(const char *body, size_t len, char *out, size_t size);

#endif
