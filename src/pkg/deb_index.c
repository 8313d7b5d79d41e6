/* deb_index.c - see deb_index.h. A Packages index is read as the RFC 822
 * stanzas Debian writes (fields in any order, continuation lines skipped);
 * a stanza without Filename, Package, Version and a well-formed SHA256 is
 * left out, so the .deb it names is refused (deny when unsure). */
#define _GNU_SOURCE
#include "pkg/deb_index.h"

#include <archive.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int deb_path_norm(const char *in, size_t len, char *out, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)in[i];
		if (ch == '%') {
			int hi = i + 2 < len ? hexval(in[i + 1]) : -1, lo = i + 2 < len ? hexval(in[i + 2]) : -1;
			if (hi < 0 || lo < 0)
				return -1;
			ch = (unsigned char)(hi << 4 | lo);
			i += 2;
		}
		if (ch < 0x20 || ch == 0x7f || o + 2 >= size)
			return -1;
		out[o++] = (char)ch;
		out[o] = '\0';
		/* a finished segment: "" and "." are dropped, ".." refused */
		if (ch == '/' || i + 1 == len) {
			size_t end = ch == '/' ? o - 1 : o, start = end;
			while (start > 0 && out[start - 1] != '/')
				start--;
			size_t seg = end - start;
			if (seg == 2 && memcmp(out + start, "..", 2) == 0)
				return -1;
			if (seg == 0 || (seg == 1 && out[start] == '.'))
				o = start;
		}
	}
	out[o] = '\0';
	return o ? 0 : -1;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The stem of an index apt checks against the signed Release: Packages,
 * Sources, Translation-LANG, Contents-ARCH (n bytes of s). */
static bool index_stem(const char *s, size_t n)
{
	static const char *const whole[] = { "Packages", "Sources" }, *const pre[] = { "Translation-", "Contents-" };
	static const char tail[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@-";

	for (size_t i = 0; i < ARRAY_SIZE(whole); i++)
		if (n == strlen(whole[i]) && memcmp(s, whole[i], n) == 0)
			return true;
	for (size_t i = 0; i < ARRAY_SIZE(pre); i++) {
		size_t m = strlen(pre[i]), k = m;
		if (n <= m || memcmp(s, pre[i], m) != 0)
			continue;
		while (k < n && strchr(tail, s[k]))
			k++;
		return k == n;
	}
	return false;
}

/* Such an index by its file name (n bytes of s): the stem, plain or
 * compressed as apt fetches it. */
static bool index_file(const char *s, size_t n)
{
	static const char *const comp[] = { "", ".gz", ".xz", ".bz2", ".lzma", ".lz4", ".zst" };

	for (size_t i = 0; i < ARRAY_SIZE(comp); i++) {
		size_t m = strlen(comp[i]);
		if (n > m && memcmp(s + n - m, comp[i], m) == 0 && index_stem(s, n - m))
			return true;
	}
	return false;
}

/* apt's own signed index files, the only ones relayed unverified: the
 * Release files, the indexes above, and a pdiff directory's Index and
 * patches (STEM.diff/Index, STEM.diff/NAME.gz), all of which apt checks
 * against the signed Release before it uses them. */
static bool apt_index(const char *path, const char *base)
{
	static const char *const release[] = { "InRelease", "Release", "Release.gpg" };

	for (size_t i = 0; i < ARRAY_SIZE(release); i++)
		if (strcmp(base, release[i]) == 0)
			return true;
	if (index_file(base, strlen(base)))
		return true;
	/* the directory holding it: STEM.diff */
	const char *dir = base - 1;
	if (dir <= path)
		return false;
	while (dir > path && dir[-1] != '/')
		dir--;
	size_t dn = (size_t)(base - 1 - dir);
	return dn > 5 && memcmp(dir + dn - 5, ".diff", 5) == 0 && index_stem(dir, dn - 5) &&
	       (strcmp(base, "Index") == 0 || ends_with(base, ".gz"));
}

enum deb_kind deb_classify(const char *path, char hex[65], int *packages)
{
	const char *base = strrchr(path, '/'), *bh = strstr(path, "/by-hash/SHA256/");
	static const char *const stem[] = { "Packages", "Sources" };
	static const char *const comp[] = { "", ".gz", ".xz", ".bz2", ".lzma", ".lz4", ".zst" };

	base = base ? base + 1 : path;
	*packages = 0;
	if (ends_with(base, ".deb") || ends_with(base, ".udeb") || ends_with(base, ".ddeb"))
		return DEB_ARTIFACT;
	if (bh && strlen(bh + 16) == 64 && strspn(bh + 16, "0123456789abcdefABCDEF") == 64) {
		snprintf(hex, 65, "%s", bh + 16);
		/* the directory holding by-hash: binary-ARCH holds Packages
		 * files, source/ Sources files */
		const char *dir = bh;
		while (dir > path && dir[-1] != '/')
			dir--;
		*packages = strncmp(dir, "binary-", 7) == 0 || (bh - dir == 6 && strncmp(dir, "source", 6) == 0);
		return DEB_BYHASH;
	}
	for (size_t i = 0; i < ARRAY_SIZE(stem); i++)
		for (size_t j = 0; j < ARRAY_SIZE(comp); j++) {
			size_t n = strlen(stem[i]);
			if (strncmp(base, stem[i], n) == 0 && strcmp(base + n, comp[j]) == 0)
				return DEB_PACKAGES;
		}
	return apt_index(path, base) ? DEB_INDEX : DEB_OTHER;
}

void deb_index_root(const char *key, char *out, size_t size)
{
	const char *d = strstr(key, "/dists/"), *bh = strstr(key, "/by-hash/");
	const char *end = d ? d : bh ? bh : strrchr(key, '/');

	if (!d && bh)  /* a flat repository's by-hash: the directory above it */
		end = bh;
	snprintf(out, size, "%.*s", (int)(end ? end - key : (ptrdiff_t)strlen(key)), key);
}

/* One stanza's fields, as pointers into the text; sums: the lines of its
 * Checksums-Sha256 (a Sources stanza), continuation lines after the field. */
struct stanza {
	const char *f[6];
	size_t l[6];
	const char *sums, *sums_end;
	bool dup;  /* two Checksums-Sha256 fields */
};
enum { F_PACKAGE, F_VERSION, F_FILENAME, F_SHA256, F_SIZE, F_DIRECTORY };
static const char *const fields[] = { "Package", "Version", "Filename", "SHA256", "Size", "Directory" };

/* Reads one field line; true when it is Checksums-Sha256 (its lines follow). */
static bool field(struct stanza *s, const char *line, size_t len)
{
	static const char sums[] = "Checksums-Sha256:";

	/* most lines name none of the fields: one look at the first letter */
	if (!strchr("PpVvFfSsDdCc", line[0]))
		return false;
	if (len >= sizeof(sums) - 1 && strncasecmp(line, sums, sizeof(sums) - 1) == 0)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		size_t n = strlen(fields[i]);
		if (len > n && line[n] == ':' && strncasecmp(line, fields[i], n) == 0) {
			const char *v = line + n + 1, *e = line + len;
			while (v < e && (*v == ' ' || *v == '\t'))
				v++;
			while (e > v && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
				e--;
			s->f[i] = v;
			s->l[i] = (size_t)(e - v);
		}
	}
	return false;
}

/* The package and version of a stanza into st: false when either is
 * missing, too long or holds a '/'. */
static bool name_version(const struct stanza *s, struct deb_stanza *st)
{
	if (!s->f[F_PACKAGE] || !s->l[F_PACKAGE] || !s->f[F_VERSION] || !s->l[F_VERSION] ||
	    s->l[F_PACKAGE] >= sizeof(st->package) || s->l[F_VERSION] >= sizeof(st->version) ||
	    memchr(s->f[F_PACKAGE], '/', s->l[F_PACKAGE]) || memchr(s->f[F_VERSION], '/', s->l[F_VERSION]))
		return false;
	memcpy(st->package, s->f[F_PACKAGE], s->l[F_PACKAGE]);
	st->package[s->l[F_PACKAGE]] = '\0';
	memcpy(st->version, s->f[F_VERSION], s->l[F_VERSION]);
	st->version[s->l[F_VERSION]] = '\0';
	return true;
}

/* A SHA256 (64 hex digits) and a size as texts of the given lengths into
 * st; an absent size (NULL) is 0. */
static bool sha_size(const char *hex, size_t hl, const char *size, size_t sl, struct deb_stanza *st)
{
	char h[65], n[24];
	struct sri sha;
	struct sbx_err err;

	st->size = 0;
	if (hl != 64 || (size && (sl == 0 || sl >= sizeof(n))))
		return false;
	memcpy(h, hex, 64);
	h[64] = '\0';
	if (size) {
		memcpy(n, size, sl);
		n[sl] = '\0';
		if (parse_count(n, 0, UINT64_MAX / 2, &st->size, &err) < 0)
			return false;
	}
	if (sri_from_hex256(h, &sha) < 0)
		return false;
	memcpy(st->sha256, sha.digest, 32);
	return true;
}

/* A binary stanza (Packages): its one .deb. 1 when handed over, else 0. */
static int take_binary(const struct stanza *s, deb_stanza_fn fn, void *arg)
{
	struct deb_stanza st;

	if (!s->f[F_FILENAME] || !s->l[F_FILENAME] || !s->f[F_SHA256] || !name_version(s, &st) ||
	    !sha_size(s->f[F_SHA256], s->l[F_SHA256], s->f[F_SIZE], s->l[F_SIZE], &st) ||
	    deb_path_norm(s->f[F_FILENAME], s->l[F_FILENAME], st.path, sizeof(st.path)) < 0)
		return 0;
	fn(arg, &st);
	return 1;
}

/* A source stanza (Sources): each file of its Checksums-Sha256 ("SHA256
 * SIZE NAME" lines), below its Directory; a line that is not exactly that,
 * or a NAME holding a '/', is left out (so that file is refused). How
 * many were handed over. */
static int take_source(const struct stanza *s, deb_stanza_fn fn, void *arg)
{
	struct deb_stanza st;
	char joined[DEB_PATH_MAX + 256];
	int n = 0;

	if (!s->f[F_DIRECTORY] || !s->l[F_DIRECTORY] || !s->sums || s->dup || !name_version(s, &st))
		return 0;
	for (const char *p = s->sums; p < s->sums_end;) {
		const char *nl = memchr(p, '\n', (size_t)(s->sums_end - p));
		const char *e = nl ? nl : s->sums_end, *w[3];
		size_t wl[3], k = 0;
		for (const char *q = p; q < e && k < 4;) {
			while (q < e && (*q == ' ' || *q == '\t' || *q == '\r'))
				q++;
			if (q == e)
				break;
			const char *b = q;
			while (q < e && *q != ' ' && *q != '\t' && *q != '\r')
				q++;
			if (k < 3)
				w[k] = b, wl[k] = (size_t)(q - b);
			k++;
		}
		p = nl ? nl + 1 : s->sums_end;
		if (k != 3 || memchr(w[2], '/', wl[2]) || !sha_size(w[0], wl[0], w[1], wl[1], &st) ||
		    s->l[F_DIRECTORY] + 1 + wl[2] >= sizeof(joined))
			continue;
		int jl = snprintf(joined, sizeof(joined), "%.*s/%.*s", (int)s->l[F_DIRECTORY], s->f[F_DIRECTORY],
				  (int)wl[2], w[2]);
		if (deb_path_norm(joined, (size_t)jl, st.path, sizeof(st.path)) < 0)
			continue;
		fn(arg, &st);
		n++;
	}
	return n;
}

/* A stanza with a Filename is a binary one; else one with a Directory a
 * source one. */
static int take(const struct stanza *s, deb_stanza_fn fn, void *arg)
{
	return s->f[F_FILENAME] ? take_binary(s, fn, arg) : take_source(s, fn, arg);
}

long deb_index_each(const char *text, size_t len, deb_stanza_fn fn, void *arg, struct sbx_err *err)
{
	struct stanza s = { 0 };
	const char *p = text, *end = text + len;
	long added = 0, stanzas = 0;
	bool in_sums = false;

	if (memchr(text, '\0', len))
		return err_set(err, 0, "a NUL byte in a Packages or Sources index");
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		bool blank = l == 0 || (l == 1 && p[0] == '\r');
		if (blank) {
			if (s.f[F_PACKAGE] || s.f[F_FILENAME])
				added += take(&s, fn, arg), stanzas++;
			memset(&s, 0, sizeof(s));
			in_sums = false;
		} else if (p[0] != ' ' && p[0] != '\t') {
			in_sums = field(&s, p, l);
			/* a second Checksums-Sha256 in one stanza: neither is trusted */
			s.dup |= in_sums && s.sums;
			if (in_sums)
				s.sums = s.sums_end = p + l + (nl ? 1 : 0);
		} else if (in_sums) {
			s.sums_end = p + l + (nl ? 1 : 0);
		}
		p += l + 1;
	}
	if (s.f[F_PACKAGE] || s.f[F_FILENAME])
		added += take(&s, fn, arg), stanzas++;
	if (len && !stanzas)
		return err_set(err, 0, "neither a Packages nor a Sources index (no stanza names a package)");
	return added;
}

int deb_unpack(const void *p, size_t n, size_t max, int fd, size_t *out_len, struct sbx_err *err)
{
	struct archive *a;
	struct archive_entry *ae;
	char buf[64 << 10];
	size_t len = 0;

	*out_len = 0;
	if (n == 0)
		return 0;
	a = archive_read_new();
	if (!a || archive_read_support_filter_all(a) != ARCHIVE_OK || archive_read_support_format_raw(a) != ARCHIVE_OK ||
	    archive_read_open_memory(a, p, n) != ARCHIVE_OK || archive_read_next_header(a, &ae) != ARCHIVE_OK) {
		err_set(err, 0, "cannot unpack the index: %s", a ? archive_error_string(a) : "out of memory");
		if (a)
			archive_read_free(a);
		return -1;
	}
	/* through a small buffer into the file: an index that unpacks to a
	 * gigabyte costs the host disk up to max, never memory */
	for (;;) {
		la_ssize_t r = archive_read_data(a, buf, sizeof(buf));
		if (r < 0) {
			err_set(err, 0, "cannot unpack the index: %s", archive_error_string(a));
			archive_read_free(a);
			return -1;
		}
		if (r == 0)
			break;
		if (len + (size_t)r >= max) {
			archive_read_free(a);
			return err_set(err, 0, "the index unpacks to more than %zu bytes", max);
		}
		if (write_all(fd, buf, (size_t)r) < 0) {
			archive_read_free(a);
			return err_sys(err, "cannot write the unpacked index");
		}
		len += (size_t)r;
	}
	archive_read_free(a);
	*out_len = len;
	return 0;
}
