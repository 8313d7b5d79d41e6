/* policy.c - the administrator's ceiling: reading policy files (through the
 * profile's strict INI reader) and holding a loaded config under them. The
 * system file counts only when nobody but root can have written it; an extra
 * file from the environment is applied after it and can only tighten. */
#define _GNU_SOURCE
#include "base/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hostentry.h"
#include "base/pkgrule.h"
#include "base/profile.h"
#include "base/upstream.h"
#include "base/util.h"

#define FIELD(cfg, opt, type) ((type *)((char *)(cfg) + (opt)->offset))
#define POLICY_ORIGIN "policy "

enum cap_kind {
	CAP_NONE,
	CAP_LIMIT,     /* a number; 0 (unlimited) is the widest */
	CAP_UP,        /* an enum whose later choices are wider (egress, ptrace) */
	CAP_DOWN,      /* an enum whose earlier choices are wider (seccomp, enforce, tier) */
	CAP_HOSTS,     /* a host list: each entry within the policy's */
	CAP_BINDS,     /* bind sources within the policy's patterns */
	CAP_CEIL,      /* a number the value may not go above (index_max_age; 0 is the lowest) */
	CAP_PKGS,      /* package rules: each entry within the policy's */
	CAP_PKG_DENY,  /* package rules the policy adds to every profile's */
	CAP_AGES,      /* min_age's "[ECO:]DURATION": a floor in each ecosystem */
};

static const struct { enum sbx_key key; enum cap_kind kind; } cap_table[] = {
	{ SBX_K_SECCOMP, CAP_DOWN },   { SBX_K_PTRACE, CAP_UP },
	{ SBX_K_ENFORCE, CAP_DOWN },   { SBX_K_EGRESS, CAP_UP },
	{ SBX_K_TIER, CAP_DOWN },
	{ SBX_K_ALLOW, CAP_HOSTS },    { SBX_K_DL_ALLOW, CAP_HOSTS },
	{ SBX_K_DL_MAX_SIZE, CAP_LIMIT }, { SBX_K_BIND, CAP_BINDS },
	/* a download's deadline and the window its speed floor is judged over
	 * are maxima too (min_speed, a floor, is not capped) */
	{ SBX_K_DL_TIMEOUT, CAP_LIMIT }, { SBX_K_DL_MIN_SPEED_TIME, CAP_LIMIT },
	/* the package gateway's rules: only what the policy allows, always
	 * what it denies, versions at least as old, offline when it says so */
	{ SBX_K_PKG_ALLOW, CAP_PKGS },   { SBX_K_PKG_DENY, CAP_PKG_DENY },
	/* a feed the policy names is read by every sandbox, besides the profile's */
	{ SBX_K_PKG_MALICIOUS, CAP_PKG_DENY },
	{ SBX_K_PKG_MIN_AGE, CAP_AGES }, { SBX_K_PKG_OFFLINE, CAP_DOWN },
	/* mode = enforce in a policy: no profile turns the rules into reports */
	{ SBX_K_PKG_MODE, CAP_DOWN },
	/* how long an index may be served unasked: what upstream pulled
	 * (a malicious release) is gone from the gateway within it */
	{ SBX_K_PKG_INDEX_MAX_AGE, CAP_CEIL }, { SBX_K_PKG_INDEX_MAX_STALE, CAP_CEIL },
};

/* Every number of [limits] is a maximum; the rest as the table says. */
static enum cap_kind cap_kind_of(const struct sbx_option *o)
{
	for (size_t i = 0; i < ARRAY_SIZE(cap_table); i++)
		if (cap_table[i].key == o->key)
			return cap_table[i].kind;
	if (o->section && strcmp(o->section, "limits") == 0 && config_unlimited_word(o))
		return CAP_LIMIT;
	return CAP_NONE;
}

/* ---- reading ---------------------------------------------------------- */

static char *home_dir(void)
{
	struct passwd *pw = getpwuid(getuid());
	return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? xstrdup(pw->pw_dir) : NULL;
}

/* PATTERN[:rw|:ro]; "~/" is the caller's home from the password database
 * (never $HOME, which the caller sets). */
static int parse_bind_pattern(struct sbx_policy_file *f, const char *value, struct sbx_err *err)
{
	_cleanup_free_ char *pat = xstrdup(value), *home = NULL;
	char *colon = strrchr(pat, ':');
	int rw = 0;

	if (colon && (strcmp(colon, ":rw") == 0 || strcmp(colon, ":ro") == 0)) {
		rw = colon[2] == 'w';
		*colon = '\0';
	}
	if (pat[0] == '~' && (pat[1] == '/' || pat[1] == '\0')) {
		home = home_dir();
		if (!home)
			return err_set(err, 0, "'%s': the caller has no home directory", value);
		char *full = xasprintf("%s%s", home, pat + 1);
		free(pat);
		pat = full;
	}
	size_t n = strlen(pat);
	if (pat[0] != '/' || strstr(pat, "/../") || (n >= 3 && strcmp(pat + n - 3, "/..") == 0) ||
	    strchr(pat, ':'))
		return err_set(err, 0, "'%s' is not PATH[:rw] (an absolute host path or ~/PATH, "
			       "glob characters allowed)", value);
	size_t stars = 0;
	for (const char *c = pat; (c = strchr(c, '*')); c++)
		stars++;
	if (stars > 4) /* fnmatch backtracks: a pattern stays cheap to match */
		return err_set(err, 0, "'%s': at most 4 '*' in a pattern", value);
	f->binds = xrealloc(f->binds, (f->nbinds + 1) * sizeof(*f->binds));
	f->binds[f->nbinds++] = (struct sbx_policy_bind){ steal_ptr(pat), rw };
	return 0;
}

struct reading {
	struct sbx_policy_file *f;
	const char *label;
};

static int entry_fail(const struct reading *rd, int line, const char *key, const char *msg,
		      struct sbx_err *err)
{
	if (key)
		return err_set(err, 0, "%s:%d: %s: %s", rd->label, line, key, msg);
	return err_set(err, 0, "%s:%d: %s", rd->label, line, msg);
}

static int set_cap(const struct reading *rd, const struct sbx_option *o, const char *value,
		   const char *origin, struct sbx_err *err)
{
	struct sbx_config *caps = &rd->f->caps;
	enum cap_kind kind = cap_kind_of(o);

	if (kind == CAP_BINDS && strcmp(value, "none") != 0)
		return parse_bind_pattern(rd->f, value, err);
	if ((kind == CAP_HOSTS || kind == CAP_BINDS) && strcmp(value, "none") == 0)
		return 0; /* present, empty: nothing is allowed */
	return config_set(caps, o, value, origin, 0, err);
}

static int policy_entry(void *arg, const char *section, const char *key, const char *value,
			int line, struct sbx_err *err)
{
	const struct reading *rd = arg;
	struct sbx_config *caps = &rd->f->caps;
	const struct sbx_option *o = section[0] ? options_by_profile_key(section, key) : NULL;
	char origin[PATH_MAX + 32], why[600];
	struct sbx_err verr;

	if (!section[0])
		return entry_fail(rd, line, key, "key outside a section", err);
	if (!o && !options_section_known(section)) {
		snprintf(why, sizeof(why), "unknown section [%s]", section);
		return entry_fail(rd, line, NULL, why, err);
	}
	if (!o) {
		snprintf(why, sizeof(why), "unknown key in [%s]", section);
		return entry_fail(rd, line, key, why, err);
	}
	if (cap_kind_of(o) == CAP_NONE)
		return entry_fail(rd, line, key, "not a ceiling (a policy caps [sandbox] seccomp, "
				  "ptrace; [limits]; [network] egress, allow; [download]; "
				  "[packages] allow, deny, malicious, min_age, offline, mode, index_max_age, index_max_stale; [mounts] bind)", err);
	if (caps->origin[o->key] && !(o->flags & SBX_OPT_REPEAT)) {
		snprintf(why, sizeof(why), "set twice (first on %s)", caps->origin[o->key]);
		return entry_fail(rd, line, key, why, err);
	}
	snprintf(origin, sizeof(origin), "%s:%d", rd->label, line);
	if (set_cap(rd, o, value, origin, &verr) < 0)
		return entry_fail(rd, line, key, verr.msg, err);
	if (!caps->origin[o->key])
		caps->origin[o->key] = xstrdup(origin);
	return 0;
}

static int add_text(struct sbx_policy *pol, const char *text, size_t len, const char *label,
		    struct sbx_err *err)
{
	if (pol->n >= SBX_POLICY_MAX_FILES)
		return err_set(err, 0, "%s: too many policy files", label);
	struct sbx_policy_file *f = &pol->file[pol->n++];
	struct reading rd = { f, label };

	memset(f, 0, sizeof(*f));
	f->path = xstrdup(label);
	return profile_parse_ini(text, len, label, policy_entry, &rd, err);
}

int policy_add_text(struct sbx_policy *pol, const char *text, size_t len, const char *label,
		    struct sbx_err *err)
{
	return add_text(pol, text, len, label, err);
}

/* Nobody but root may have written it: owned by root, no group or other
 * write bit; what names the file or the directory above it. */
static int trusted(int fd, const char *path, const char *what, struct sbx_err *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return err_sys(err, "policy '%s': %s", path, what);
	if (st.st_uid != 0)
		return err_set(err, 0, "policy '%s': %s is not owned by root (uid %u); the policy "
			       "is not used, and nothing runs until it is fixed", path, what,
			       (unsigned)st.st_uid);
	if (st.st_mode & 022)
		return err_set(err, 0, "policy '%s': %s is writable by group or others (mode %04o); "
			       "the policy is not used, and nothing runs until it is fixed", path,
			       what, (unsigned)(st.st_mode & 07777));
	return 0;
}

/* Walks path from / without following symbolic links, checking each
 * directory; returns the open file, or -1 with errno ENOENT (and err
 * untouched) when the policy does not exist. */
static int open_trusted(const char *path, struct sbx_err *err)
{
	_cleanup_free_ char *copy = xstrdup(path);
	_cleanup_close_ int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char *save = NULL, *name = strtok_r(copy, "/", &save), *next, what[PATH_MAX + 16];

	if (dir < 0)
		return err_sys(err, "policy: open '/'");
	if (trusted(dir, path, "directory '/'", err) < 0)
		return -1;
	for (; name; name = next) {
		next = strtok_r(NULL, "/", &save);
		int flags = next ? O_PATH | O_NOFOLLOW : O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
		int fd = openat(dir, name, flags | O_CLOEXEC);
		struct stat st;
		snprintf(what, sizeof(what), "directory '%.*s'", (int)(name + strlen(name) - copy),
			 path);
		if (fd < 0 && errno == ENOENT)
			return -1;
		if (fd < 0 && errno == ELOOP)
			return err_set(err, 0, "policy '%s' is a symbolic link; the policy is not used, "
				       "and nothing runs until it is fixed", path);
		if (fd < 0)
			return err_sys(err, "policy '%s'", path);
		close(dir);
		dir = fd;
		if (next && (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)))
			return err_plain(err, ENOTDIR, "policy '%s': %s is a symbolic link or not a "
				       "directory", path, what + strlen("directory "));
		if (trusted(fd, path, next ? what : "the file", err) < 0)
			return -1;
	}
	return steal_fd(dir);
}

static int add_file(struct sbx_policy *pol, const char *path, int check, struct sbx_err *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	size_t len;

	if (path[0] != '/')
		return err_set(err, 0, "policy '%s': not an absolute path", path);
	errno = 0;
	fd = check ? open_trusted(path, err)
		   : open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && check && errno == ENOENT)
		return 0;
	if (fd < 0)
		return check ? -1 : err_sys(err, "policy '%s' (from $%s)", path, SBX_POLICY_ENV);
	if (profile_read_fd(fd, path, &text, &len, err) < 0)
		return err_wrap(err, "policy");
	return add_text(pol, text, len, path, err);
}

int policy_load_paths(struct sbx_policy *pol, const char *system, const char *extra,
		      struct sbx_err *err)
{
	memset(pol, 0, sizeof(*pol));
	if ((system && add_file(pol, system, 1, err) < 0) ||
	    (extra && extra[0] && add_file(pol, extra, 0, err) < 0)) {
		policy_free(pol);
		return -1;
	}
	return 0;
}

int policy_load(struct sbx_policy *pol, struct sbx_err *err)
{
	return policy_load_paths(pol, SBX_POLICY_PATH, secure_getenv(SBX_POLICY_ENV), err);
}

void policy_free(struct sbx_policy *pol)
{
	for (size_t i = 0; i < pol->n; i++) {
		struct sbx_policy_file *f = &pol->file[i];
		for (size_t b = 0; b < f->nbinds; b++)
			free(f->binds[b].pattern);
		free(f->binds);
		free(f->path);
		config_free(&f->caps);
	}
	memset(pol, 0, sizeof(*pol));
}

/* ---- applying --------------------------------------------------------- */

/* Whether every host that entry lets through, pattern lets through too:
 * a set (@apt) only by itself; hosts by the one comparison the allow list
 * and the package rules' withholding make (base/hostentry.c), on the
 * entries as config_set left them (canonical). */
static int host_covers(const char *pattern, const char *entry)
{
	struct hostentry p, e;
	struct sbx_err perr;

	if (pattern[0] == '@' || entry[0] == '@')
		return strcmp(pattern, entry) == 0;
	return hostentry_parse(pattern, &p, &perr) == 0 && hostentry_parse(entry, &e, &perr) == 0 &&
	       hostentry_covers(&p, &e);
}

static int clampable(const char *origin)
{
	return !origin || strcmp(origin, "default") == 0 || str_has_prefix(origin, POLICY_ORIGIN);
}

static void set_origin(struct sbx_config *cfg, enum sbx_key key, const char *cap_origin)
{
	free(cfg->origin[key]);
	cfg->origin[key] = xasprintf(POLICY_ORIGIN "%s", cap_origin);
}

/* "profile 'ci' asks for memory = 8G (ci.ini:9); /etc/sbxrun/policy.ini
 * caps [limits] memory at 2G" */
static int refuse(const struct sbx_config *cfg, const struct sbx_option *o, const char *origin,
		  const char *value, const struct sbx_policy_file *f, const char *cap,
		  struct sbx_err *err)
{
	if (origin && strcmp(origin, "command line") == 0 && o->lname)
		return err_set(err, 0, "--%s asks for %s = %s; %s caps [%s] %s at %s", o->lname,
			       o->pkey, value, f->path, o->section, o->pkey, cap);
	return err_set(err, 0, "profile '%s' asks for %s = %s (%s); %s caps [%s] %s at %s",
		       cfg->profile ? cfg->profile : "default", o->pkey, value,
		       origin ? origin : "default", f->path, o->section, o->pkey, cap);
}

static int apply_scalar(const struct sbx_policy_file *f, const struct sbx_option *o,
			enum cap_kind kind, struct sbx_config *cfg, struct sbx_err *err)
{
	const char *origin = cfg->origin[o->key];
	char want[64], cap[64];
	int over;

	if (kind == CAP_LIMIT || kind == CAP_CEIL) {
		uint64_t c = *FIELD(&f->caps, o, uint64_t), *v = FIELD(cfg, o, uint64_t);
		over = kind == CAP_CEIL ? *v > c : c && (*v == 0 || *v > c);
		if (over && clampable(origin)) {
			*v = c;
			set_origin(cfg, o->key, f->caps.origin[o->key]);
			return 0;
		}
	} else {
		int c = *FIELD(&f->caps, o, int), *v = FIELD(cfg, o, int);
		over = kind == CAP_UP ? *v > c : *v < c;
		if (over && clampable(origin)) {
			*v = c;
			set_origin(cfg, o->key, f->caps.origin[o->key]);
			return 0;
		}
	}
	if (!over)
		return 0;
	config_format(cfg, o, want, sizeof(want));
	config_format(&f->caps, o, cap, sizeof(cap));
	return refuse(cfg, o, origin, want, f, cap, err);
}

static void list_text(const struct sbx_policy_file *f, const struct sbx_option *o, char *buf,
		      size_t size)
{
	const struct sbx_strlist *l = config_list(&f->caps, o);
	size_t n = o->key == SBX_K_BIND ? f->nbinds : l->n;

	snprintf(buf, size, "%s", n ? "" : "none");
	for (size_t i = 0; i < n && strlen(buf) + 1 < size; i++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s%s", i ? ", " : "",
			 o->key == SBX_K_BIND ? f->binds[i].pattern : l->v[i],
			 o->key == SBX_K_BIND && f->binds[i].rw ? ":rw" : "");
}

/* Whether the real path of src, or a directory above it, matches one of
 * the patterns (with :rw where rw is asked for). */
static int bind_allowed(const struct sbx_policy_file *f, const char *src, int rw)
{
	_cleanup_free_ char *real = realpath(src, NULL);

	if (!real)
		return 0;
	for (;;) {
		for (size_t i = 0; i < f->nbinds; i++)
			if ((!rw || f->binds[i].rw) && fnmatch(f->binds[i].pattern, real, FNM_PATHNAME) == 0)
				return 1;
		char *slash = strrchr(real, '/');
		if (!slash || strcmp(real, "/") == 0)
			return 0;
		slash[slash == real] = '\0';
	}
}

static int entry_allowed(const struct sbx_policy_file *f, const struct sbx_option *o,
			 const char *entry)
{
	if (o->key == SBX_K_BIND) {
		struct sbx_bind b;
		struct sbx_err perr;
		if (bind_parse(entry, &b, &perr) < 0)
			return 0;
		int ok = bind_allowed(f, b.src, b.rw);
		bind_free(&b);
		return ok;
	}
	const struct sbx_strlist *l = config_list(&f->caps, o);
	for (size_t i = 0; i < l->n; i++)
		if (host_covers(l->v[i], entry))
			return 1;
	return 0;
}

/* A source that does not resolve cannot be checked: say so rather than
 * blame the policy. */
static int bind_source_missing(const char *entry, struct sbx_err *err)
{
	struct sbx_bind b;
	int missing = 0;

	if (bind_parse(entry, &b, err) < 0)
		return 1;
	_cleanup_free_ char *real = realpath(b.src, NULL);
	if (!real)
		missing = err_sys(err, "bind '%s': source '%s'", entry, b.src) < 0;
	bind_free(&b);
	return missing;
}

/* Entries nobody asked for (the proxy's default sets) are dropped when the
 * policy does not cover them; asked-for ones are refused. */
static int apply_list(const struct sbx_policy_file *f, const struct sbx_option *o,
		      struct sbx_config *cfg, struct sbx_err *err)
{
	struct sbx_strlist *l = FIELD(cfg, o, struct sbx_strlist);
	size_t keep = 0;
	char cap[512];

	for (size_t i = 0; i < l->n; i++) {
		if (!clampable(l->origin[i]) && !entry_allowed(f, o, l->v[i])) {
			if (o->key == SBX_K_BIND && bind_source_missing(l->v[i], err))
				return -1;
			list_text(f, o, cap, sizeof(cap));
			return refuse(cfg, o, l->origin[i], l->v[i], f, cap, err);
		}
	}
	for (size_t i = 0; i < l->n; i++) {
		if (entry_allowed(f, o, l->v[i])) {
			l->v[keep] = l->v[i];
			l->origin[keep++] = l->origin[i];
		} else {
			free(l->v[i]);
			free(l->origin[i]);
		}
	}
	l->n = keep;
	if (l->v)
		l->v[keep] = l->origin[keep] = NULL;
	return 0;
}

static bool in_list(const struct sbx_strlist *l, const char *v)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], v) == 0)
			return true;
	return false;
}

/* A policy entry's origin, as the lists carry it. */
static void add_capped(struct sbx_strlist *l, const char *v, const char *cap_origin)
{
	_cleanup_free_ char *o = xasprintf(POLICY_ORIGIN "%s", cap_origin);
	config_strlist_add(l, xstrdup(v), o);
}

static bool pkgs_cover(const struct sbx_strlist *wide, const char *entry)
{
	return pkgrule_covers((const char *const *)wide->v, wide->n, entry);
}

/* [packages] allow: a profile's entries must lie within the policy's; a
 * list nobody set becomes the policy's, and one an earlier policy set
 * becomes what both allow (an empty result would allow all: refused). */
static int apply_pkgs(const struct sbx_policy_file *f, const struct sbx_option *o,
		      struct sbx_config *cfg, struct sbx_err *err)
{
	struct sbx_strlist *l = FIELD(cfg, o, struct sbx_strlist), both = { 0 };
	const struct sbx_strlist *cap = config_list(&f->caps, o);
	bool own = false;
	char text[512];

	list_text(f, o, text, sizeof(text));
	for (size_t i = 0; i < l->n; i++) {
		own |= !clampable(l->origin[i]);
		if (!clampable(l->origin[i]) && !pkgs_cover(cap, l->v[i]))
			return refuse(cfg, o, l->origin[i], l->v[i], f, text, err);
	}
	for (size_t i = 0; i < l->n; i++)
		if (!clampable(l->origin[i]) || pkgs_cover(cap, l->v[i]))
			config_strlist_add(&both, xstrdup(l->v[i]), l->origin[i]);
	for (size_t i = 0; i < cap->n && !own; i++)
		if ((!l->n || pkgs_cover(l, cap->v[i])) && !in_list(&both, cap->v[i]))
			add_capped(&both, cap->v[i], cap->origin[i]);
	if (l->n && !both.n) {
		err_set(err, 0, "%s caps [packages] allow at %s, which leaves nothing of what %s allows",
			f->path, text, l->origin[0] + strlen(POLICY_ORIGIN));
		config_strlist_free(&both);
		return -1;
	}
	config_strlist_free(l);
	*l = both;
	return 0;
}

/* [packages] deny and malicious: the policy's entries apply to every
 * sandbox. A feed's URL is the policy's own word: the gateway that
 * fetches it may reach its host, past the allow list the policy capped. */
static void apply_pkg_deny(const struct sbx_policy_file *f, const struct sbx_option *o,
			   struct sbx_config *cfg)
{
	struct sbx_strlist *l = FIELD(cfg, o, struct sbx_strlist);
	const struct sbx_strlist *cap = config_list(&f->caps, o);
	char up[320];

	for (size_t i = 0; i < cap->n; i++) {
		if (in_list(l, cap->v[i]))
			continue;
		add_capped(l, cap->v[i], cap->origin[i]);
		if (o->key == SBX_K_PKG_MALICIOUS && cfg->egress == SBX_EGRESS_PACKAGES &&
		    config_upstream_entry(cap->v[i], up, sizeof(up)) == 0 && !in_list(&cfg->allow, up))
			add_capped(&cfg->allow, up, cap->origin[i]);
	}
}

/* [packages] min_age: in each ecosystem, the age the profile's entries give
 * (its ECO: entry, else its own for all) is at least the policy's; where
 * the profile's own entry gives less it is refused, where none or the
 * policy's does, the policy's for that ecosystem is added ("deb:7d"). */
static int apply_ages(const struct sbx_policy_file *f, const struct sbx_option *o, struct sbx_config *cfg,
		      struct sbx_err *err)
{
	struct sbx_strlist *l = FIELD(cfg, o, struct sbx_strlist);
	const struct sbx_strlist *cap = config_list(&f->caps, o);
	size_t wi, ci;
	char text[512];

	for (int pass = 0; pass < 2; pass++)
		for (size_t e = 0; pkgrule_ecosystems[e]; e++) {
			const char *eco = pkgrule_ecosystems[e];
			uint64_t floor = pkgrule_age_for((const char *const *)cap->v, cap->n, eco, &ci);
			if (pkgrule_age_for((const char *const *)l->v, l->n, eco, &wi) >= floor)
				continue;
			if (pass == 0 && wi != SIZE_MAX && !clampable(l->origin[wi])) {
				list_text(f, o, text, sizeof(text));
				snprintf(text + strlen(text), sizeof(text) - strlen(text), " or more%s%s",
					 strchr(l->v[wi], ':') ? " in " : "", strchr(l->v[wi], ':') ? eco : "");
				return refuse(cfg, o, l->origin[wi], l->v[wi], f, text, err);
			}
			if (pass == 1) {
				const char *colon = strchr(cap->v[ci], ':');
				_cleanup_free_ char *v = xasprintf("%s:%s", eco, colon ? colon + 1 : cap->v[ci]);
				add_capped(l, v, cap->origin[ci]);
			}
		}
	return 0;
}

static int apply_file(const struct sbx_policy_file *f, struct sbx_config *cfg, struct sbx_err *err)
{
	for (size_t i = 0; i < sbx_options_count; i++) {
		const struct sbx_option *o = &sbx_options[i];
		enum cap_kind kind = cap_kind_of(o);
		int r = 0;

		if (kind == CAP_NONE || !f->caps.origin[o->key])
			continue;
		if (kind == CAP_HOSTS || kind == CAP_BINDS)
			r = apply_list(f, o, cfg, err);
		else if (kind == CAP_PKGS)
			r = apply_pkgs(f, o, cfg, err);
		else if (kind == CAP_PKG_DENY)
			apply_pkg_deny(f, o, cfg);
		else if (kind == CAP_AGES)
			r = apply_ages(f, o, cfg, err);
		else
			r = apply_scalar(f, o, kind, cfg, err);
		if (r < 0)
			return -1;
	}
	return 0;
}

int policy_apply(const struct sbx_policy *pol, struct sbx_config *cfg, struct sbx_err *err)
{
	for (size_t i = 0; i < pol->n; i++)
		if (apply_file(&pol->file[i], cfg, err) < 0)
			return -1;
	return 0;
}

int policy_enforce(struct sbx_config *cfg, struct sbx_err *err)
{
	struct sbx_policy pol;

	if (policy_load(&pol, err) < 0)
		return -1;
	int r = policy_apply(&pol, cfg, err);
	policy_free(&pol);
	return r;
}

void policy_each_cap(const struct sbx_policy *pol,
		     void (*fn)(void *arg, const char *path, const char *cap), void *arg)
{
	for (size_t i = 0; i < pol->n; i++) {
		const struct sbx_policy_file *f = &pol->file[i];
		for (size_t k = 0; k < sbx_options_count; k++) {
			const struct sbx_option *o = &sbx_options[k];
			enum cap_kind kind = cap_kind_of(o);
			char value[512], line[600];
			if (kind == CAP_NONE || !f->caps.origin[o->key])
				continue;
			if (kind == CAP_HOSTS || kind == CAP_BINDS || kind == CAP_PKGS || kind == CAP_PKG_DENY ||
			    kind == CAP_AGES)
				list_text(f, o, value, sizeof(value));
			else
				config_format(&f->caps, o, value, sizeof(value));
			snprintf(line, sizeof(line), "[%s] %s = %s", o->section, o->pkey, value);
			fn(arg, f->path, line);
		}
	}
}

uint64_t policy_timeout_cap_ms(const struct sbx_policy *pol)
{
	uint64_t cap = 0;

	for (size_t i = 0; i < pol->n; i++) {
		const struct sbx_config *c = &pol->file[i].caps;
		if (c->origin[SBX_K_TIMEOUT] && c->timeout_ms && (!cap || c->timeout_ms < cap))
			cap = c->timeout_ms;
	}
	return cap;
}
