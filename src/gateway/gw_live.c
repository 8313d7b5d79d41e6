/* gw_live.c - the package rules a running gateway holds, set again while
 * it runs (a change to the profile or to the administrator's policy:
 * sandbox/liverules.c): owned copies of [packages] allow and deny, the age
 * and offline rules, the allow list every hop must pass, and one event
 * when what it holds changed. */
#define _GNU_SOURCE
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "base/pkgrule.h"
#include "base/util.h"
#include "gateway/gw.h"
#include "net/proxy_event.h"

static void copy_list(struct sbx_strlist *to, const struct sbx_strlist *from)
{
	memset(to, 0, sizeof(*to));
	for (size_t i = 0; from && i < from->n; i++)
		config_strlist_add(to, xstrdup(from->v[i]), from->origin ? from->origin[i] : NULL);
}

/* Adds "KEY = VALUE (ORIGIN)" (or KEY alone) to the line. */
static size_t say(char *buf, size_t size, size_t len, const char *key, const char *value, const char *origin)
{
	if (len < size)
		len += (size_t)snprintf(buf + len, size - len, "%s%s%s%s%s%s%s", len ? "; " : "", key,
					value ? " = " : "", value ? value : "", origin ? " (" : "", origin ? origin : "",
					origin ? ")" : "");
	return len;
}

/* The rules as one line, for the event and for knowing whether they
 * changed: "allow = npm:a (FILE:3); deny = npm:x (FILE:4); min_age = 7
 * days; offline", or "none". */
static void summarize(const struct gw_rules *r, char *buf, size_t size)
{
	size_t len = 0;
	char age[32];

	buf[0] = '\0';
	for (size_t i = 0; r->allow && i < r->allow->n; i++)
		len = say(buf, size, len, "allow", r->allow->v[i],
			  r->allow->origin && r->allow->origin[i] ? r->allow->origin[i] : "?");
	for (size_t i = 0; r->deny && i < r->deny->n; i++)
		len = say(buf, size, len, "deny", r->deny->v[i],
			  r->deny->origin && r->deny->origin[i] ? r->deny->origin[i] : "?");
	if (r->min_age_s) {
		rules_say_age(r->min_age_s, age, sizeof(age));
		len = say(buf, size, len, "min_age", age, NULL);
	}
	for (unsigned i = 0; pkgrule_ecosystems[i] && i < 8; i++)
		if (r->min_age_set & (1u << i)) {
			char eco[48];
			rules_say_age(r->min_age_eco_s[i], age, sizeof(age));
			snprintf(eco, sizeof(eco), "%s:%s", pkgrule_ecosystems[i], r->min_age_eco_s[i] ? age : "0");
			len = say(buf, size, len, "min_age", eco, NULL);
		}
	if (r->offline)
		len = say(buf, size, len, "offline", NULL, NULL);
	if (!len)
		snprintf(buf, size, "none");
}

void gw_live_init(struct gw *gw)
{
	char buf[2048];

	copy_list(&gw->live_allow, gw->conf.rules.allow);
	copy_list(&gw->live_deny, gw->conf.rules.deny);
	gw->conf.rules.allow = &gw->live_allow;
	gw->conf.rules.deny = &gw->live_deny;
	summarize(&gw->conf.rules, buf, sizeof(buf));
	gw->live_said = xstrdup(buf);
}

void gw_live_fini(struct gw *gw)
{
	config_strlist_free(&gw->live_allow);
	config_strlist_free(&gw->live_deny);
	free(gw->live_said);
	gw->live_said = NULL;
}

int gateway_set_rules(struct sbx_gateway *g, const struct sbx_config *cfg, const char *by, struct sbx_err *err)
{
	struct gw *gw = (struct gw *)g;
	struct hostmatch_list hops = { 0 };
	char buf[2048];

	if (hostmatch_compile(&cfg->allow, gw->conf.sets, &hops, err) < 0)
		return err_wrap(err, "package gateway");
	hostmatch_free(&gw->allow);
	gw->allow = hops;
	config_strlist_free(&gw->live_allow);
	config_strlist_free(&gw->live_deny);
	copy_list(&gw->live_allow, &cfg->pkg_allow);
	copy_list(&gw->live_deny, &cfg->pkg_deny);
	rules_set_min_age(&gw->conf.rules, &cfg->pkg_min_age);
	gw->conf.rules.offline = cfg->pkg_offline == SBX_ON;
	summarize(&gw->conf.rules, buf, sizeof(buf));
	if (gw->live_said && strcmp(gw->live_said, buf) == 0)
		return 0;
	free(gw->live_said);
	gw->live_said = xstrdup(buf);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "packages", json_object_new_string(buf));
	json_object_object_add(o, "by", json_object_new_string(by ? by : "?"));
	proxy_event_write(gw->conf.events_fd, o, "rules");
	return 0;
}
