/* mavenmeta.c - see mavenmeta.h. The document comes from the network
 * peer: libxml2 reads it without the network, without a DTD (a DOCTYPE is
 * refused: no entity of the peer's is ever expanded) and without printing;
 * only the elements Maven's resolver reads are taken, each checked, and
 * the document served is written here from them, never passed through. */
#define _GNU_SOURCE
#include "pkg/mavenmeta.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"

/* --- request paths --- */

static bool seg_ok(const char *s, size_t n, bool plus)
{
	if (n == 0 || n > MAVEN_SEG_MAX || s[0] == '.' || s[0] == '-' || memmem(s, n, "..", 2))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '.' || c == '-' || (plus && c == '+')))
			return false;
	}
	return true;
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t sl = strlen(suffix);
	return n > sl && memcmp(s + n - sl, suffix, sl) == 0;
}

/* The segments of p: starts and lengths, at most max; -1 when one is bad. */
static int split(const char *p, size_t len, const char **seg, size_t *sl, size_t max)
{
	size_t n = 0;

	for (size_t i = 0, start = 0; i <= len; i++) {
		if (i < len && p[i] != '/')
			continue;
		if (n == max)
			return -1;
		seg[n] = p + start;
		sl[n++] = i - start;
		start = i + 1;
	}
	return (int)n;
}

static int file_checks(struct maven_req *r, const char *file, size_t fl, const char **why)
{
	size_t al = strlen(r->artifact), vl = strlen(r->version);

	if (ends_with(r->version, vl, "-SNAPSHOT") || strcmp(r->version, "SNAPSHOT") == 0) {
		*why = "a SNAPSHOT (the gateway serves releases)";
		return -1;
	}
	if (fl <= al + vl + 2 || memcmp(file, r->artifact, al) != 0 || file[al] != '-' ||
	    memcmp(file + al + 1, r->version, vl) != 0 || (file[al + 1 + vl] != '.' && file[al + 1 + vl] != '-') ||
	    file[fl - 1] == '.' || !memchr(file + al + 1 + vl, '.', fl - al - 1 - vl)) {
		*why = "the file is not ARTIFACT-VERSION[-CLASSIFIER].EXT of its directories";
		return -1;
	}
	return 0;
}

int maven_request(const char *path, size_t len, struct maven_req *r, const char **why)
{
	const char *seg[24], *dummy;
	size_t sl[24];
	int n;

	if (!why)
		why = &dummy;
	memset(r, 0, sizeof(*r));
	*why = "not GROUP/ARTIFACT/maven-metadata.xml or GROUP/ARTIFACT/VERSION/FILE";
	if (len == 0 || len >= MAVEN_PATH_MAX || memchr(path, '\0', len) || (n = split(path, len, seg, sl, 24)) < 3)
		return -1;
	size_t fl = sl[n - 1];
	const char *file = seg[n - 1];
	static const struct { const char *ext; enum sri_algo algo; } sums[] = { { ".sha1", SRI_SHA1 },
										   { ".sha256", SRI_SHA256 } };
	for (size_t i = 0; i < ARRAY_SIZE(sums); i++)
		if (ends_with(file, fl, sums[i].ext)) {
			r->sum = true;
			r->sum_algo = sums[i].algo;
			fl -= strlen(sums[i].ext);
			break;
		}
	if (ends_with(file, fl, ".md5") || ends_with(file, fl, ".sha512") || ends_with(file, fl, ".asc")) {
		*why = "only .sha1 and .sha256 checksums are served (no .md5, .sha512 or signatures)";
		return -1;
	}
	if (fl == 18 && memcmp(file, "maven-metadata.xml", 18) == 0)
		r->kind = MAVEN_METADATA;
	else if (n >= 4)
		r->kind = MAVEN_FILE;
	else
		return -1;
	int g = n - (r->kind == MAVEN_METADATA ? 2 : 3);  /* segments of the group */
	size_t o = 0;
	for (int i = 0; i < n; i++) {
		bool last = i == n - 1, ver = r->kind == MAVEN_FILE && i == n - 2;
		if (!seg_ok(seg[i], last ? fl : sl[i], last || ver) || (i < g && memchr(seg[i], '.', sl[i]))) {
			/* a group's directories hold no dot: one group, one spelling */
			*why = "a path segment that is not [A-Za-z0-9_.-] (a group's without '.')";
			return -1;
		}
		if (i < g)
			o += (size_t)snprintf(r->group + o, sizeof(r->group) - o, "%s%.*s", i ? "." : "", (int)sl[i],
					      seg[i]);
	}
	snprintf(r->artifact, sizeof(r->artifact), "%.*s", (int)sl[g], seg[g]);
	if (r->kind == MAVEN_FILE) {
		snprintf(r->version, sizeof(r->version), "%.*s", (int)sl[n - 2], seg[n - 2]);
		if (file_checks(r, file, fl, why) < 0)
			return -1;
	}
	snprintf(r->name, sizeof(r->name), "%s:%s", r->group, r->artifact);
	snprintf(r->path, sizeof(r->path), "%.*s", (int)(file + fl - path), path);
	return 0;
}

int maven_checksum(const char *body, size_t len, enum sri_algo algo, struct sri *out)
{
	char hex[130];
	size_t s = 0, e;

	while (s < len && strchr(" \t\r\n", body[s]))
		s++;
	for (e = s; e < len && !strchr(" \t\r\n", body[e]); e++)
		;
	if (e - s >= sizeof(hex) || memchr(body + s, '\0', e - s))
		return -1;
	memcpy(hex, body + s, e - s);
	hex[e - s] = '\0';
	return sri_from_hex(hex, algo, out);
}

/* --- maven-metadata.xml --- */

static bool named(const xmlNode *x, const char *name)
{
	return x->type == XML_ELEMENT_NODE && x->name && strcmp((const char *)x->name, name) == 0;
}

/* An element's text, trimmed, into out: -1 when it holds anything but text
 * or is too long for out. */
static int text_of(const xmlNode *x, char *out, size_t size)
{
	size_t o = 0;

	for (const xmlNode *c = x->children; c; c = c->next) {
		if (c->type == XML_COMMENT_NODE)
			continue;
		if ((c->type != XML_TEXT_NODE && c->type != XML_CDATA_SECTION_NODE) || !c->content)
			return -1;
		size_t n = strlen((const char *)c->content);
		if (o + n >= size)
			return -1;
		memcpy(out + o, c->content, n);
		o += n;
	}
	out[o] = '\0';
	size_t s = strspn(out, " \t\r\n");
	while (o > s && strchr(" \t\r\n", out[o - 1]))
		o--;
	memmove(out, out + s, o - s);
	out[o - s] = '\0';
	return 0;
}

static bool version_ok(const char *v)
{
	return seg_ok(v, strlen(v), true);
}

static bool printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < ' ' || (unsigned char)*s == 0x7f)
			return false;
	return true;
}

static int read_versions(const xmlNode *vs, struct mavenmeta *m, const char **why)
{
	char v[MAVEN_SEG_MAX + 1];

	for (const xmlNode *x = vs->children; x; x = x->next) {
		if (!named(x, "version"))
			continue;
		if (m->n + m->dropped >= MAVENMETA_VERSIONS_MAX) {
			*why = "more versions than the gateway reads (10000)";
			return -1;
		}
		if (text_of(x, v, sizeof(v)) < 0 || !version_ok(v)) {
			m->dropped++;
			continue;
		}
		if (!m->versions)
			m->versions = xcalloc(MAVENMETA_VERSIONS_MAX, sizeof(*m->versions));
		memcpy(m->versions[m->n++], v, sizeof(v));
	}
	return 0;
}

/* One element naming a version (latest, release), "" when it is none. */
static void one_version(const xmlNode *x, char *out, size_t size)
{
	if (text_of(x, out, size) < 0 || !version_ok(out))
		out[0] = '\0';
}

static int read_versioning(const xmlNode *vg, struct mavenmeta *m, const char **why)
{
	m->versioning = true;
	for (const xmlNode *x = vg->children; x; x = x->next) {
		if (named(x, "latest"))
			one_version(x, m->latest, sizeof(m->latest));
		else if (named(x, "release"))
			one_version(x, m->release, sizeof(m->release));
		else if (named(x, "lastUpdated") && (text_of(x, m->updated, sizeof(m->updated)) < 0 ||
						     strspn(m->updated, "0123456789") != strlen(m->updated)))
			m->updated[0] = '\0';
		else if (named(x, "versions") && read_versions(x, m, why) < 0)
			return -1;
	}
	return 0;
}

static int read_plugins(const xmlNode *ps, struct mavenmeta *m, const char **why)
{
	for (const xmlNode *p = ps->children; p; p = p->next) {
		struct mavenmeta_plugin pl = { 0 };
		if (!named(p, "plugin"))
			continue;
		for (const xmlNode *x = p->children; x; x = x->next) {
			if ((named(x, "name") && (text_of(x, pl.name, sizeof(pl.name)) < 0 || !printable(pl.name))) ||
			    (named(x, "prefix") && (text_of(x, pl.prefix, sizeof(pl.prefix)) < 0 ||
						     !seg_ok(pl.prefix, strlen(pl.prefix), false))) ||
			    (named(x, "artifactId") && (text_of(x, pl.artifact, sizeof(pl.artifact)) < 0 ||
							 !seg_ok(pl.artifact, strlen(pl.artifact), false)))) {
				*why = "a plugin's name, prefix or artifactId that is not one";
				return -1;
			}
		}
		if (!pl.prefix[0] || !pl.artifact[0])
			continue;
		if (m->nplugins >= MAVENMETA_PLUGINS_MAX) {
			*why = "more plugins than the gateway reads (2000)";
			return -1;
		}
		if (!m->plugins)
			m->plugins = xcalloc(MAVENMETA_PLUGINS_MAX, sizeof(*m->plugins));
		m->plugins[m->nplugins++] = pl;
	}
	return 0;
}

static bool group_ok(const char *g)
{
	size_t n = strlen(g);
	return n && g[0] != '.' && g[n - 1] != '.' && !strstr(g, "..") && seg_ok(g, n, false);
}

static int read_root(const xmlNode *root, struct mavenmeta *m, const char **why)
{
	for (const xmlNode *x = root->children; x; x = x->next) {
		if ((named(x, "groupId") && (text_of(x, m->group, sizeof(m->group)) < 0 || !group_ok(m->group))) ||
		    (named(x, "artifactId") &&
		     (text_of(x, m->artifact, sizeof(m->artifact)) < 0 || !seg_ok(m->artifact, strlen(m->artifact), false)))) {
			*why = "a groupId or artifactId that is not one";
			return -1;
		}
		if ((named(x, "versioning") && read_versioning(x, m, why) < 0) ||
		    (named(x, "plugins") && read_plugins(x, m, why) < 0))
			return -1;
	}
	return 0;
}

/* libxml2 prints some errors (an encoding's) whatever the options say:
 * nothing of its is printed (only main prints; a refusal says why). */
static void quiet(void *ctx, const char *fmt, ...)
{
	(void)ctx, (void)fmt;
}

static void quiet_structured(void *ctx, xmlErrorPtr e)
{
	(void)ctx, (void)e;
}

int mavenmeta_parse(const char *body, size_t len, struct mavenmeta *m, const char **why)
{
	const char *dummy;
	const xmlNode *root = NULL;

	if (!why)
		why = &dummy;
	memset(m, 0, sizeof(*m));
	if (len > MAVENMETA_MAX) {
		*why = "larger than the gateway reads (4 MiB)";
		return -1;
	}
	xmlSetGenericErrorFunc(NULL, quiet);  /* this thread's */
	xmlSetStructuredErrorFunc(NULL, quiet_structured);
	xmlDoc *doc = xmlReadMemory(body, (int)len, "maven-metadata.xml", NULL,
				    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_NOCDATA);
	if (!doc) {
		*why = "not well-formed XML";
		return -1;
	}
	for (const xmlNode *x = doc->children; x; x = x->next)
		if (x->type == XML_ELEMENT_NODE)
			root = x;
	int r = -1;
	if (doc->intSubset || doc->extSubset)
		*why = "a DOCTYPE (refused: no entities of upstream's are expanded)";
	else if (!root || !named(root, "metadata"))
		*why = "not a <metadata> document";
	else
		r = read_root(root, m, why);
	xmlFreeDoc(doc);
	if (r < 0)
		mavenmeta_free(m);
	return r;
}

void mavenmeta_free(struct mavenmeta *m)
{
	free(m->versions);
	free(m->plugins);
	m->versions = NULL;
	m->plugins = NULL;
	m->n = m->nplugins = 0;
}

/* s with &, < and > escaped (names of plugins are free text). */
static void put_text(FILE *f, const char *tag, const char *s, const char *indent)
{
	fprintf(f, "%s<%s>", indent, tag);
	for (; *s; s++) {
		if (strchr("&<>", *s))
			fputs(*s == '&' ? "&amp;" : *s == '<' ? "&lt;" : "&gt;", f);
		else
			fputc(*s, f);
	}
	fprintf(f, "</%s>\n", tag);
}

/* upstream's choice when it is kept, else the last kept (no SNAPSHOT when
 * release). */
static const char *newest(const struct mavenmeta *m, const bool *keep, const char *said, bool release)
{
	const char *last = NULL;

	for (size_t i = 0; i < m->n; i++) {
		if (keep && !keep[i])
			continue;
		if (said[0] && strcmp(said, m->versions[i]) == 0)
			return said;
		size_t vl = strlen(m->versions[i]);
		if (!release || !ends_with(m->versions[i], vl, "-SNAPSHOT"))
			last = m->versions[i];
	}
	return last;
}

char *mavenmeta_write(const struct mavenmeta *m, const bool *keep, size_t *len)
{
	char *out = NULL;
	FILE *f = open_memstream(&out, len);

	if (!f)
		abort();  /* out of memory: as xmalloc does */
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<metadata>\n", f);
	if (m->group[0])
		put_text(f, "groupId", m->group, "  ");
	if (m->artifact[0])
		put_text(f, "artifactId", m->artifact, "  ");
	if (m->versioning) {
		const char *latest = newest(m, keep, m->latest, false), *release = newest(m, keep, m->release, true);
		fputs("  <versioning>\n", f);
		if (latest)
			put_text(f, "latest", latest, "    ");
		if (release)
			put_text(f, "release", release, "    ");
		fputs("    <versions>\n", f);
		for (size_t i = 0; i < m->n; i++)
			if (!keep || keep[i])
				put_text(f, "version", m->versions[i], "      ");
		fputs("    </versions>\n", f);
		if (m->updated[0])
			put_text(f, "lastUpdated", m->updated, "    ");
		fputs("  </versioning>\n", f);
	}
	if (m->nplugins) {
		fputs("  <plugins>\n", f);
		for (size_t i = 0; i < m->nplugins; i++) {
			fputs("    <plugin>\n", f);
			if (m->plugins[i].name[0])
				put_text(f, "name", m->plugins[i].name, "      ");
			put_text(f, "prefix", m->plugins[i].prefix, "      ");
			put_text(f, "artifactId", m->plugins[i].artifact, "      ");
			fputs("    </plugin>\n", f);
		}
		fputs("  </plugins>\n", f);
	}
	fputs("</metadata>\n", f);
	if (fclose(f) != 0)
		abort();
	return out;
}
