/* config.c - filling, checking and showing the one struct sbx_config. */
#define _GNU_SOURCE
#include "base/config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hostaddr.h"
#include "base/hostentry.h"
#include "base/credspec.h"
#include "base/pkgrule.h"
#include "base/relpath.h"
#include "base/upstream.h"
#include "base/util.h"

const char *const sbx_storage_names[] = { "tmpfs", "disk", NULL };
const char *const sbx_seccomp_names[] = { "off", "default", NULL };
const char *const sbx_yesno_names[] = { "no", "yes", NULL };
/* narrower later, as a policy's ceiling reads an enum (policy.c's CAP_DOWN) */
const char *const sbx_pkg_mode_names[] = { "report", "enforce", NULL };
const char *const sbx_enforce_names[] = { "best", "strict", NULL };
const char *const sbx_tier_names[] = { "landlock", "nested", "full", NULL };
const char *const sbx_egress_names[] = { "none", "packages", "full", NULL };
const char *const sbx_host_sets[] = { "@apt", "@pypi", "@npm", "@go", "@cargo", "@maven", NULL };
const char *const sbx_ca_names[] = { "host", "image", NULL };
const char *const sbx_proxy_env_names[] = { "tools", "all", NULL };
const char *const sbx_export_format_names[] = { "kube", "seccomp", NULL };
const char *const sbx_kube_kind_names[] = { "job", "pod", NULL };

#define FIELD(cfg, opt, type) ((type *)((char *)(cfg) + (opt)->offset))

static const struct { enum sbx_key key; const char *value; } defaults[] = {
	{ SBX_K_IMAGE, "minimal" },      { SBX_K_HOSTNAME, "sbxrun" },
	{ SBX_K_WORKSPACE, "/workspace" }, { SBX_K_STORAGE, "tmpfs" },
	{ SBX_K_SECCOMP, "default" },    { SBX_K_PTRACE, "yes" },
	{ SBX_K_TIMEOUT, "none" },       { SBX_K_MEMORY, "unlimited" },
	{ SBX_K_DISK, "1G" },            { SBX_K_PIDS, "unlimited" },
	{ SBX_K_FILE_SIZE, "unlimited" }, { SBX_K_OPEN_FILES, "unlimited" },
	{ SBX_K_IDLE, "none" },          { SBX_K_LIFETIME, "none" },
	{ SBX_K_ENFORCE, "best" },       { SBX_K_EGRESS, "none" },
	{ SBX_K_CA, "host" },            { SBX_K_PROXY_ENV, "tools" },
	{ SBX_K_NET_ASK, "no" },         { SBX_K_ASK_TIMEOUT, "30s" },
	{ SBX_K_DL_MAX_SIZE, "1G" },     { SBX_K_DL_TIMEOUT, "10m" },
	{ SBX_K_DL_MIN_SPEED, "1K" },    { SBX_K_DL_MIN_SPEED_TIME, "30s" },
	{ SBX_K_PKG_TIMEOUT, "30s" },
	{ SBX_K_PKG_OFFLINE, "no" },     { SBX_K_PKG_CACHE_MAX, "10G" },
	{ SBX_K_PKG_MODE, "enforce" },
	{ SBX_K_CHANGES_MAX, "4G" },
	{ SBX_K_PKG_INDEX_MAX_AGE, "2m" }, { SBX_K_PKG_INDEX_MAX_STALE, "1d" },
	{ SBX_K_PKG_CACHE, "/var/cache/sbxrun/packages" },
};

void config_init(struct sbx_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < ARRAY_SIZE(defaults); i++) {
		struct sbx_err err;
		if (config_set(cfg, options_by_key(defaults[i].key), defaults[i].value, "default",
			       0, &err) < 0)
			abort(); /* the table above is wrong */
	}
}

void config_strlist_free(struct sbx_strlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i]);
		free(l->origin[i]);
	}
	free(l->v);
	free(l->origin);
	memset(l, 0, sizeof(*l));
}

void config_strlist_add(struct sbx_strlist *l, char *value, const char *origin)
{
	l->v = xrealloc(l->v, (l->n + 2) * sizeof(char *));
	l->origin = xrealloc(l->origin, (l->n + 2) * sizeof(char *));
	l->v[l->n] = value;
	l->origin[l->n] = xstrdup(origin);
	l->n++;
	l->v[l->n] = NULL;
	l->origin[l->n] = NULL;
}

void config_free(struct sbx_config *cfg)
{
	for (size_t i = 0; i < sbx_options_count; i++) {
		const struct sbx_option *o = &sbx_options[i];
		if (o->flags & SBX_OPT_LOCAL)
			continue;
		if (o->flags & SBX_OPT_REPEAT)
			config_strlist_free(FIELD(cfg, o, struct sbx_strlist));
		else if (o->kind == SBX_ARG_STRING || o->kind == SBX_ARG_NAME ||
			 o->kind == SBX_ARG_PATH)
			free(*FIELD(cfg, o, char *));
	}
	for (size_t i = 0; i < SBX_K__COUNT; i++)
		free(cfg->origin[i]);
	config_strlist_free(&cfg->snap_layers);
	free(cfg->project_set.id);
	free(cfg->project_set.path);
	free(cfg->project_set.layer);
	memset(cfg, 0, sizeof(*cfg));
}

static int check_path(const char *s, struct sbx_err *err)
{
	if (s[0] != '/')
		return err_set(err, 0, "'%s' is not an absolute path", s);
	if (strlen(s) >= PATH_MAX)
		return err_set(err, 0, "path is too long");
	for (const char *p = s; (p = strstr(p, "..")); p += 2)
		if (p[-1] == '/' && (p[2] == '/' || p[2] == '\0'))
			return err_set(err, 0, "'%s' contains '..'", s);
	return 0;
}

static int check_name(const char *s, struct sbx_err *err)
{
	size_t n = strlen(s);
	if (n == 0 || n > 64 || s[0] == '.' || s[0] == '-')
		goto bad;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("._-", *p))
			goto bad;
	return 0;
bad:
	return err_set(err, 0, "invalid name '%s' (letters, digits, '.', '_', '-'; at most 64)", s);
}

static int check_user(const char *s, struct sbx_err *err)
{
	uint64_t uid;
	if (isdigit((unsigned char)s[0]))
		return parse_count(s, 0, 4294967294U, &uid, err);
	if (!islower((unsigned char)s[0]) && s[0] != '_')
		goto bad;
	for (const char *p = s; *p; p++)
		if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) && !strchr("_-.", *p))
			goto bad;
	if (strlen(s) > 32)
		goto bad;
	return 0;
bad:
	return err_set(err, 0, "invalid user '%s' (a user name or a numeric uid)", s);
}

static int check_hostname(const char *s, struct sbx_err *err)
{
	size_t n = strlen(s);
	if (n == 0 || n > 64 || s[0] == '-' || s[0] == '.')
		goto bad;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '.')
			goto bad;
	return 0;
bad:
	return err_set(err, 0, "invalid host name '%s'", s);
}

static int env_name_ok(const char *s, size_t n)
{
	if (n == 0 || isdigit((unsigned char)s[0]))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return 0;
	return 1;
}

/* K=V, or on the command line NAME to pass the caller's value. */
static int parse_env(const char *s, int cli, char **out, struct sbx_err *err)
{
	const char *eq = strchr(s, '=');

	if (!eq) {
		if (!cli)
			return err_set(err, 0, "'%s' is not KEY=VALUE", s);
		if (!env_name_ok(s, strlen(s)))
			return err_set(err, 0, "invalid variable name '%s'", s);
		const char *v = getenv(s);
		if (!v)
			return err_set(err, 0, "'%s' is not set in the caller's environment", s);
		*out = xasprintf("%s=%s", s, v);
		return 0;
	}
	if (!env_name_ok(s, (size_t)(eq - s)))
		return err_set(err, 0, "invalid variable name in '%s'", s);
	*out = xstrdup(s);
	return 0;
}

int host_set_index(const char *s)
{
	for (int i = 0; i < SBX_SET__COUNT; i++)
		if (strcmp(s, sbx_host_sets[i]) == 0)
			return i;
	return -1;
}

int host_pattern_read(const char *s, char **out, struct sbx_err *err)
{
	struct hostentry e;
	char canon[sizeof(e.host) + 16];

	*out = NULL;
	if (s[0] == '@') {
		if (host_set_index(s) < 0)
			return err_set(err, 0, "unknown host set '%s' (known: @apt, @pypi, @npm, @go, @cargo, "
				       "@maven)", s);
		*out = xstrdup(s);
		return 0;
	}
	if (hostentry_parse(s, &e, err) < 0)
		return -1;
	/* host.sbxrun.internal without its port would grant nothing: say so */
	const char *why = e.suffix || e.port ? NULL : hostaddr_internal_refusal(e.host, false, 0);
	if (why)
		return err_set(err, 0, "'%s': %s", s, why);
	hostentry_format(&e, canon, sizeof(canon));
	*out = xstrdup(canon);
	return 0;
}

void bind_free(struct sbx_bind *b)
{
	free(b->src);
	free(b->dst);
	memset(b, 0, sizeof(*b));
}

int bind_parse(const char *spec, struct sbx_bind *out, struct sbx_err *err)
{
	_cleanup_free_ char *copy = xstrdup(spec);
	char *src = copy, *dst, *mode;

	memset(out, 0, sizeof(*out));
	dst = strchr(src, ':');
	if (!dst || dst == src)
		return err_set(err, 0, "'%s' is not SRC:DST[:rw]", spec);
	*dst++ = '\0';
	mode = strchr(dst, ':');
	if (mode) {
		*mode++ = '\0';
		if (strcmp(mode, "rw") == 0)
			out->rw = 1;
		else if (strcmp(mode, "ro") != 0)
			return err_set(err, 0, "'%s': mode must be rw or ro", spec);
	}
	if (check_path(dst, err) < 0 || strcmp(dst, "/") == 0)
		return err_set(err, 0, "'%s': destination must be an absolute path below /, without '..'", spec);
	if (src[0] != '/')
		return err_set(err, 0, "'%s': source must be an absolute path", spec);
	out->src = xstrdup(src);
	out->dst = xstrdup(dst);
	return 0;
}

/* On the command line a relative SRC is taken from the current directory
 * and must exist then; profiles must name absolute sources. */
static int parse_bind_value(const char *s, int cli, char **out, struct sbx_err *err)
{
	struct sbx_bind b;
	const char *colon = strchr(s, ':');

	if (cli && colon && s[0] != '/' && colon != s) {
		_cleanup_free_ char *rel = strndup(s, (size_t)(colon - s));
		_cleanup_free_ char *abs = realpath(rel, NULL);
		if (!abs)
			return err_sys(err, "'%s': source '%s'", s, rel);
		_cleanup_free_ char *full = xasprintf("%s%s", abs, colon);
		if (bind_parse(full, &b, err) < 0)
			return -1;
		bind_free(&b);
		*out = steal_ptr(full);
		return 0;
	}
	if (bind_parse(s, &b, err) < 0)
		return -1;
	bind_free(&b);
	*out = xstrdup(s);
	return 0;
}

static int parse_enum(const struct sbx_option *o, const char *s, int *out, struct sbx_err *err)
{
	char list[256] = "";

	for (int i = 0; o->choices[i]; i++) {
		if (strcmp(o->choices[i], s) == 0) {
			*out = i;
			return 0;
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
			 o->choices[i]);
	}
	return err_set(err, 0, "invalid value '%s' (one of: %s)", s, list);
}

/* A [credentials] line: its syntax, its source usable now, and its
 * variable bound once (an inheriting profile cannot rebind it silently). */
static int check_cred(const struct sbx_strlist *have, const char *s, struct sbx_err *err)
{
	struct sbx_credspec c, old;
	struct sbx_err e2;

	if (credspec_parse(s, &c, err) < 0)
		return -1;
	for (size_t i = 0; i < have->n; i++)
		if (credspec_parse(have->v[i], &old, &e2) == 0 && strcmp(old.var, c.var) == 0)
			return err_set(err, 0, "%s is bound already (%s)", c.var, have->origin[i]);
	return credspec_check_source(&c, err);
}

static int set_list(struct sbx_config *cfg, const struct sbx_option *o, const char *s,
		    const char *origin, int cli, struct sbx_err *err)
{
	char *v = NULL;
	int r = 0;

	switch (o->kind) {
	case SBX_ARG_ENV:
		r = parse_env(s, cli, &v, err);
		break;
	case SBX_ARG_BIND:
		r = parse_bind_value(s, cli, &v, err);
		break;
	case SBX_ARG_HOST:
		r = host_pattern_read(s, &v, err);
		break;
	case SBX_ARG_PACKAGE:
		r = o->key == SBX_K_PKG_MIN_AGE	  ? pkgrule_age(s, NULL, NULL, err)
		    : o->key == SBX_K_PKG_NOT_AFTER ? pkgrule_not_after(s, NULL, NULL, err)
						    : pkgrule_check(s, err);
		v = r < 0 ? NULL : xstrdup(s);
		break;
	case SBX_ARG_CRED:
		r = check_cred(FIELD(cfg, o, struct sbx_strlist), s, err);
		v = r < 0 ? NULL : xstrdup(s);
		break;
	case SBX_ARG_STRING: /* [packages] malicious: a host path, or a URL the gateway fetches */
		if (str_has_prefix(s, "https://") || str_has_prefix(s, "http://")) {
			const char *why = config_upstream_why(s);
			if (why)
				r = err_set(err, 0, "'%s': %s", s, why);
		} else if (s[0] != '/') {
			r = err_set(err, 0, "'%s' is neither an absolute path nor an https:// URL", s);
		}
		for (const char *c = s; r == 0 && *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				r = err_set(err, 0, "a control character in the path");
		v = r < 0 ? NULL : xstrdup(s);
		break;
	case SBX_ARG_COPY: {
		_cleanup_free_ char *path = NULL, *dest = NULL;
		r = relpath_copy_spec(s, &path, &dest, err);
		v = r < 0 ? NULL : xstrdup(s);
		break;
	}
	default:
		abort();
	}
	if (r < 0)
		return -1;
	config_strlist_add(FIELD(cfg, o, struct sbx_strlist), v, origin);
	return 0;
}

static int set_string(struct sbx_config *cfg, const struct sbx_option *o, const char *s,
		      struct sbx_err *err)
{
	int r = 0;

	if (o->kind == SBX_ARG_PATH)
		r = check_path(s, err);
	else if (o->kind == SBX_ARG_NAME && !(o->key == SBX_K_PROFILE || o->key == SBX_K_INHERIT))
		r = check_name(s, err);
	else if (o->kind == SBX_ARG_NAME && !strchr(s, '/'))
		r = check_name(s, err);
	else if (o->key == SBX_K_USER)
		r = check_user(s, err);
	else if (o->key == SBX_K_HOSTNAME)
		r = check_hostname(s, err);
	else if (o->key == SBX_K_SHA256 && (strlen(s) != 64 || strspn(s, "0123456789abcdefABCDEF") != 64))
		r = err_set(err, 0, "'%s' is not a SHA-256 digest (64 hex digits)", s);
	else if (s[0] == '\0')
		r = err_set(err, 0, "empty value");
	if (r < 0)
		return -1;
	char **field = FIELD(cfg, o, char *);
	free(*field);
	*field = xstrdup(s);
	return 0;
}

const char *config_unlimited_word(const struct sbx_option *o)
{
	switch (o->kind) {
	case SBX_ARG_DURATION:
		return "none";
	case SBX_ARG_SIZE:
	case SBX_ARG_COUNT:
	case SBX_ARG_CPUS:
		return "unlimited";
	default:
		return NULL;
	}
}

/* A limit is a number, or the word that lifts it: 0 used to lift it
 * silently (an unbounded tmpfs for --disk 0), so a zero is refused. */
static int parse_limit(const struct sbx_option *o, const char *s, uint64_t *num,
		       struct sbx_err *err)
{
	const char *word = config_unlimited_word(o);
	int r;

	if (strcmp(s, word) == 0) {
		*num = 0;
		return 0;
	}
	if (o->kind == SBX_ARG_CPUS && s[0] == '0' && strspn(s, "0.") == strlen(s))
		goto zero;
	if (o->kind == SBX_ARG_CPUS)
		return parse_cpus_milli(s, num, err);
	if (o->kind == SBX_ARG_DURATION)
		r = parse_duration_ms(s, num, err);
	else if (o->kind == SBX_ARG_SIZE)
		r = parse_size(s, num, err);
	else
		r = parse_count(s, 0, 1u << 30, num, err);
	if (r < 0 || *num != 0)
		return r;
zero:
	return err_set(err, 0, "'%s': zero is not a limit (use '%s' for no limit)", s, word);
}

int config_set(struct sbx_config *cfg, const struct sbx_option *o, const char *s,
	       const char *origin, int cli, struct sbx_err *err)
{
	uint64_t *num = FIELD(cfg, o, uint64_t);
	int r;

	if (o->flags & SBX_OPT_REPEAT)
		r = set_list(cfg, o, s, origin, cli, err);
	else switch (o->kind) {
	case SBX_ARG_NONE:
		*FIELD(cfg, o, int) = 1;
		r = 0;
		break;
	case SBX_ARG_DURATION:
	case SBX_ARG_SIZE:
	case SBX_ARG_COUNT:
	case SBX_ARG_CPUS:
		r = parse_limit(o, s, num, err);
		break;
	case SBX_ARG_FD:
		r = parse_count(s, 3, 1u << 20, num, err);
		break;
	case SBX_ARG_ENUM:
		r = parse_enum(o, s, FIELD(cfg, o, int), err);
		break;
	default:
		r = set_string(cfg, o, s, err);
		break;
	}
	if (r < 0)
		return -1;
	free(cfg->origin[o->key]);
	cfg->origin[o->key] = xstrdup(origin);
	return 0;
}

const struct sbx_strlist *config_list(const struct sbx_config *cfg, const struct sbx_option *o)
{
	return (o->flags & SBX_OPT_REPEAT) && !(o->flags & SBX_OPT_LOCAL) ? FIELD(cfg, o, const struct sbx_strlist) : NULL;
}

void config_format(const struct sbx_config *cfg, const struct sbx_option *o, char *buf,
		   size_t size)
{
	if (o->flags & SBX_OPT_LOCAL) { /* no field of the config to read */
		snprintf(buf, size, "%s", "");
		return;
	}
	/* only the number kinds are 64-bit fields (an enum is an int) */
	int wide = o->kind == SBX_ARG_DURATION || o->kind == SBX_ARG_SIZE ||
		   o->kind == SBX_ARG_COUNT || o->kind == SBX_ARG_FD || o->kind == SBX_ARG_CPUS;
	uint64_t num = wide ? *FIELD(cfg, o, const uint64_t) : 0;

	switch (o->kind) {
	case SBX_ARG_NONE:
		snprintf(buf, size, "%s", *FIELD(cfg, o, const int) ? "yes" : "no");
		break;
	case SBX_ARG_DURATION:
		format_duration(num, buf, size);
		break;
	case SBX_ARG_SIZE:
		format_size(num, buf, size);
		break;
	case SBX_ARG_COUNT:
	case SBX_ARG_FD:
		if (num == 0)
			snprintf(buf, size, o->kind == SBX_ARG_FD ? "" : "unlimited");
		else
			snprintf(buf, size, "%" PRIu64, num);
		break;
	case SBX_ARG_CPUS:
		if (num == 0)
			snprintf(buf, size, "unlimited");
		else
			snprintf(buf, size, "%" PRIu64 ".%03" PRIu64, num / 1000, num % 1000);
		break;
	case SBX_ARG_ENUM:
		snprintf(buf, size, "%s", o->choices[*FIELD(cfg, o, const int)]);
		break;
	default: {
		const char *s = *FIELD(cfg, o, char *const);
		snprintf(buf, size, "%s", s ? s : "");
	}
	}
}

/* --project DIR is the workspace: nothing else may fill it or sit in it. */
static int check_project(const struct sbx_config *cfg, struct sbx_err *err)
{
	if (cfg->project_exact_modes && !cfg->project_apply)
		return err_set(err, 0, "--exact-modes needs --apply");
	if (!cfg->project) {
		if (cfg->project_apply || cfg->project_discard)
			return err_set(err, 0, "--%s needs --project DIR", cfg->project_apply ? "apply" : "discard");
		return 0;
	}
	if (cfg->project_apply && cfg->project_discard)
		return err_set(err, 0, "--apply and --discard: give one of them");
	if (!cfg->workspace)
		return err_set(err, 0, "--project '%s': the profile has no workspace to put it at", cfg->project);
	if (cfg->copies.n || cfg->out_dir)
		return err_set(err, 0, "--project '%s' with --%s: the project is the workspace, "
			       "nothing else is copied into or out of it", cfg->project,
			       cfg->copies.n ? "copy" : "out");
	size_t wl = strlen(cfg->workspace);
	for (size_t i = 0; i < cfg->binds.n; i++) {
		struct sbx_bind b;
		if (bind_parse(cfg->binds.v[i], &b, err) < 0)
			return -1;
		int bad = strncmp(b.dst, cfg->workspace, wl) == 0 && (b.dst[wl] == '/' || !b.dst[wl]);
		bind_free(&b);
		if (bad)
			return err_set(err, 0, "--project '%s' with --bind '%s': nothing may be bound "
				       "into the project's workspace '%s'", cfg->project, cfg->binds.v[i],
				       cfg->workspace);
	}
	return 0;
}

int config_check(const struct sbx_config *cfg, struct sbx_err *err)
{
	if (cfg->json_file && cfg->json_fd)
		return err_set(err, 0, "--json and --json-fd: give one of them");
	if (cfg->disk && cfg->disk < (1u << 20))
		return err_set(err, 0, "disk: %" PRIu64 " bytes is too small (at least 1M)", cfg->disk);
	if (cfg->memory && cfg->memory < (8u << 20))
		return err_set(err, 0, "memory: too small (at least 8M)");
	if (cfg->pids && cfg->pids < 2)
		return err_set(err, 0, "pids: at least 2 (the sandbox's init and the command)");
	if (cfg->dl_min_speed == 0)
		return err_set(err, 0, "%s: [download] min_speed: at least 1 byte a second "
			       "(min_speed_time = none turns the speed check off)", cfg->origin[SBX_K_DL_MIN_SPEED]);
	if (config_check_upstreams(cfg, err) < 0)
		return -1;
	if (cfg->pkg_timeout_ms == 0)
		return err_set(err, 0, "%s: [packages] timeout: none is not a timeout",
			       cfg->origin[SBX_K_PKG_TIMEOUT]);
	if (cfg->pkg_cache && strcmp(cfg->pkg_cache, "none") != 0 &&
	    (cfg->pkg_cache[0] != '/' || strstr(cfg->pkg_cache, "/../") || strstr(cfg->pkg_cache, "/./")))
		return err_set(err, 0, "%s: [packages] cache: '%s' is not an absolute path (or none)",
			       cfg->origin[SBX_K_PKG_CACHE], cfg->pkg_cache);
	if (cfg->workspace && strcmp(cfg->workspace, "/") == 0)
		return err_set(err, 0, "workspace: '/' cannot be the workspace");
	if (cfg->egress != SBX_EGRESS_PACKAGES && cfg->allow.n > 0 &&
	    strcmp(cfg->allow.origin[cfg->allow.n - 1], "command line") == 0)
		return err_set(err, 0, "--allow needs --net packages (the network is '%s')",
			       sbx_egress_names[cfg->egress]);
	for (size_t i = 0; i < cfg->binds.n; i++) {
		struct sbx_bind b;
		if (bind_parse(cfg->binds.v[i], &b, err) < 0)
			return -1;
		int bad = cfg->workspace && strcmp(b.dst, cfg->workspace) == 0;
		bind_free(&b);
		if (bad)
			return err_set(err, 0, "bind '%s': cannot replace the workspace", cfg->binds.v[i]);
	}
	return check_project(cfg, err);
}
