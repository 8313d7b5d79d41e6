/* toolconf.h - the image's package tools that read no environment variable
 * for their repository, pointed at the package gateway by a file written
 * into the sandbox's layer at setup (the image is never written). */
#ifndef SBX_TOOLCONF_H
#define SBX_TOOLCONF_H

#include "base/err.h"
#include "sandbox/plan.h"

/* With a Maven upstream ([packages] maven) and packages egress: HOME's
 * .m2/settings.xml, a mirror of every repository (mirrorOf *) at the
 * gateway's /maven/ and the proxy Maven reaches it through (Maven reads
 * no http_proxy). One the image has already is left as it is (Maven then
 * goes where it says, through the proxy's allow list). 0 or -1. */
int toolconf_write(const struct sbx_plan *plan, int rootfd, struct sbx_err *err);

#endif
