/* netns.h - the sandbox's own network namespace. */
#ifndef SBX_NETNS_H
#define SBX_NETNS_H

#include "err.h"

/* Child side: brings `lo` up (it starts down in a new namespace). */
int netns_loopback_up(struct sbx_err *err);

#endif
