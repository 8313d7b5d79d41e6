/* credspec.c - see credspec.h: a [credentials] line read strictly, and
 * the checks on where its secret comes from. */
#define _GNU_SOURCE
#include "base/credspec.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hostentry.h"
#include "base/util.h"

static const char *const scheme_names[] = { "Bearer", "token", "basic", "" };

const char *credspec_scheme_name(enum credspec_scheme s)
{
	return scheme_names[s];
}

static bool env_name(const char *s, size_t n)
{
	if (n == 0 || n >= CREDSPEC_MAX_VAR || isdigit((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

/* The variables sbxrun sets itself: a placeholder must not replace them. */
static bool reserved(const char *var)
{
	static const char *const names[] = { "PATH", "HOME", "USER", "SHELL", "TERM", "LANG",
					     "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT",
					     "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO", "CURL_CA_BUNDLE" };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(var, names[i]) == 0)
			return true;
	return strncmp(var, "SBXRUN_", 7) == 0 || strcasestr(var, "proxy") != NULL;
}

static int parse_source(const char *s, size_t n, struct sbx_credspec *c, struct sbx_err *err)
{
	if (n > 4 && strncmp(s, "env:", 4) == 0) {
		if (!env_name(s + 4, n - 4))
			return err_set(err, 0, "'%.*s': not a variable name after env:", (int)n, s);
		c->source = CREDSPEC_ENV;
	} else if (n > 5 && strncmp(s, "file:", 5) == 0) {
		if (s[5] != '/' || n - 5 >= sizeof(c->from))
			return err_set(err, 0, "'%.*s': file: needs an absolute path", (int)n, s);
		c->source = CREDSPEC_FILE;
	} else {
		return err_set(err, 0, "'%.*s': the source is env:NAME or file:PATH", (int)n, s);
	}
	size_t k = c->source == CREDSPEC_ENV ? 4 : 5;
	memcpy(c->from, s + k, n - k);
	c->from[n - k] = '\0';
	return 0;
}

static int parse_target(const char *s, size_t n, struct sbx_credspec *c, struct sbx_err *err)
{
	char auth[300];
	struct hostentry e;
	const char *slash = memchr(s, '/', n);
	size_t al = slash ? (size_t)(slash - s) : n;

	if (al == 0 || al >= sizeof(auth))
		return err_set(err, 0, "'%.*s': not HOST[:PORT][/PATH]", (int)n, s);
	memcpy(auth, s, al);
	auth[al] = '\0';
	if (hostentry_parse(auth, &e, err) < 0)
		return -1;
	if (e.suffix || auth[0] == '@')
		return err_set(err, 0, "'%s': a credential is bound to one host, not *.DOMAIN or a set", auth);
	snprintf(c->host, sizeof(c->host), "%s", e.host);
	c->port = e.port;
	if (slash) {
		size_t pl = n - al;
		if (pl >= sizeof(c->path))
			return err_set(err, 0, "the path prefix is longer than %zu bytes", sizeof(c->path) - 1);
		for (size_t i = 0; i < pl; i++)
			if (strchr("?#%\\\"<>", slash[i]))
				return err_set(err, 0, "'%.*s': a path prefix has no query, fragment or escapes", (int)pl, slash);
		memcpy(c->path, slash, pl);
		c->path[pl] = '\0';
		/* "/org/" and "/org" bind the same prefix */
		if (pl > 1 && c->path[pl - 1] == '/')
			c->path[pl - 1] = '\0';
	}
	return 0;
}

static int parse_param(const char *s, size_t n, struct sbx_credspec *c, bool *seen, struct sbx_err *err)
{
	const char *eq = memchr(s, '=', n);
	size_t kl = eq ? (size_t)(eq - s) : 0, vl = eq ? n - kl - 1 : 0;

	if (eq && kl == 6 && strncmp(s, "header", 6) == 0 && !seen[0]) {
		seen[0] = true;
		if (vl == 0 || vl >= sizeof(c->header))
			return err_set(err, 0, "'%.*s': header= needs a name", (int)n, s);
		for (size_t i = 0; i < vl; i++)
			if (!isalnum((unsigned char)eq[1 + i]) && eq[1 + i] != '-' && eq[1 + i] != '_')
				return err_set(err, 0, "'%.*s': not a header name", (int)n, s);
		memcpy(c->header, eq + 1, vl);
		c->header[vl] = '\0';
		return 0;
	}
	if (eq && kl == 6 && strncmp(s, "scheme", 6) == 0 && !seen[1]) {
		seen[1] = true;
		for (int i = CREDSPEC_BEARER; i <= CREDSPEC_BASIC; i++)
			if (strlen(scheme_names[i]) == vl && strncasecmp(eq + 1, scheme_names[i], vl) == 0) {
				c->scheme = (enum credspec_scheme)i;
				return 0;
			}
		return err_set(err, 0, "'%.*s': the scheme is Bearer, token or basic", (int)n, s);
	}
	if (eq && ((kl == 6 && strncmp(s, "header", 6) == 0) || (kl == 6 && strncmp(s, "scheme", 6) == 0)))
		return err_set(err, 0, "'%.*s': given twice", (int)kl, s);
	return err_set(err, 0, "'%.*s': unknown (header=NAME or scheme=Bearer|token|basic)", (int)n, s);
}

int credspec_parse(const char *line, struct sbx_credspec *c, struct sbx_err *err)
{
	const char *eq = strchr(line, '='), *p;
	bool seen[2] = { false, false };
	int field = 0;

	memset(c, 0, sizeof(*c));
	if (!eq || !env_name(line, (size_t)(eq - line)))
		return err_set(err, 0, "the key names the variable inside (letters, digits, _)");
	memcpy(c->var, line, (size_t)(eq - line));
	if (reserved(c->var))
		return err_set(err, 0, "'%s' is a variable sbxrun sets itself", c->var);
	snprintf(c->header, sizeof(c->header), "Authorization");
	for (p = eq + 1; *p; field++) {
		p += strspn(p, " \t");
		size_t n = strcspn(p, " \t");
		if (n == 0)
			break;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)p[i] < 0x21 || p[i] == 0x7f)
				return err_set(err, 0, "control character in the value");
		int r = field == 0 ? parse_source(p, n, c, err)
			: field == 1 ? parse_target(p, n, c, err) : parse_param(p, n, c, seen, err);
		if (r < 0)
			return -1;
		p += n;
	}
	if (field < 2)
		return err_set(err, 0, "expected 'SOURCE HOST[:PORT][/PATH] [header=NAME] [scheme=...]' "
			       "(SOURCE env:NAME or file:PATH)");
	if (!seen[1] && strcasecmp(c->header, "Authorization") != 0)
		c->scheme = CREDSPEC_RAW;
	return 0;
}

/* One line of printable ASCII: nothing that could end a header early. */
static int check_secret(const char *s, size_t n, const char *what, struct sbx_err *err)
{
	if (n == 0)
		return err_set(err, 0, "%s is empty", what);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			return err_set(err, 0, "%s holds a control or non-ASCII character (one line of printable "
				       "characters is a token)", what);
	return 0;
}

static int check_stat(const struct sbx_credspec *c, const struct stat *st, struct sbx_err *err)
{
	if (S_ISLNK(st->st_mode))
		return err_set(err, 0, "file:%s is a symbolic link (name the file itself)", c->from);
	if (!S_ISREG(st->st_mode))
		return err_set(err, 0, "file:%s is not a regular file", c->from);
	if (st->st_uid != getuid())
		return err_set(err, 0, "file:%s belongs to uid %u, not to you", c->from, (unsigned)st->st_uid);
	if (st->st_mode & 077)
		return err_set(err, 0, "file:%s has mode %04o: 0600 or stricter (chmod 600)", c->from,
			       (unsigned)(st->st_mode & 07777));
	if (st->st_size > CREDSPEC_MAX_SECRET)
		return err_set(err, 0, "file:%s is larger than %d bytes", c->from, CREDSPEC_MAX_SECRET);
	return 0;
}

int credspec_check_source(const struct sbx_credspec *c, struct sbx_err *err)
{
	char buf[CREDSPEC_MAX_SECRET + 1];
	int r = credspec_read_secret(c, buf, sizeof(buf), err);

	explicit_bzero(buf, sizeof(buf));
	return r;
}

int credspec_read_secret(const struct sbx_credspec *c, char *buf, size_t size, struct sbx_err *err)
{
	struct stat st;
	char what[4200];

	snprintf(what, sizeof(what), "%s:%s", c->source == CREDSPEC_ENV ? "env" : "file", c->from);
	if (c->source == CREDSPEC_ENV) {
		const char *v = getenv(c->from);
		if (!v)
			return err_set(err, 0, "env:%s is not set in sbxrun's environment", c->from);
		size_t n = strlen(v);
		if (n >= size)
			return err_set(err, 0, "env:%s is longer than %zu bytes", c->from, size - 1);
		memcpy(buf, v, n + 1);
		return check_secret(buf, n, what, err);
	}
	if (lstat(c->from, &st) < 0)
		return err_set(err, errno, "file:%s: %s", c->from, strerror(errno));
	if (check_stat(c, &st, err) < 0)
		return -1;
	_cleanup_close_ int fd = open(c->from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return err_set(err, errno, "file:%s: %s", c->from, strerror(errno));
	if (fstat(fd, &st) < 0)
		return err_sys(err, "file:%s", c->from);
	if (check_stat(c, &st, err) < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	if (n < 0)
		return err_sys(err, "read file:%s", c->from);
	buf[n] = '\0';
	/* one trailing newline (echo > file) is not the token's */
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (n > 0 && buf[n - 1] == '\r')
		buf[--n] = '\0';
	return check_secret(buf, (size_t)n, what, err);
}

int credspec_matches(const struct sbx_credspec *c, const char *host, int port, const char *target)
{
	size_t pl = strlen(c->path);

	if (strcmp(c->host, host) != 0)
		return 0;
	if (c->port ? (int)c->port != port : (port != 80 && port != 443))
		return 0;
	if (pl == 0 || strcmp(c->path, "/") == 0)
		return 1;
	return strncmp(target, c->path, pl) == 0 && strchr("/?#", target[pl]) != NULL;
}
