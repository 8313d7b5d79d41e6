/* profwrite.h - a host appended to the user's own profile ("always" of
 * `sbxrun net allow --for always` and of the question on the terminal):
 * only a profile in the user's profile directory, or a file named by its
 * path that the user owns; never a system or stock one, even for root. */
#ifndef SBX_PROFWRITE_H
#define SBX_PROFWRITE_H

#include "base/err.h"

/* The path of profile NAME when it is the user's own, else -1 with err
 * naming why ("is not one of yours; copy it into DIR first"). */
int profwrite_own(const char *name, char **path, struct sbx_err *err);
/* Appends "[network] allow = HOST" to path, after a comment saying when
 * and why (by: "'sbxrun net allow --for always' for session 'x'"). */
int profwrite_allow(const char *path, const char *by, const char *host, struct sbx_err *err);

#endif
