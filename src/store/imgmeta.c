/* imgmeta.c - reading an image's /etc/environment and apt sources from its
 * own files, so package hosts come from the image and never from our source. */
#define _GNU_SOURCE
#include "store/imgmeta.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>

#include "base/hostaddr.h"
#include "base/util.h"

#define META_MAX_FILE (1 << 20)
#define META_MAX_ITEMS 256

void imgmeta_list_add(struct sbx_list *l, const char *s, size_t len)
{
	if (len == 0 || l->n >= META_MAX_ITEMS)
		return;
	for (size_t i = 0; i < l->n; i++)
		if (strlen(l->v[i]) == len && memcmp(l->v[i], s, len) == 0)
			return;
	l->v = xrealloc(l->v, (l->n + 2) * sizeof(*l->v));
	l->v[l->n] = strndup(s, len);
	if (!l->v[l->n])
		abort();
	l->v[++l->n] = NULL;
}

void imgmeta_list_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

/* Calls fn on each line (without its newline). */
static void each_line(const char *text, void (*fn)(const char *, size_t, void *), void *arg)
{
	while (*text) {
		size_t len = strcspn(text, "\n");
		fn(text, len, arg);
		text += len;
		if (*text)
			text++;
	}
}

static void env_line(const char *s, size_t len, void *arg)
{
	struct sbx_list *env = arg;
	char buf[4096];
	size_t k, o = 0;

	while (len && isspace((unsigned char)*s))
		s++, len--;
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	if (len == 0 || *s == '#' || len >= sizeof(buf))
		return;
	if (len > 7 && strncmp(s, "export ", 7) == 0)
		s += 7, len -= 7;
	for (k = 0; k < len && (isalnum((unsigned char)s[k]) || s[k] == '_'); k++)
		;
	if (k == 0 || k >= len || s[k] != '=' || isdigit((unsigned char)s[0]))
		return;
	memcpy(buf, s, k + 1);
	o = k + 1;
	const char *v = s + k + 1;
	size_t vlen = len - k - 1;
	if (vlen >= 2 && (v[0] == '"' || v[0] == '\'') && v[vlen - 1] == v[0])
		v++, vlen -= 2;
	memcpy(buf + o, v, vlen);
	o += vlen;
	imgmeta_list_add(env, buf, o);
}

void imgmeta_vet_sources(struct sbx_list *l, struct sbx_list *dropped)
{
	struct sbx_list kept = { 0 };

	for (size_t i = 0; i < l->n; i++) {
		const char *why = hostaddr_image_refusal(l->v[i]);
		if (!why) {
			imgmeta_list_add(&kept, l->v[i], strlen(l->v[i]));
			continue;
		}
		_cleanup_free_ char *line = xasprintf("%s: %s", l->v[i], why);
		imgmeta_list_add(dropped, line, strlen(line));
	}
	imgmeta_list_free(l->v);
	*l = kept;
}

void imgmeta_parse_environment(const char *text, struct sbx_list *env)
{
	each_line(text, env_line, env);
}

/* The host of a URI: between "://" and the next '/', ':' or end, after any
 * user-info. URIs without a host (file:, cdrom:) give nothing. */
static void add_uri_host(const char *uri, size_t len, struct sbx_list *hosts)
{
	const char *p = memmem(uri, len, "://", 3);
	if (!p)
		return;
	p += 3;
	const char *end = uri + len;
	const char *at = memchr(p, '@', (size_t)(end - p));
	const char *slash = memchr(p, '/', (size_t)(end - p));
	if (at && (!slash || at < slash))
		p = at + 1;
	const char *h = p;
	if (*h == '[') { /* an IPv6 literal keeps its brackets off */
		const char *rb = memchr(h, ']', (size_t)(end - h));
		if (rb)
			imgmeta_list_add(hosts, h + 1, (size_t)(rb - h - 1));
		return;
	}
	while (p < end && *p != '/' && *p != ':')
		p++;
	imgmeta_list_add(hosts, h, (size_t)(p - h));
}

static const char *skip_ws(const char *s, const char *end)
{
	while (s < end && isspace((unsigned char)*s))
		s++;
	return s;
}

static void list_line(const char *s, size_t len, void *arg)
{
	const char *end = s + len, *w;

	s = skip_ws(s, end);
	if (end - s > 8 && strncmp(s, "deb-src", 7) == 0 && isspace((unsigned char)s[7]))
		s += 7;
	else if (end - s > 4 && strncmp(s, "deb", 3) == 0 && isspace((unsigned char)s[3]))
		s += 3;
	else
		return;
	s = skip_ws(s, end);
	if (s < end && *s == '[') {
		const char *rb = memchr(s, ']', (size_t)(end - s));
		if (!rb)
			return;
		s = skip_ws(rb + 1, end);
	}
	for (w = s; w < end && !isspace((unsigned char)*w); w++)
		;
	add_uri_host(s, (size_t)(w - s), arg);
}

void imgmeta_parse_sources_list(const char *text, struct sbx_list *hosts)
{
	each_line(text, list_line, hosts);
}

/* deb822: a "URIs:" field, possibly continued on indented lines. */
struct deb822 { struct sbx_list *hosts; int in_uris; };

static void deb822_words(const char *s, const char *end, struct sbx_list *hosts)
{
	for (;;) {
		s = skip_ws(s, end);
		if (s >= end)
			return;
		const char *w = s;
		while (w < end && !isspace((unsigned char)*w))
			w++;
		add_uri_host(s, (size_t)(w - s), hosts);
		s = w;
	}
}

static void deb822_line(const char *s, size_t len, void *arg)
{
	struct deb822 *d = arg;
	const char *end = s + len;

	if (len && (*s == ' ' || *s == '\t')) {
		if (d->in_uris)
			deb822_words(s, end, d->hosts);
		return;
	}
	d->in_uris = 0;
	if (len > 5 && strncasecmp(s, "URIs:", 5) == 0) {
		d->in_uris = 1;
		deb822_words(s + 5, end, d->hosts);
	}
}

void imgmeta_parse_deb822(const char *text, struct sbx_list *hosts)
{
	struct deb822 d = { hosts, 0 };
	each_line(text, deb822_line, &d);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a > b && strcmp(s + a - b, suffix) == 0;
}

/* A file of the image: absent, a symlink or unreadable counts as empty, as
 * apt would not read a dangling one either and we never follow links out. */
static char *image_file(int dirfd, const char *path)
{
	struct sbx_err ignore = { 0 };
	char *text = NULL;
	if (read_file_beneath(dirfd, path, META_MAX_FILE, &text, NULL, &ignore) < 0)
		return NULL;
	return text;
}

static int read_sources_dir(int rootfd, struct sbx_list *hosts, struct sbx_err *err)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, rootfd, "etc/apt/sources.list.d", &how, sizeof(how));
	if (fd < 0)
		return errno == ENOENT || errno == ELOOP || errno == ENOTDIR
			       ? 0 : err_sys(err, "open 'etc/apt/sources.list.d' in the image");
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return err_sys(err, "opendir 'etc/apt/sources.list.d'");
	}
	for (struct dirent *e; (e = readdir(d));) {
		bool list = ends_with(e->d_name, ".list"), src = ends_with(e->d_name, ".sources");
		if (!list && !src)
			continue;
		_cleanup_free_ char *text = image_file(dirfd(d), e->d_name);
		if (text && list)
			imgmeta_parse_sources_list(text, hosts);
		else if (text)
			imgmeta_parse_deb822(text, hosts);
	}
	closedir(d);
	return 0;
}

int imgmeta_read(int rootfd, struct sbx_list *env, struct sbx_list *hosts, struct sbx_err *err)
{
	_cleanup_free_ char *environ_text = image_file(rootfd, "etc/environment");
	_cleanup_free_ char *list = image_file(rootfd, "etc/apt/sources.list");

	if (environ_text)
		imgmeta_parse_environment(environ_text, env);
	if (list)
		imgmeta_parse_sources_list(list, hosts);
	return read_sources_dir(rootfd, hosts, err);
}
