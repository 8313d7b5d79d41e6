/* imgmeta.h - what sbxrun learns from an image's own files: its environment
 * and the hosts of its apt sources. */
#ifndef SBX_IMGMETA_H
#define SBX_IMGMETA_H

#include <stddef.h>

#include "base/err.h"

/* A NULL-ended string list with its length, unique entries in order. */
struct sbx_list { char **v; size_t n; };
void imgmeta_list_add(struct sbx_list *l, const char *s, size_t len);
void imgmeta_list_free(char **v);

/* Moves the package sources an image may not grant (loopback, private,
 * link-local, *.sbxrun.internal: hostaddr_image_refusal) from l to dropped,
 * as "SOURCE: why". */
void imgmeta_vet_sources(struct sbx_list *l, struct sbx_list *dropped);

/* KEY=VALUE lines of /etc/environment (quotes removed, comments skipped). */
void imgmeta_parse_environment(const char *text, struct sbx_list *env);
/* Hosts of one-line style sources ("deb [opts] URI suite comps"). */
void imgmeta_parse_sources_list(const char *text, struct sbx_list *hosts);
/* Hosts of deb822 style sources ("URIs: URI..."). */
void imgmeta_parse_deb822(const char *text, struct sbx_list *hosts);
/* Reads both from the rootfs below rootfd (never following a symlink out of
 * it); missing files give empty lists. */
int imgmeta_read(int rootfd, struct sbx_list *env, struct sbx_list *hosts, struct sbx_err *err);

#endif
