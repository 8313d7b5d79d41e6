/* toolconf.h - the image's package tools that read no environment variable
 * for what the gateway needs, pointed at the package gateway by a file
 * written into the sandbox's layer at setup (the image is never written):
 * Cargo's source replacement, Maven's mirror. */
#ifndef SBX_TOOLCONF_H
#define SBX_TOOLCONF_H

#include "base/err.h"
#include "sandbox/plan.h"

/* rootfd: the new root, before pivot_root. Returns 0 or -1.
 * - Under the plan's network with the gateway's Cargo registry: /.cargo/
 *   config.toml, which every project's directory below / reads after its
 *   own and before $CARGO_HOME's, replacing crates.io with the gateway.
 * - With a Maven upstream ([packages] maven) and packages egress: HOME's
 *   .m2/settings.xml, a mirror of every repository (mirrorOf *) at the
 *   gateway's /maven/ and the proxy Maven reaches it through (Maven reads
 *   no http_proxy). One the image has already is left as it is (Maven then
 *   goes where it says, through the proxy's allow list). */
int toolconf_write(const struct sbx_plan *plan, int rootfd, struct sbx_err *err);

#endif
