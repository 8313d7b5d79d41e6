/* upstream.h - [packages] upstreams (npm, pypi, go, go_sumdb, cargo,
 * maven): checked, and the allow-list entries they need. */
#ifndef SBX_UPSTREAM_H
#define SBX_UPSTREAM_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "base/options.h"

struct sbx_config;

/* The allow-list entry ("HOST[:PORT]") a package upstream URL ([packages]
 * npm) needs: the gateway reaches an upstream only through the allow list,
 * so a policy's [network] allow caps it too. -1: not a valid upstream. */
int config_upstream_entry(const char *url, char *out, size_t size);
/* Why url is no package upstream (https://, or http:// to
 * host.sbxrun.internal:PORT; no private address), or NULL when it is one
 * ([packages] malicious = URL is checked so too). */
const char *config_upstream_why(const char *url);
/* Whether v is the image's own source for [packages] key: @go for go,
 * @cargo for cargo, @maven for maven (the allow list's sets alike). */
bool config_image_source(const char *v, enum sbx_key key);
/* What a proxy of cfg serves besides the profile's own list, given before
 * the policy so that a policy that does not cover one drops it (policy.c):
 * packages egress with no list (or `sbxrun proxy`, proxy_alone) the
 * image's sets; a profile's package upstream an entry of that profile
 * line's. The command line's build and a running one's reading again
 * (sandbox/liverules.c) alike. */
void config_proxy_defaults(struct sbx_config *cfg, bool proxy_alone);
/* The URL of [packages] go_sumdb's value ("NAME+HASH+KEY URL"), or NULL. */
const char *config_go_sumdb_url(const char *v);
/* [packages] cargo's value ("INDEX-URL [DOWNLOAD-URL]"): the index's URL
 * copied to buf, or NULL; the download host's URL, or NULL when none. */
const char *config_cargo_index(const char *v, char *buf, size_t size);
const char *config_cargo_dl(const char *v);
/* Each [packages] upstream's value, refused at load with the reason. */
int config_check_upstreams(const struct sbx_config *cfg, struct sbx_err *err);

#endif
