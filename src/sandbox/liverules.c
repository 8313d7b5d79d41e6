/* liverules.c - a running proxy's rules read again from the files they
 * come from (liverules.h): the profile read as a new run would read it,
 * the command line's values of the start kept, the policy applied as
 * cli_sandbox_config applies it, and the network plan compiled again, so
 * that a running sandbox holds what a new one would start with. */
#define _GNU_SOURCE
#include "sandbox/liverules.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/policy.h"
#include "base/profile.h"
#include "base/util.h"

/* The keys read again; the rest of a running sandbox stays as it started.
 * The upstreams, not_after, malicious and mode are read so that the
 * network plan (which upstreams the gateway alone reaches) and the policy
 * see the profile whole; the gateway holds them as it started. */
static const enum sbx_key live_keys[] = { SBX_K_ALLOW, SBX_K_PKG_ALLOW, SBX_K_PKG_DENY, SBX_K_PKG_MIN_AGE,
					  SBX_K_PKG_OFFLINE, SBX_K_PKG_NPM, SBX_K_PKG_PYPI, SBX_K_PKG_GO,
					  SBX_K_PKG_GO_SUMDB, SBX_K_PKG_NOT_AFTER, SBX_K_PKG_MALICIOUS,
					  SBX_K_PKG_MODE };
#define CLI "command line"

enum { W_POLICY, W_POLICY_ENV, W_PROFILE };

void liverules_start(struct sbx_liverules *lr, const struct sbx_config *started, enum netplan_for who,
		     const struct hostmatch_sets *sets, struct sbx_proxy *px)
{
	struct sbx_err err;
	char *path = NULL;

	memset(lr, 0, sizeof(*lr));
	lr->started = started;
	lr->who = who;
	lr->sets = *sets;
	lr->px = px;
	lr->gw = gateway_of(proxy_service(px));
	lr->watch.fd = -1;
	if (profile_find(started->profile ? started->profile : "default", &path, &err) == 0) {
		lr->profile = realpath(path, NULL);
		free(path);
	}
	const char *watched[3] = { SBX_POLICY_PATH, secure_getenv(SBX_POLICY_ENV), lr->profile };
	if (filewatch_open(&lr->watch, watched, 3, &err) < 0)
		log_warn("profile '%s': changes to its profile and the policy will not reach it: %s",
			 started->profile ? started->profile : "default", err.msg);
}

int liverules_fd(const struct sbx_liverules *lr)
{
	return filewatch_fd(&lr->watch);
}

/* Copies key's value from one config to another: a list's entries (those
 * of the command line alone when cli_only), else the value itself. */
static void copy_key(struct sbx_config *to, const struct sbx_config *from, enum sbx_key key, bool cli_only)
{
	const struct sbx_option *o = options_by_key(key);
	const struct sbx_strlist *l = config_list(from, o);
	struct sbx_err ignore;
	char value[1024];

	if (l) {
		for (size_t i = 0; i < l->n; i++)
			if (!cli_only || (l->origin[i] && strcmp(l->origin[i], CLI) == 0))
				config_set(to, o, l->v[i], l->origin[i], 0, &ignore);
		return;
	}
	if (!from->origin[key] || (cli_only && strcmp(from->origin[key], CLI) != 0))
		return;
	config_format(from, o, value, sizeof(value));
	config_set(to, o, value, from->origin[key], 0, &ignore);
}

/* Says trouble once (the event stream and stderr) until it changes. */
static void tell(struct sbx_liverules *lr, const char *what, const char *msg)
{
	if (lr->said && strcmp(lr->said, msg) == 0)
		return;
	free(lr->said);
	lr->said = xstrdup(msg);
	proxy_note_policy(lr->px, what, msg);
	log_warn("%s: %s", what, msg);
}

/* The keys a running sandbox reads again, as a new one would start: the
 * profile's, the command line's of the start, the egress it runs under,
 * the proxy's defaults (the policy is the caller's). A profile that does
 * not read (gone, broken, not found from here) is said once, and what it
 * gave at the start stands in for it, so that the policy still applies. */
static bool reread(struct sbx_liverules *lr, struct sbx_config *out)
{
	struct sbx_config prof;
	const struct sbx_config *st = lr->started;
	struct sbx_err err;

	config_init(&prof);
	config_init(out);
	bool read = profile_load(&prof, lr->profile ? lr->profile : st->profile ? st->profile : "default", &err) == 0;
	if (!read)
		tell(lr, "profile not read again (what it gave at the start is kept)", err.msg);
	out->egress = st->egress;
	config_set(out, options_by_key(SBX_K_PROFILE), st->profile ? st->profile : "default", "default", 0, &err);
	for (size_t i = 0; i < ARRAY_SIZE(live_keys); i++) {
		const struct sbx_option *o = options_by_key(live_keys[i]);
		bool cli = !config_list(st, o) && st->origin[live_keys[i]] && strcmp(st->origin[live_keys[i]], CLI) == 0;
		copy_key(out, cli || !read ? st : &prof, live_keys[i], false);
		if (read && config_list(st, o))
			copy_key(out, st, live_keys[i], true);
	}
	if (read)
		config_proxy_defaults(out, lr->who == NETPLAN_PROXY);
	config_free(&prof);
	return read;
}

/* What lets nothing through: no list, every package denied, offline. */
static void nothing(struct sbx_config *out, const char *why)
{
	struct sbx_err ignore;

	config_free(out);
	config_init(out);
	out->egress = SBX_EGRESS_PACKAGES;
	config_set(out, options_by_key(SBX_K_PKG_DENY), "*", why, 0, &ignore);
	config_set(out, options_by_key(SBX_K_PKG_OFFLINE), "yes", why, 0, &ignore);
}

/* cfg's allow list and package rules to the proxy and its gateway. */
static void apply(struct sbx_liverules *lr, const struct sbx_config *cfg, const char *by)
{
	struct sbx_netplan np;
	struct sbx_err err;

	netplan_derive(cfg, lr->who, &np);
	if (netplan_expand(&np, &lr->sets, &err) < 0) {
		tell(lr, "rules unchanged (the rules held before are kept)", err.msg);
	} else {
		proxy_set_hosts(lr->px, &np.hosts, by);
		if (lr->gw && gateway_set_rules(lr->gw, cfg, by, &err) < 0)
			tell(lr, "package rules unchanged (the rules held before are kept)", err.msg);
	}
	netplan_free(&np);
}

int liverules_changed(struct sbx_liverules *lr)
{
	unsigned what = filewatch_changed(&lr->watch);
	struct sbx_policy pol = { 0 };
	struct sbx_config cfg;
	struct sbx_err err = { 0 };
	char by[PATH_MAX + 32];

	if (!what)
		return 0;
	snprintf(by, sizeof(by), "%s%s%s%s", what & (1u << W_PROFILE) ? "profile " : "",
		 what & (1u << W_PROFILE) ? lr->profile : "", (what & (1u << W_PROFILE)) && (what & 3) ? " and " : "",
		 what & 3 ? "policy" : "");
	if (policy_load(&pol, &err) < 0 || proxy_set_policy(lr->px, &pol, &err) < 0) {
		proxy_policy_error(lr->px, err.msg);
		policy_free(&pol);
		return 0;
	}
	lr->timeout_cap_ms = policy_timeout_cap_ms(&pol);
	bool read = reread(lr, &cfg);
	if (policy_apply(&pol, &cfg, &err) < 0) {
		/* as a new run would be refused: nothing until one of them changes */
		tell(lr, "the policy refuses this profile now: nothing is let through until it changes", err.msg);
		nothing(&cfg, "the policy refuses the profile");
		apply(lr, &cfg, by);
	} else {
		if (read) /* trouble said before is over */
			free(steal_ptr(lr->said));
		apply(lr, &cfg, by);
	}
	config_free(&cfg);
	policy_free(&pol);
	return 1;
}

void liverules_free(struct sbx_liverules *lr)
{
	filewatch_close(&lr->watch);
	free(lr->profile);
	free(lr->said);
	lr->profile = lr->said = NULL;
}
