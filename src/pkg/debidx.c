/* debidx.c - see debidx.h. The layout (host byte order: a cache is read
 * where it was written): a head of 88 bytes (magic with the layout's
 * version, the count of records, the string table's size, the SHA256 of
 * the Packages file, the SHA256 of everything after the head), then the
 * records of 64 bytes sorted by path, then the NUL-terminated strings.
 * A change of what deb_index_each accepts changes the magic, so tables
 * built by an older sbxrun are rebuilt (3: each record has the time the
 * gateway first saw it). */
#define _GNU_SOURCE
#include "pkg/debidx.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "pkg/deb_index.h"
#include "pkg/sri.h"

#define MAGIC "SBXDEBI3"

struct head {
	char magic[8];
	uint32_t n, strs;
	uint32_t reserved[2];
	unsigned char src[32], sum[32];
};

struct rec {
	uint32_t path, package, version, reserved;
	uint64_t size;
	int64_t seen;  /* Unix seconds; 0: not dated (debidx_date) */
	unsigned char sha256[32];
};

_Static_assert(sizeof(struct head) == 88 && sizeof(struct rec) == 64, "the table's layout");

struct builder {
	struct rec *v;
	size_t n, cap;
	char *strs;
	size_t slen, scap;
	bool too_big;
};

static uint32_t add_str(struct builder *b, const char *s)
{
	size_t n = strlen(s) + 1, at = b->slen;

	if (b->slen + n > b->scap) {
		b->scap = b->scap ? b->scap * 2 : 1 << 16;
		if (b->scap < b->slen + n)
			b->scap = b->slen + n;
		b->strs = xrealloc(b->strs, b->scap);
	}
	memcpy(b->strs + at, s, n);
	b->slen += n;
	return (uint32_t)at;
}

static void collect(void *arg, const struct deb_stanza *s)
{
	struct builder *b = arg;

	if (b->too_big || sizeof(struct head) + (b->n + 1) * sizeof(struct rec) + b->slen +
				  strlen(s->path) + strlen(s->package) + strlen(s->version) + 3 > DEBIDX_MAX) {
		b->too_big = true;
		return;
	}
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 1024;
		b->v = xrealloc(b->v, b->cap * sizeof(*b->v));
	}
	struct rec *r = &b->v[b->n++];
	r->path = add_str(b, s->path);
	r->package = add_str(b, s->package);
	r->version = add_str(b, s->version);
	r->reserved = (uint32_t)(b->n - 1);  /* the order in the text, until sorted */
	r->size = s->size;
	r->seen = 0;
	memcpy(r->sha256, s->sha256, 32);
}

/* By path, then by the order in the text. */
static int by_path(const void *a, const void *b, void *strs)
{
	const struct rec *x = a, *y = b;
	int c = strcmp((const char *)strs + x->path, (const char *)strs + y->path);
	return c ? c : x->reserved < y->reserved ? -1 : x->reserved > y->reserved;
}

int debidx_build(const char *text, size_t text_len, const unsigned char src[32], char **out, size_t *len,
		 size_t *entries, struct sbx_err *err)
{
	struct builder b = { 0 };
	size_t keep = 0;

	if (deb_index_each(text, text_len, collect, &b, err) < 0 || b.too_big) {
		if (b.too_big)
			err_set(err, 0, "its table would exceed %llu bytes", (unsigned long long)DEBIDX_MAX);
		free(b.v);
		free(b.strs);
		return -1;
	}
	if (b.n)
		qsort_r(b.v, b.n, sizeof(*b.v), by_path, b.strs);
	for (size_t i = 0; i < b.n; i++) {  /* of one path, the last stanza */
		if (i + 1 < b.n && strcmp(b.strs + b.v[i].path, b.strs + b.v[i + 1].path) == 0)
			continue;
		b.v[keep] = b.v[i];
		b.v[keep++].reserved = 0;
	}
	struct head h = { .n = (uint32_t)keep, .strs = (uint32_t)b.slen };
	size_t body = keep * sizeof(struct rec) + b.slen;
	char *p = xmalloc(sizeof(h) + body);
	memcpy(h.magic, MAGIC, 8);
	memcpy(h.src, src, 32);
	if (keep)
		memcpy(p + sizeof(h), b.v, keep * sizeof(struct rec));
	if (b.slen)
		memcpy(p + sizeof(h) + keep * sizeof(struct rec), b.strs, b.slen);
	sri_sha256(p + sizeof(h), body, h.sum);
	memcpy(p, &h, sizeof(h));
	free(b.v);
	free(b.strs);
	*out = p;
	*len = sizeof(h) + body;
	*entries = keep;
	return 0;
}

int debidx_check(const void *p, size_t len, const unsigned char src[32], struct sbx_err *err)
{
	struct head h;
	unsigned char sum[32];

	if (len < sizeof(h) || len > DEBIDX_MAX)
		return err_set(err, 0, "a table of %zu bytes", len);
	memcpy(&h, p, sizeof(h));
	if (memcmp(h.magic, MAGIC, 8) != 0 || h.reserved[0] || h.reserved[1])
		return err_set(err, 0, "not a table of this sbxrun's");
	if (h.n > (len - sizeof(h)) / sizeof(struct rec) ||
	    sizeof(h) + (size_t)h.n * sizeof(struct rec) + h.strs != len ||
	    (h.strs ? ((const char *)p)[len - 1] != '\0' : h.n != 0))
		return err_set(err, 0, "the table's sizes do not add up (torn?)");
	if (memcmp(h.src, src, 32) != 0)
		return err_set(err, 0, "the table was built from another Packages file");
	sri_sha256((const char *)p + sizeof(h), len - sizeof(h), sum);
	if (memcmp(sum, h.sum, 32) != 0)
		return err_set(err, 0, "the table is damaged (its checksum differs)");
	return 0;
}

size_t debidx_count(const void *p)
{
	struct head h;
	memcpy(&h, p, sizeof(h));
	return h.n;
}

int debidx_find(const void *p, size_t len, const char *path, struct debidx_entry *e)
{
	struct head h;
	const char *recs = (const char *)p + sizeof(h), *strs;
	size_t lo = 0, hi;

	memcpy(&h, p, sizeof(h));
	strs = recs + (size_t)h.n * sizeof(struct rec);
	hi = h.n;
	(void)len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct rec r;
		memcpy(&r, recs + mid * sizeof(r), sizeof(r));
		if (r.path >= h.strs || r.package >= h.strs || r.version >= h.strs)
			return 0;  /* checked, so never; a miss is refused */
		int c = strcmp(path, strs + r.path);
		if (c < 0) {
			hi = mid;
		} else if (c > 0) {
			lo = mid + 1;
		} else {
			e->package = strs + r.package;
			e->version = strs + r.version;
			memcpy(e->sha256, r.sha256, 32);
			e->size = r.size;
			e->seen = r.seen;
			return 1;
		}
	}
	return 0;
}

/* The record at i of a checked table, and its strings. */
static void rec_at(const char *p, size_t i, struct rec *r)
{
	memcpy(r, p + sizeof(struct head) + i * sizeof(*r), sizeof(*r));
}

size_t debidx_date(char *p, size_t len, const void *prev, size_t prev_len, int64_t now)
{
	struct head h, ph;
	size_t carried = 0, j = 0;

	(void)prev_len;  /* checked: its head's sizes hold */
	memcpy(&h, p, sizeof(h));
	const char *strs = p + sizeof(h) + (size_t)h.n * sizeof(struct rec), *pstrs = NULL;
	if (prev) {
		memcpy(&ph, prev, sizeof(ph));
		pstrs = (const char *)prev + sizeof(ph) + (size_t)ph.n * sizeof(struct rec);
	}
	/* both sorted by path (and one record a path): one walk of the two */
	for (size_t i = 0; i < h.n; i++) {
		struct rec r, q = { 0 };
		rec_at(p, i, &r);
		r.seen = r.seen > 0 && r.seen < now ? r.seen : now;  /* dated before: the earlier */
		int c = 1;
		while (prev && j < ph.n) {
			rec_at(prev, j, &q);
			if (q.path >= ph.strs || q.package >= ph.strs || q.version >= ph.strs) {
				prev = NULL;  /* checked, so never: nothing more carried */
				break;
			}
			if ((c = strcmp(pstrs + q.path, strs + r.path)) >= 0)
				break;
			j++;
		}
		if (prev && j < ph.n && c == 0 && q.seen > 0 && q.seen < r.seen && memcmp(q.sha256, r.sha256, 32) == 0 &&
		    strcmp(pstrs + q.package, strs + r.package) == 0 && strcmp(pstrs + q.version, strs + r.version) == 0) {
			r.seen = q.seen;
			carried++;
		}
		memcpy(p + sizeof(h) + i * sizeof(r), &r, sizeof(r));
	}
	sri_sha256(p + sizeof(h), len - sizeof(h), h.sum);
	memcpy(p, &h, sizeof(h));
	return carried;
}
