/* tlsca.h - the certificate authority one sandbox's credential broker
 * makes (tlsca.c): an ECDSA P-256 key and a CA certificate whose name
 * constraints permit only the hosts with a binding, so a certificate it
 * signed is worth nothing for any other name; a leaf per host on first
 * use. The keys live in the host side's memory alone; the sandbox gets the
 * CA's certificate (tlsca_pem) in the bundle it trusts. Thread-safe. */
#ifndef SBX_TLSCA_H
#define SBX_TLSCA_H

#include "base/err.h"

struct sbx_tlsca;
struct ssl_ctx_st;

/* hosts: canonical names or IP literals, NULL-terminated. */
int tlsca_new(const char *const *hosts, struct sbx_tlsca **out, struct sbx_err *err);
/* The CA certificate, PEM. */
const char *tlsca_pem(const struct sbx_tlsca *ca);
/* The server context for host (a leaf made and kept on first use), or
 * NULL with err. Owned by ca. */
struct ssl_ctx_st *tlsca_server(struct sbx_tlsca *ca, const char *host, struct sbx_err *err);
void tlsca_free(struct sbx_tlsca *ca);

#endif
