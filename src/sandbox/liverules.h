/* liverules.h - the rules a running proxy and its package gateway hold,
 * read again when a file they come from changes: /etc/sbxrun/policy.ini
 * and $SBXRUN_POLICY (the administrator's ceiling), and the profile the
 * sandbox started with ([network] allow; [packages] allow, deny, min_age,
 * offline). What the command line gave at the start is kept. A session's
 * supervisor and `sbxrun proxy --listen` alike (docs/egress.md, "Live
 * rules"). */
#ifndef SBX_LIVERULES_H
#define SBX_LIVERULES_H

#include <stdint.h>

#include "base/config.h"
#include "base/err.h"
#include "base/filewatch.h"
#include "gateway/gateway.h"
#include "net/netplan.h"
#include "net/proxy.h"

struct sbx_liverules {
	const struct sbx_config *started; /* what the proxy was started with */
	enum netplan_for who;             /* a session's (NETPLAN_SANDBOX) or a sidecar's */
	struct hostmatch_sets sets;       /* the image's (its storage outlives this) */
	struct sbx_proxy *px;
	struct sbx_gateway *gw;           /* NULL: no gateway */
	struct filewatch watch;           /* the policy files, the profile */
	char *profile;                    /* its path, or NULL when it cannot be found */
	char *said;                       /* the last trouble told (told once) */
	uint64_t timeout_cap_ms;          /* the policy's [limits] timeout now, 0: none */
};

/* Watches the files for px (and its gateway, if any). A failure to watch
 * is said (log_warn) and leaves the rules as they are. */
void liverules_start(struct sbx_liverules *lr, const struct sbx_config *started, enum netplan_for who,
		     const struct hostmatch_sets *sets, struct sbx_proxy *px);
/* Readable when a watched file may have changed; -1: none watched. */
int liverules_fd(const struct sbx_liverules *lr);
/* Reads what changed and sets the rules again: the policy's ceiling
 * (proxy_set_policy), the allow list (proxy_set_hosts) and the package
 * rules (gateway_set_rules), each an event when it changed. A policy
 * that cannot be read keeps the rules held; a profile that cannot be read
 * keeps what it gave at the start (the policy still applies); each said
 * once. A profile the policy now refuses lets nothing through until one of
 * them changes, said. Returns 1 when the policy was read again, else 0. */
int liverules_changed(struct sbx_liverules *lr);
void liverules_free(struct sbx_liverules *lr);

#endif
