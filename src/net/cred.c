/* cred.c - see cred.h: the secrets, their placeholders, and the one
 * rewrite of a request head that puts a secret in or refuses it. */
#define _GNU_SOURCE
#include "net/cred.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/random.h>

#include <openssl/evp.h>

#include "base/credspec.h"
#include "base/util.h"
#include "net/proxy_auth.h"

/* A binding's share of the wiped pages: the secret, then the header's value. */
#define SLOT (3 * CREDSPEC_MAX_SECRET)

struct cred_bind {
	struct sbx_credspec spec;
	char placeholder[CRED_PLACEHOLDER_LEN + 1];
	char *secret;  /* in the wiped pages */
	char *value;   /* the header's value: scheme and secret, ibid. */
};

struct sbx_creds {
	struct cred_bind *b;
	size_t n;
	char *pages;
	size_t pages_len;
	const char **hosts;
};

static int make_placeholder(char *out, struct sbx_err *err)
{
	unsigned char r[16];

	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		return err_sys(err, "getrandom");
	int n = snprintf(out, CRED_PLACEHOLDER_LEN + 1, "sbxrun-cred-");
	for (size_t i = 0; i < sizeof(r); i++)
		n += snprintf(out + n, CRED_PLACEHOLDER_LEN + 1 - (size_t)n, "%02x", r[i]);
	return 0;
}

/* basic: base64 of USER:TOKEN, git's way; a secret without ':' is the
 * token of the user x-access-token (what GitHub takes with any token). */
static void make_value(struct cred_bind *b)
{
	const char *s = b->secret;
	size_t room = SLOT - CREDSPEC_MAX_SECRET - 1;

	if (b->spec.scheme == CREDSPEC_RAW) {
		snprintf(b->value, room, "%s", s);
	} else if (b->spec.scheme != CREDSPEC_BASIC) {
		snprintf(b->value, room, "%s %s", credspec_scheme_name(b->spec.scheme), s);
	} else {
		char pair[CREDSPEC_MAX_SECRET + 32];
		int n = snprintf(pair, sizeof(pair), "%s%s", strchr(s, ':') ? "" : "x-access-token:", s);
		memcpy(b->value, "Basic ", 6);
		EVP_EncodeBlock((unsigned char *)b->value + 6, (const unsigned char *)pair, n);
		explicit_bzero(pair, sizeof(pair));
	}
}

static int load_one(struct sbx_creds *cr, size_t i, const char *line, const char *origin, struct sbx_err *err)
{
	struct cred_bind *b = &cr->b[i];

	if (credspec_parse(line, &b->spec, err) < 0)
		return err_wrap(err, "%s", origin);
	b->secret = cr->pages + i * SLOT;
	b->value = b->secret + CREDSPEC_MAX_SECRET + 1;
	if (credspec_read_secret(&b->spec, b->secret, CREDSPEC_MAX_SECRET + 1, err) < 0)
		return err_wrap(err, "%s: %s", origin, b->spec.var);
	if (b->spec.source == CREDSPEC_ENV) {
		char *v = getenv(b->spec.from);
		explicit_bzero(v, strlen(v));
		unsetenv(b->spec.from);
	}
	make_value(b);
	return make_placeholder(b->placeholder, err);
}

int cred_load(const struct sbx_strlist *lines, struct sbx_creds **out, struct sbx_err *err)
{
	struct sbx_creds *cr = xcalloc(1, sizeof(*cr));

	cr->n = lines->n;
	cr->b = xcalloc(cr->n, sizeof(*cr->b));
	cr->pages_len = (cr->n * SLOT + 4095) & ~(size_t)4095;
	cr->pages = mmap(NULL, cr->pages_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (cr->pages == MAP_FAILED) {
		cr->pages = NULL;
		cred_free(cr);
		return err_sys(err, "credentials: mmap");
	}
	/* a clone (the sandbox's first process) or fork gets zeros here */
	if (madvise(cr->pages, cr->pages_len, MADV_WIPEONFORK) < 0 ||
	    madvise(cr->pages, cr->pages_len, MADV_DONTDUMP) < 0) {
		cred_free(cr);
		return err_sys(err, "credentials: madvise");
	}
	for (size_t i = 0; i < cr->n; i++)
		if (load_one(cr, i, lines->v[i], lines->origin[i], err) < 0) {
			cred_free(cr);
			return -1;
		}
	cr->hosts = xcalloc(cr->n + 1, sizeof(*cr->hosts));
	for (size_t i = 0, k = 0; i < cr->n; i++) {
		size_t j = 0;
		while (j < k && strcmp(cr->hosts[j], cr->b[i].spec.host) != 0)
			j++;
		if (j == k)
			cr->hosts[k++] = cr->b[i].spec.host;
	}
	*out = cr;
	return 0;
}

void cred_free(struct sbx_creds *cr)
{
	if (!cr)
		return;
	if (cr->pages) {
		explicit_bzero(cr->pages, cr->pages_len);
		munmap(cr->pages, cr->pages_len);
	}
	free(cr->hosts);
	free(cr->b);
	free(cr);
}

size_t cred_count(const struct sbx_creds *cr)
{
	return cr ? cr->n : 0;
}

const char *cred_var(const struct sbx_creds *cr, size_t i)
{
	return cr->b[i].spec.var;
}

const char *cred_placeholder(const struct sbx_creds *cr, size_t i)
{
	return cr->b[i].placeholder;
}

const char **cred_hosts(const struct sbx_creds *cr)
{
	return cr->hosts;
}

bool cred_binds(const struct sbx_creds *cr, const char *host, int port)
{
	for (size_t i = 0; cr && i < cr->n; i++)
		if (credspec_matches(&cr->b[i].spec, host, port, "/"))
			return true;
	/* a path-bound one: the host and port are enough to broker */
	for (size_t i = 0; cr && i < cr->n; i++) {
		const struct sbx_credspec *s = &cr->b[i].spec;
		if (strcmp(s->host, host) == 0 && (s->port ? (int)s->port == port : (port == 80 || port == 443)))
			return true;
	}
	return false;
}

/* Whether buf holds p, also inside a Basic header's base64 (git puts the
 * password there). */
static bool holds(const char *buf, size_t len, const char *p)
{
	return memmem(buf, len, p, strlen(p)) != NULL;
}

static bool holds_decoded(const char *buf, size_t len, const char *p)
{
	char dec[2048];

	for (const char *s = buf; (s = memmem(s, len - (size_t)(s - buf), "Basic ", 6)); s += 6) {
		size_t n = strcspn(s + 6, "\r\n");
		if (proxy_auth_b64decode(s + 6, n, dec, sizeof(dec)) >= 0 && strstr(dec, p))
			return true;
	}
	return false;
}

bool cred_carried(const struct sbx_creds *cr, const char *buf, size_t len, const char **var)
{
	for (size_t i = 0; cr && i < cr->n; i++)
		if (holds(buf, len, cr->b[i].placeholder) || holds_decoded(buf, len, cr->b[i].placeholder)) {
			*var = cr->b[i].spec.var;
			return true;
		}
	return false;
}

static void append(char **out, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap) {
		*cap = (*len + n + 1) * 2;
		*out = xrealloc(*out, *cap);
	}
	memcpy(*out + *len, s, n);
	*len += n;
	(*out)[*len] = '\0';
}

/* Whether line[0..n) is header name's. */
static bool is_header(const char *line, size_t n, const char *name)
{
	size_t k = strlen(name);
	return n > k && line[k] == ':' && strncasecmp(line, name, k) == 0;
}

/* The head with b's header set to b's value: a line of that header that
 * holds the placeholder (or names none of the tool's own) is replaced. */
static void put_secret(const struct cred_bind *b, const char *head, size_t len, char **out, size_t *olen)
{
	size_t cap = 0;
	bool set = false;
	const char *end = head + len - 2, *p = memmem(head, len, "\r\n", 2) + 2;

	*olen = 0;
	*out = NULL;
	append(out, olen, &cap, head, (size_t)(p - head));
	while (p < end) {
		const char *eol = memmem(p, (size_t)(end - p) + 2, "\r\n", 2);
		size_t n = (size_t)(eol - p);
		if (is_header(p, n, b->spec.header)) {
			if (!set) {
				append(out, olen, &cap, b->spec.header, strlen(b->spec.header));
				append(out, olen, &cap, ": ", 2);
				append(out, olen, &cap, b->value, strlen(b->value));
				append(out, olen, &cap, "\r\n", 2);
			}
			set = true;
		} else {
			append(out, olen, &cap, p, n + 2);
		}
		p = eol + 2;
	}
	if (!set) {
		append(out, olen, &cap, b->spec.header, strlen(b->spec.header));
		append(out, olen, &cap, ": ", 2);
		append(out, olen, &cap, b->value, strlen(b->value));
		append(out, olen, &cap, "\r\n", 2);
	}
	append(out, olen, &cap, "\r\n", 2);
}

enum cred_verdict cred_rewrite(const struct sbx_creds *cr, const char *host, int port, const char *head,
			       size_t len, char **out, size_t *outlen, const char **var)
{
	char target[2048] = "/";
	const char *sp = memchr(head, ' ', len), *sp2 = sp ? memchr(sp + 1, ' ', len - (size_t)(sp + 1 - head)) : NULL;
	const struct cred_bind *use = NULL;

	if (sp2 && (size_t)(sp2 - sp - 1) < sizeof(target))
		snprintf(target, sizeof(target), "%.*s", (int)(sp2 - sp - 1), sp + 1);
	for (size_t i = 0; cr && i < cr->n; i++) {
		const struct cred_bind *b = &cr->b[i];
		bool mine = credspec_matches(&b->spec, host, port, target);
		bool carried = holds(head, len, b->placeholder) || holds_decoded(head, len, b->placeholder);
		/* never in a URL (logged by servers), never to another host */
		if ((carried && !mine) || strstr(target, b->placeholder)) {
			*var = b->spec.var;
			return CRED_REFUSED;
		}
		if (mine && !use)
			use = b;
	}
	if (!use)
		return CRED_NONE;
	put_secret(use, head, len, out, outlen);
	*var = use->spec.var;
	return CRED_USED;
}
