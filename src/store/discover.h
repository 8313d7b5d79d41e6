/* discover.h - an image's own package sources for @npm and @pypi. */
#ifndef SBX_DISCOVER_H
#define SBX_DISCOVER_H

#include <stdbool.h>

#include "base/err.h"

/* Runs the image's own npm and pip once, in a sandbox without network, and
 * records the registry and index they would use in the image's meta.json.
 * Nothing is recorded for a tool the image lacks. system: the image of the
 * system store (root). */
int discover_sources(const char *name, bool system, struct sbx_err *err);

#endif
