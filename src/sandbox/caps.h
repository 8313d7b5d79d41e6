/* caps.h - dropping every capability before the command runs (libcap-ng). */
#ifndef SBX_CAPS_H
#define SBX_CAPS_H

#include <stddef.h>

#include "base/err.h"

/* Clears the bounding, ambient, inheritable, permitted and effective sets,
 * then sets no_new_privs, so that neither exec nor a setuid binary can give
 * a capability back. The bounding set needs CAP_SETPCAP to change: the
 * sandbox's command child has it (full capabilities in its own user
 * namespace); an ordinary process without it keeps its bounding set, which
 * no_new_privs makes harmless. Also works after a setuid with
 * PR_SET_KEEPCAPS (it raises the permitted CAP_SETPCAP first). Verifies the
 * result by reading the sets back. */
int caps_drop_all(struct sbx_err *err);

/* The same, but the capabilities in keep (numbers, CAP_*) stay effective
 * and permitted, and in the bounding set: for an init that still needs
 * them after its setup. Needs CAP_SETPCAP (permitted at least) to bound
 * the set; without it the bounding set is left as it is. */
int caps_keep_only(const unsigned *keep, size_t n, struct sbx_err *err);

#endif
