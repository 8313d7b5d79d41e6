/* profile.c - reading INI profiles through inih without its silent traps:
 * a reader refuses over-long and indented lines, so what a profile says is
 * what sbxrun does. Lookup never touches the current directory. */
#define _GNU_SOURCE
#include "base/profile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/options.h"
#include "base/paths.h"
#include "base/util.h"

struct entry {
	char *section, *key, *value;
	int line;
};

struct parse {
	const char *label;
	FILE *f;
	int line;
	char *buf;
	size_t cap;
	struct entry *e;
	size_t n;
	struct sbx_err *err;
	int failed;
};

static int parse_fail(struct parse *p, int line, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int parse_fail(struct parse *p, int line, const char *key, const char *fmt, ...)
{
	if (!p->failed) {
		char reason[600];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(reason, sizeof(reason), fmt, ap);
		va_end(ap);
		if (key)
			err_set(p->err, 0, "%s:%d: %s: %s", p->label, line, key, reason);
		else
			err_set(p->err, 0, "%s:%d: %s", p->label, line, reason);
	}
	p->failed = 1;
	return 0;
}

/* inih calls this like fgets; one line per call. */
static char *reader(char *str, int num, void *stream)
{
	struct parse *p = stream;
	ssize_t n = getline(&p->buf, &p->cap, p->f);

	if (n < 0 || p->failed)
		return NULL;
	p->line++;
	if (memchr(p->buf, '\0', (size_t)n)) {
		parse_fail(p, p->line, NULL, "NUL byte in line");
		return NULL;
	}
	size_t len = (size_t)n - (n > 0 && p->buf[n - 1] == '\n');
	if (len >= SBX_INI_MAX_LINE - 1 || (int)len >= num - 1) {
		parse_fail(p, p->line, NULL, "line is longer than %d bytes", SBX_INI_MAX_LINE - 3);
		return NULL;
	}
	if (len > 0 && (p->buf[0] == ' ' || p->buf[0] == '\t')) {
		const char *s = p->buf + strspn(p->buf, " \t\r\n");
		if (*s && *s != ';' && *s != '#') {
			parse_fail(p, p->line, NULL, "indented line (continuation lines are not supported)");
			return NULL;
		}
	}
	memcpy(str, p->buf, (size_t)n);
	str[n] = '\0';
	return str;
}

static int handler(void *user, const char *section, const char *key, const char *value)
{
	struct parse *p = user;

	if (p->failed)
		return 0;
	p->e = xrealloc(p->e, (p->n + 1) * sizeof(*p->e));
	p->e[p->n++] = (struct entry){ xstrdup(section), xstrdup(key), xstrdup(value), p->line };
	return 1;
}

static void parse_free(struct parse *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->e[i].section);
		free(p->e[i].key);
		free(p->e[i].value);
	}
	free(p->e);
	free(p->buf);
}

static int parse_stream(struct parse *p)
{
	int r = ini_parse_stream(reader, p, handler, p);
	if (p->failed)
		return -1;
	if (r > 0)
		return parse_fail(p, r, NULL, "not a 'key = value' line or a [section]"), -1;
	if (r < 0)
		return err_set(p->err, ENOMEM, "%s: cannot parse", p->label);
	return 0;
}

static const struct sbx_option *entry_option(const struct entry *e)
{
	if (strcmp(e->key, "inherit") == 0 && (!e->section[0] || strcmp(e->section, "sandbox") == 0))
		return options_by_key(SBX_K_INHERIT);
	if (!e->section[0])
		return NULL;
	/* its keys are the variables inside: one option reads them all */
	if (strcmp(e->section, "credentials") == 0)
		return options_by_key(SBX_K_CREDENTIAL);
	return options_by_profile_key(e->section, e->key);
}

/* Checks names and duplicates; returns the inherit entry, if any. */
static int check_entries(struct parse *p, const struct entry **inherit)
{
	int seen[SBX_K__COUNT] = { 0 };

	*inherit = NULL;
	for (size_t i = 0; i < p->n; i++) {
		const struct entry *e = &p->e[i];
		const struct sbx_option *o = entry_option(e);
		if (!o && e->section[0] && !options_section_known(e->section))
			return parse_fail(p, e->line, NULL, "unknown section [%s]", e->section), -1;
		if (!o && !e->section[0])
			return parse_fail(p, e->line, e->key, "key outside a section"), -1;
		if (!o)
			return parse_fail(p, e->line, e->key, "unknown key in [%s]", e->section), -1;
		if (seen[o->key] && !(o->flags & SBX_OPT_REPEAT)) {
			char first[16];
			snprintf(first, sizeof(first), "%d", seen[o->key]);
			return parse_fail(p, e->line, e->key, "set twice (first on line %s)", first), -1;
		}
		seen[o->key] = e->line;
		if (o->key == SBX_K_INHERIT)
			*inherit = e;
	}
	return 0;
}

static int apply_entries(struct sbx_config *cfg, struct parse *p)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct entry *e = &p->e[i];
		const struct sbx_option *o = entry_option(e);
		char origin[PATH_MAX + 32];
		struct sbx_err verr;

		if (o->key == SBX_K_INHERIT)
			continue;
		snprintf(origin, sizeof(origin), "%s:%d", p->label, e->line);
		_cleanup_free_ char *joined = o->kind == SBX_ARG_CRED ? xasprintf("%s=%s", e->key, e->value) : NULL;
		if (config_set(cfg, o, joined ? joined : e->value, origin, 0, &verr) < 0)
			return parse_fail(p, e->line, e->key, "%s", verr.msg), -1;
	}
	return 0;
}

int profile_load_stream(struct sbx_config *cfg, FILE *f, const char *label, struct sbx_err *err)
{
	struct parse p = { .label = label, .f = f, .err = err };
	const struct entry *inherit;
	int r = -1;

	if (parse_stream(&p) == 0 && check_entries(&p, &inherit) == 0)
		r = apply_entries(cfg, &p);
	parse_free(&p);
	return r;
}

/* An empty buffer is an empty file: fmemopen refuses a size of 0. */
static FILE *open_buffer(const char *buf, size_t len)
{
	static const char empty[] = "\n";
	return len ? fmemopen((void *)buf, len, "r") : fmemopen((void *)empty, 1, "r");
}

int profile_parse_ini(const char *buf, size_t len, const char *label, profile_entry_fn fn,
		      void *arg, struct sbx_err *err)
{
	struct parse p = { .label = label, .err = err };
	int r = -1;

	p.f = open_buffer(buf, len);
	if (!p.f)
		return err_sys(err, "%s: cannot read", label);
	if (parse_stream(&p) == 0) {
		r = 0;
		for (size_t i = 0; i < p.n && r == 0; i++)
			r = fn(arg, p.e[i].section, p.e[i].key, p.e[i].value, p.e[i].line, err);
	}
	fclose(p.f);
	parse_free(&p);
	return r;
}

int profile_read_fd(int fd, const char *path, char **out, size_t *len, struct sbx_err *err)
{
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t n = 0;
	ssize_t r;

	if (fstat(fd, &st) < 0)
		return err_sys(err, "'%s'", path);
	if (S_ISDIR(st.st_mode))
		return err_set(err, EISDIR, "'%s'", path);
	if (!S_ISREG(st.st_mode))
		return err_set(err, 0, "'%s' is not a regular file", path);
	if (st.st_size > SBX_PROFILE_MAX_SIZE)
		goto too_big;
	buf = xmalloc(SBX_PROFILE_MAX_SIZE + 2);
	/* one byte more than the cap: a file that grew since fstat is caught */
	while (n <= SBX_PROFILE_MAX_SIZE &&
	       (r = read(fd, buf + n, SBX_PROFILE_MAX_SIZE + 1 - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return err_sys(err, "read '%s'", path);
		n += (size_t)r;
	}
	if (n > SBX_PROFILE_MAX_SIZE)
		goto too_big;
	buf[n] = '\0';
	*out = steal_ptr(buf);
	*len = n;
	return 0;
too_big:
	return err_plain(err, EFBIG, "'%s': larger than %d KiB", path, SBX_PROFILE_MAX_SIZE / 1024);
}

/* O_NONBLOCK: a FIFO named as a profile must not hang the open. */
static int read_profile_file(const char *path, char **buf, size_t *len, struct sbx_err *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return err_sys(err, "open profile '%s'", path);
	if (profile_read_fd(fd, path, buf, len, err) < 0)
		return err_wrap(err, "profile");
	return 0;
}

static int try_dir(const char *dir, const char *name, char **path)
{
	char *p = xasprintf("%s/%s.ini", dir, name);
	if (access(p, F_OK) == 0) {
		*path = p;
		return 1;
	}
	free(p);
	return 0;
}

int profile_find(const char *name, char **path, struct sbx_err *err)
{
	_cleanup_free_ char *user = paths_user_profiles();
	_cleanup_free_ char *stock = xasprintf("%s/profiles", paths_stock_dir());

	if (strchr(name, '/')) {
		if (access(name, R_OK) < 0)
			return err_sys(err, "profile '%s'", name);
		*path = xstrdup(name);
		return 0;
	}
	if (try_dir(user, name, path) || try_dir(SBX_SYSTEM_PROFILES, name, path) ||
	    try_dir(stock, name, path))
		return 0;
	return err_plain(err, ENOENT, "profile '%s' not found in %s, %s or %s", name, user,
		       SBX_SYSTEM_PROFILES, stock);
}

/* A relative path in `inherit` is taken from the inheriting file's
 * directory, never from the current one. */
static char *inherit_target(const char *file, const char *value)
{
	if (!strchr(value, '/') || value[0] == '/')
		return xstrdup(value);
	const char *slash = strrchr(file, '/');
	return xasprintf("%.*s/%s", (int)(slash - file), file, value);
}

static int load_chain(struct sbx_config *cfg, const char *name, char **chain, int depth,
		      struct sbx_err *err)
{
	_cleanup_free_ char *path = NULL, *real = NULL, *text = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	struct parse p = { .err = err };
	size_t len;
	const struct entry *inherit = NULL;
	int r = -1;

	if (profile_find(name, &path, err) < 0)
		return -1;
	real = realpath(path, NULL);
	if (!real)
		return err_sys(err, "profile '%s'", path);
	for (int i = 0; i < depth; i++)
		if (strcmp(chain[i], real) == 0)
			return err_set(err, 0, "%s: inherit loop through profile '%s'", real, name);
	if (depth >= SBX_PROFILE_MAX_DEPTH)
		return err_set(err, 0, "%s: inherit chain deeper than %d", real, SBX_PROFILE_MAX_DEPTH);
	if (read_profile_file(real, &text, &len, err) < 0)
		return -1;
	f = open_buffer(text, len);
	if (!f)
		return err_sys(err, "profile '%s'", real);
	chain[depth] = real;
	p.label = real;
	p.f = f;
	if (parse_stream(&p) < 0 || check_entries(&p, &inherit) < 0)
		goto out;
	if (inherit) {
		_cleanup_free_ char *target = inherit_target(real, inherit->value);
		if (load_chain(cfg, target, chain, depth + 1, err) < 0) {
			err_wrap(err, "%s:%d: inherit", real, inherit->line);
			goto out;
		}
	}
	r = apply_entries(cfg, &p);
out:
	chain[depth] = NULL;
	parse_free(&p);
	return r;
}

int profile_load(struct sbx_config *cfg, const char *name, struct sbx_err *err)
{
	char *chain[SBX_PROFILE_MAX_DEPTH + 1] = { 0 };
	if (load_chain(cfg, name, chain, 0, err) < 0)
		return -1;
	free(cfg->inherit);
	cfg->inherit = NULL;
	return 0;
}
