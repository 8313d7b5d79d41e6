/* tlsmitm.h - the credential broker's HTTPS side (tlsmitm.c): a CONNECT
 * to a host with a binding, and only such a CONNECT, is answered with TLS
 * under a leaf of the sandbox's CA (net/tlsca.h); the proxy meanwhile
 * speaks verified TLS to the upstream (the host's CA bundle, the name
 * checked) and relays HTTP/1.1 requests one by one through cred_rewrite
 * (net/cred.h): the secret put in, or a 403 for a placeholder sent where it
 * does not belong. One thread per brokered connection, off the proxy's
 * loop (blocking TLS, bounded by timeouts). */
#ifndef SBX_TLSMITM_H
#define SBX_TLSMITM_H

#include <stdbool.h>

#include "base/err.h"
#include "net/cred.h"
#include "net/tlsca.h"

struct sbx_tlsmitm;

/* ca and cr must outlive it; events_fd: -1 or the --events file. */
int tlsmitm_new(struct sbx_tlsca *ca, const struct sbx_creds *cr, int events_fd, struct sbx_tlsmitm **out,
		struct sbx_err *err);
/* Takes cfd (the sandbox's side, the CONNECT answered with 200) and ufd
 * (connected to a vetted address of host, or a tunnel through the upstream
 * proxy) and brokers them; both are closed when it ends. */
int tlsmitm_start(struct sbx_tlsmitm *m, int cfd, int ufd, const char *host, int port, struct sbx_err *err);
/* A tightening: every brokered connection for which cut(arg, host, port)
 * says so ends within a second (cut is called in the caller's thread). */
void tlsmitm_cut(struct sbx_tlsmitm *m, bool (*cut)(void *arg, const char *host, int port), void *arg);
/* Ends every brokered connection (within about a second) and frees m. */
void tlsmitm_free(struct sbx_tlsmitm *m);

#endif
