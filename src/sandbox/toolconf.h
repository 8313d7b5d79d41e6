/* toolconf.h - the image's package tools that read no environment variable
 * for what the gateway needs, pointed at the package gateway by a file:
 * Cargo's source replacement, Maven's mirror, Gradle's init script. A
 * sandbox gets them in its layer at setup (the image is never written),
 * the landlock tier in its private HOME, a Kubernetes pod from a ConfigMap
 * (cluster/kube_yaml.c), each from the one text made here. */
#ifndef SBX_TOOLCONF_H
#define SBX_TOOLCONF_H

#include "base/err.h"
#include "sandbox/plan.h"

/* Where the tools reach the gateway: the proxy, and for a pod's sidecar
 * its user and the variable that holds its password (NULL: none). */
struct toolconf_proxy {
	const char *host;
	unsigned port;
	const char *user;
	const char *password_env;
};

/* Cargo's config.toml: crates-io replaced by the gateway's sparse registry
 * (the proxy is CARGO_HTTP_PROXY's, netplan.c). Static. */
const char *toolconf_cargo_text(void);
/* Maven's settings.xml: a mirror of every repository (mirrorOf *) at the
 * gateway's /maven/, and the proxy (Maven reads no http_proxy). Owned. */
char *toolconf_maven_text(const struct toolconf_proxy *p);
/* Gradle's init script (init.d/sbxrun.gradle): every http(s) Maven
 * repository of every project, of its buildscript and of the settings'
 * plugin management read from the gateway's /maven/ (one added where
 * plugin management names none), the JVM's proxy set. Owned. */
char *toolconf_gradle_text(const struct toolconf_proxy *p);

/* rootfd: the new root, before pivot_root. Returns 0 or -1.
 * - Under the plan's network with the gateway's Cargo registry: /.cargo/
 *   config.toml, which every project's directory below / reads after its
 *   own and before $CARGO_HOME's.
 * - With a Maven upstream ([packages] maven) and packages egress: in root's
 *   HOME and in [sandbox] user's, .m2/settings.xml and Gradle's
 *   init.d/sbxrun.gradle below GRADLE_USER_HOME (of that user's
 *   environment; HOME/.gradle without one). A file the image has already
 *   is left as it is (the tool then goes where it says, through the
 *   proxy's allow list). */
int toolconf_write(const struct sbx_plan *plan, int rootfd, struct sbx_err *err);
/* The landlock tier, on the host side before the command starts: the same
 * files in its private HOME (home, the caller's own directory; Cargo's as
 * HOME/.cargo/config.toml, which is CARGO_HOME's default and below the
 * working directory), the proxy at its loopback port. */
int toolconf_write_home(const struct sbx_plan *plan, const char *home, unsigned port,
			struct sbx_err *err);

#endif
