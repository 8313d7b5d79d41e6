/* cred.h - credentials brokered by the egress proxy ([credentials],
 * base/credspec.h; docs/egress.md "Credentials"): each binding's secret,
 * read on the host side into memory a forked or cloned child gets zeroed
 * (MADV_WIPEONFORK), and the random placeholder the sandbox holds instead.
 * A request head to a binding's host (and path prefix) gets the secret in
 * place of the placeholder, or the header added; a head carrying a
 * placeholder to any other host is refused. */
#ifndef SBX_CRED_H
#define SBX_CRED_H

#include <stdbool.h>
#include <stddef.h>

#include "base/config.h"
#include "base/err.h"

/* "sbxrun-cred-" and 32 hex digits: 128 random bits. */
#define CRED_PLACEHOLDER_LEN 44

struct sbx_creds;

/* Reads every [credentials] line (cfg->creds): the secrets now, each
 * placeholder fresh. An env: source's value is wiped from sbxrun's own
 * environment once read (a process forked later holds no copy). */
int cred_load(const struct sbx_strlist *lines, struct sbx_creds **out, struct sbx_err *err);
void cred_free(struct sbx_creds *cr);
size_t cred_count(const struct sbx_creds *cr);
const char *cred_var(const struct sbx_creds *cr, size_t i);
const char *cred_placeholder(const struct sbx_creds *cr, size_t i);
/* Whether some binding names host:port (a CONNECT there is brokered). */
bool cred_binds(const struct sbx_creds *cr, const char *host, int port);
/* The bound hosts, once each (for the CA's name constraints); NULL-terminated. */
const char **cred_hosts(const struct sbx_creds *cr);

enum cred_verdict { CRED_NONE, CRED_USED, CRED_REFUSED };
/* One origin-form request head head[0..len) ("METHOD /target HTTP/1.1\r\n
 * ...\r\n\r\n") bound for host:port: CRED_REFUSED when it carries the
 * placeholder of a binding it is not for (or one in its target), with
 * *var naming it; CRED_USED with *out (malloc'd, *outlen) the head with the
 * secret put in, *var the binding; CRED_NONE: send it as it is. */
enum cred_verdict cred_rewrite(const struct sbx_creds *cr, const char *host, int port, const char *head,
			       size_t len, char **out, size_t *outlen, const char **var);
/* Whether buf[0..len) holds any placeholder (a CONNECT's head); *var names it. */
bool cred_carried(const struct sbx_creds *cr, const char *buf, size_t len, const char **var);

#endif
