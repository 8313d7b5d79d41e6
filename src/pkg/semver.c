/* semver.c - semantic versions (semver 2.0.0) parsed and ordered: npm's
 * dist-tags and the ranges of a malicious-package feed compare by it. Pure. */
#include "pkg/semver.h"

#include <stdlib.h>
#include <string.h>

bool semver_parse(const char *s, struct semver *v)
{
	memset(v, 0, sizeof(*v));
	for (int i = 0; i < 3; i++) {
		char *end;
		if (*s < '0' || *s > '9')
			return false;
		v->n[i] = strtoull(s, &end, 10);
		s = end;
		if (i < 2 && *s++ != '.')
			return false;
	}
	if (*s == '-') {
		v->pre = s + 1;
		v->pre_len = strcspn(v->pre, "+");
		s = v->pre + v->pre_len;
		if (!v->pre_len)
			return false;
	}
	return *s == '\0' || *s == '+';
}

/* One dot-separated prerelease identifier against another (semver 11.4). */
static int ident_cmp(const char *a, size_t al, const char *b, size_t bl)
{
	bool an = strspn(a, "0123456789") >= al, bn = strspn(b, "0123456789") >= bl;

	if (an && bn && al != bl)
		return al < bl ? -1 : 1;
	if (an != bn)
		return an ? -1 : 1;
	int c = memcmp(a, b, al < bl ? al : bl);
	return c ? c : (al > bl) - (al < bl);
}

int semver_cmp(const struct semver *a, const struct semver *b)
{
	for (int i = 0; i < 3; i++)
		if (a->n[i] != b->n[i])
			return a->n[i] < b->n[i] ? -1 : 1;
	if (!a->pre || !b->pre)
		return (!a->pre) - (!b->pre);
	const char *p = a->pre, *q = b->pre, *pe = p + a->pre_len, *qe = q + b->pre_len;
	while (p < pe && q < qe) {
		size_t pl = strcspn(p, ".+"), ql = strcspn(q, ".+");
		pl = pl > (size_t)(pe - p) ? (size_t)(pe - p) : pl;
		ql = ql > (size_t)(qe - q) ? (size_t)(qe - q) : ql;
		int c = ident_cmp(p, pl, q, ql);
		if (c)
			return c;
		p += pl + (p + pl < pe);
		q += ql + (q + ql < qe);
	}
	return (p < pe) - (q < qe);
}
