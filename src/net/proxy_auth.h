/* proxy_auth.h - the shared secret of `sbxrun proxy --listen`: a client
 * proves it with "Proxy-Authorization: Basic base64(USER:PASSWORD)". */
#ifndef SBX_PROXY_AUTH_H
#define SBX_PROXY_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

/* Longest secret accepted ("USER:PASSWORD", or a password alone). */
#define PROXY_AUTH_MAX 256

/* Checks a secret as read from a file or the environment: one line (a
 * trailing newline is cut off by the caller), printable, not empty, at
 * most PROXY_AUTH_MAX bytes. what names its source for the message. */
int proxy_auth_valid(const char *secret, const char *what, struct sbx_err *err);

/* Whether a Proxy-Authorization value proves secret. "USER:PASSWORD"
 * must match whole; a secret without ':' is a password, and any user name
 * goes with it. Takes the same time whatever the value's first wrong byte. */
bool proxy_auth_check(const char *secret, const char *value);

/* Base64 (RFC 4648, padded or not); returns the length, or -1 when the
 * input is not base64 or does not fit out (which it NUL-terminates). */
int proxy_auth_b64decode(const char *in, size_t len, char *out, size_t size);

#endif
