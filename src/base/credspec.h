/* credspec.h - a [credentials] line of a profile, read (credspec.c): which
 * variable inside holds a placeholder, where sbxrun takes the secret from,
 * and the one host (and path prefix) whose requests the egress proxy puts
 * it on (net/cred.h, docs/egress.md "Credentials"). Pure but for the
 * source check, which looks at sbxrun's environment and the file. */
#ifndef SBX_CREDSPEC_H
#define SBX_CREDSPEC_H

#include <stddef.h>

#include "base/err.h"

#define CREDSPEC_MAX_VAR 64
#define CREDSPEC_MAX_SECRET 4096

enum credspec_source { CREDSPEC_ENV, CREDSPEC_FILE };
/* What precedes the secret in the header: Bearer, token, basic (the
 * base64 of USER:TOKEN, git's way) or nothing (a header of another name
 * without scheme=). */
enum credspec_scheme { CREDSPEC_BEARER, CREDSPEC_TOKEN, CREDSPEC_BASIC, CREDSPEC_RAW };

struct sbx_credspec {
	char var[CREDSPEC_MAX_VAR];   /* the variable inside */
	enum credspec_source source;
	char from[4096];              /* env: the variable's name; file: the path */
	char host[256];               /* canonical (lowercase, no trailing dot) */
	unsigned port;                /* 0: 80 and 443 */
	char path[512];               /* "" or a prefix starting with '/' */
	char header[64];              /* "Authorization" unless header= */
	enum credspec_scheme scheme;
};

/* "VAR=SOURCE HOST[:PORT][/PATH] [header=NAME] [scheme=Bearer|token|basic]"
 * (the profile's key and value joined by '='). Strict: anything else is an
 * error saying what is wrong. */
int credspec_parse(const char *line, struct sbx_credspec *out, struct sbx_err *err);
/* The source exists and may be used: env:NAME set and not empty; file:PATH
 * a regular file (not a symlink) of the caller's own, mode 0600 or
 * stricter. The secret itself: one line of printable characters. */
int credspec_check_source(const struct sbx_credspec *c, struct sbx_err *err);
/* Reads the secret into buf (NUL-terminated, a trailing newline dropped),
 * checking the source again on the handle it reads. */
int credspec_read_secret(const struct sbx_credspec *c, char *buf, size_t size, struct sbx_err *err);
/* Whether a request to host:port for target (origin-form, "/...") is the
 * binding's: the same host, the port (or 80/443), the path prefix at a
 * segment boundary. */
int credspec_matches(const struct sbx_credspec *c, const char *host, int port, const char *target);
const char *credspec_scheme_name(enum credspec_scheme s);

#endif
