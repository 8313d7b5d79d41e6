/* netplan.h - the network plan: what a profile's egress mode and an image's
 * package sources mean, decided once (netplan_derive) and read by every
 * place that touches the network: the sandbox (its namespace, DNS stub,
 * proxy door, resolv.conf, apt's configuration, environment), `sbxrun
 * proxy`, and the Kubernetes export. Nothing else reads cfg->egress. */
#ifndef SBX_NETPLAN_H
#define SBX_NETPLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "base/config.h"
#include "base/err.h"
#include "net/hostmatch.h"

/* Who the plan is for: the allow list and the environment differ. */
enum netplan_for {
	NETPLAN_SANDBOX, /* a run or a session: an empty allow list means the default sets */
	NETPLAN_PROXY,   /* `sbxrun proxy`: the list as given (cli.c added the default
			  * sets before the policy, which may have dropped them) */
	NETPLAN_POD,     /* a Kubernetes pod: no image at hand; all proxy variables (the
			  * NetworkPolicy leaves the proxy as the only way out), the image's CAs */
};

/* What a variable of the plan's environment is set to; the reader supplies
 * the value (the proxy's URL is 127.0.0.1:3128 in a sandbox, a Service in a
 * pod). A new kind of endpoint adds a kind here and its variables below. */
enum netplan_value {
	NETPLAN_V_MODE,     /* the mode's name */
	NETPLAN_V_PROXY,    /* the proxy's URL */
	NETPLAN_V_NO_PROXY, /* "localhost,127.0.0.1" */
	NETPLAN_V_CA,       /* the host's CA bundle's path inside */
	/* The package gateway's endpoints (gateway/gateway.h), for the package
	 * managers; a sandbox's reader sets them where an ecosystem has an
	 * upstream, a pod's always (the sidecar's image decides there). */
	NETPLAN_V_GW_NPM,   /* its npm registry URL */
	NETPLAN_V_GW_PYPI,  /* its PyPI simple index URL */
	NETPLAN_V_GW_HOST,  /* its host name (pip's trusted host: plain HTTP) */
	/* Go's, set where the profile names a Go upstream (a sandbox's only:
	 * the checksum database's key is the profile's) */
	NETPLAN_V_GW_GO,       /* GOPROXY: its Go module proxy URL */
	NETPLAN_V_GW_GOSUMDB,  /* GOSUMDB: "NAME+HASH+KEY URL" of its passthrough */
	NETPLAN_V_GW_GOFLAGS,  /* GOFLAGS: -mod=mod, as the hosted container sets it */
	NETPLAN_V_GW_GO_EMPTY, /* GONOSUMDB, GOPRIVATE, GONOPROXY: "", so every module is checked */
	/* Cargo's, where the profile names a Cargo registry: the protocol
	 * ("sparse"); the source replacement itself has no variable in cargo,
	 * it is the file sbxrun writes (sandbox/toolconf.c) */
	NETPLAN_V_GW_CARGO,
};

struct netplan_var {
	const char *name;
	enum netplan_value value;
};

#define NETPLAN_MAX_VARS 40
#define NETPLAN_NO_PROXY "localhost,127.0.0.1"

struct sbx_netplan {
	int mode;               /* enum sbx_egress */
	const char *mode_name;  /* "none", "packages", "full" */
	bool own_netns;         /* none, packages: a network namespace of the sandbox's
				 * own, only lo in it (a pod: a NetworkPolicy) */
	bool dns_stub;          /* names answered by the host side's stub (127.0.0.53);
				 * otherwise the image's or the host's resolv.conf */
	bool proxy;             /* packages: the proxy's door inside, the proxy outside,
				 * apt's configuration naming it */
	bool writable_root;     /* a pod: package installs write into / */
	char *ca_file;          /* the host's CA bundle bound in (ca = host), or NULL */
	/* The allow list as given, or the default sets (sbx_host_sets), and
	 * the image's sources that expand @apt, @pypi and @npm. */
	const struct sbx_strlist *allow;
	struct hostmatch_sets sets;
	struct hostmatch_list hosts; /* with a proxy: the list compiled, sets expanded
				      * (netplan_expand) */
	/* Under package rules ([packages] allow, deny, min_age, not_after,
	 * malicious, offline) the
	 * gateway alone reaches the upstreams it serves: the image's @npm,
	 * @pypi and @apt and a profile's upstreams are withheld from the
	 * proxy on every port, whatever entry of the list would let them
	 * through (hostmatch_withhold: HOSTMATCH_GATEWAY_ONLY); apt's plain
	 * HTTP to @apt's hosts goes to the gateway. So no client sent around
	 * the gateway (npm --registry, pip --index-url, a tunnel to the
	 * archive, the upstream's name spelt another way) escapes them. The
	 * same in a sandbox and in `sbxrun proxy` (a pod's sidecar). */
	bool gateway_only;
	bool gw_cargo;          /* [packages] cargo: cargo is pointed at the gateway (a file
				 * sandbox/toolconf.c writes, a variable); with
				 * cargo = @cargo, only where the image names one */
	const char *gw_cargo_from; /* [packages] cargo's value, or "" */
#define NETPLAN_UPSTREAMS 7
	char gateway_entry[NETPLAN_UPSTREAMS][320];  /* the profile's npm, pypi, go, go_sumdb, cargo
						      * (index and downloads) and maven upstreams' entries, or "" */
	const char *profile;    /* for messages */
	struct netplan_var env[NETPLAN_MAX_VARS]; /* in order; the profile's env comes after */
	size_t nenv;
};

/* From the profile alone (what a pod needs); for a sandbox it also looks
 * for the host's CA bundle, where one is bound in. Pure otherwise. */
void netplan_derive(const struct sbx_config *cfg, enum netplan_for who, struct sbx_netplan *np);
/* Where a proxy serves the list: the image's package sources (sets, or
 * NULL) expand @apt, @pypi and @npm into np->hosts. */
int netplan_expand(struct sbx_netplan *np, const struct hostmatch_sets *sets, struct sbx_err *err);
/* ca_file was set after netplan_derive (a credential broker's bundle):
 * the variables that name it, where they are not there yet. */
void netplan_ca_vars(struct sbx_netplan *np);
void netplan_free(struct sbx_netplan *np);

#endif
