/* toolconf.h - package tools' configuration files that sbxrun writes into
 * the sandbox's writable layer (the image is never written) where a
 * tool has no environment variable for what the gateway needs: Cargo's
 * source replacement. */
#ifndef SBX_TOOLCONF_H
#define SBX_TOOLCONF_H

#include "base/err.h"
#include "sandbox/plan.h"

/* Under the plan's network (the gateway's Cargo registry): /.cargo/
 * config.toml, which every project's directory below / reads after its
 * own and before $CARGO_HOME's, replacing crates.io with the gateway.
 * rootfd: the new root, before pivot_root. Returns 0 or -1. */
int toolconf_write(const struct sbx_plan *plan, int rootfd, struct sbx_err *err);

#endif
