/* fuzz_debidx.c - libFuzzer harness for the gateway's cached tables of
 * Debian Packages indexes (pkg/debidx.c), the file format a cache holds
 * and maps back. The first byte chooses.
 *
 * Even: the rest is a Packages text. Its table must pass the check, hold
 * one entry per path (the last stanza's), and give back what the stanzas
 * said; with any one byte changed (where the next input bytes say), cut
 * short, or asked for with another Packages digest, it must be refused.
 * Then the changed table is given a correct checksum (as a forger or a
 * bug could): whatever the check then lets through must be read within
 * its bounds (the table is copied to a buffer of its exact size for ASan).
 *
 * Odd: the rest is a table as a cache file might hold it, checked as it is
 * and again with its digests made to match: a table the check passes is
 * then read at every path its strings name, and dates a table of its own
 * (debidx_date, the carry-over of first-seen times), within its bounds,
 * leaving a table that passes its check with every entry dated.
 *
 * A table built from text is dated by itself: every time is kept. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/deb_index.h"
#include "pkg/debidx.h"
#include "pkg/sri.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HEAD 88
#define SRC_AT 24
#define SUM_AT 56

struct ref {
	struct deb_stanza *v;
	size_t n;
};

static void collect(void *arg, const struct deb_stanza *s)
{
	struct ref *r = arg;
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].path, s->path) == 0) {
			r->v[i] = *s;  /* a later stanza for the same path wins */
			return;
		}
	r->v = realloc(r->v, (r->n + 1) * sizeof(*r->v));
	r->v[r->n++] = *s;
}

/* Every lookup a gateway could make of a table the check passed. */
static void read_all(const char *p, size_t len)
{
	struct debidx_entry e;

	(void)debidx_count(p);
	for (size_t i = HEAD; i < len; i++)
		if (i == HEAD || p[i - 1] == '\0') {
			if (debidx_find(p, len, p + i, &e) == 1 && (strlen(e.package) >= len || strlen(e.version) >= len))
				abort();
		}
	(void)debidx_find(p, len, "", &e);
	(void)debidx_find(p, len, "pool/main/a/a.deb", &e);
}

/* A small table of its own dated by prev (a checked table): it still
 * passes its check, and every entry has a time, none later than now. */
static void date_by(const char *prev, size_t prev_len)
{
	static const char text[] = "Package: a\nVersion: 1\nFilename: pool/a.deb\nSHA256: "
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n\n";
	static const unsigned char src[32] = { 7 };
	struct sbx_err err;
	struct debidx_entry e;
	char *t;
	size_t len, n;

	if (debidx_build(text, sizeof(text) - 1, src, &t, &len, &n, &err) < 0)
		abort();
	(void)debidx_date(t, len, prev, prev_len, 1700000000);
	if (debidx_check(t, len, src, &err) < 0 || debidx_find(t, len, "pool/a.deb", &e) != 1 || e.seen <= 0 ||
	    e.seen > 1700000000)
		abort();
	free(t);
}

/* The table p, with its digests made to match, checked; read if it passes. */
static void forged(const char *p, size_t len)
{
	struct sbx_err err;
	unsigned char src[32];
	char *t = malloc(len ? len : 1);

	memcpy(t, p, len);
	if (len >= HEAD) {
		sri_sha256(t + HEAD, len - HEAD, (unsigned char *)t + SUM_AT);
		memcpy(src, t + SRC_AT, 32);
	} else {
		memset(src, 0, sizeof(src));
	}
	if (debidx_check(t, len, src, &err) == 0) {
		read_all(t, len);
		date_by(t, len);
	}
	free(t);
}

static void must_refuse(const char *p, size_t len, const unsigned char src[32])
{
	struct sbx_err err;
	char *t = malloc(len ? len : 1);

	memcpy(t, p, len);
	if (debidx_check(t, len, src, &err) == 0)
		abort();
	free(t);
}

static void from_text(const uint8_t *data, size_t size)
{
	struct sbx_err err;
	struct ref ref = { 0 };
	unsigned char src[32], other[32];
	char *tab;
	size_t len, entries;
	struct debidx_entry e;

	sri_sha256(data, size, src);
	if (debidx_build((const char *)data, size, src, &tab, &len, &entries, &err) < 0) {
		if (deb_index_each((const char *)data, size, collect, &ref, &err) >= 0 && size)
			abort();  /* no bigger than 256 MiB here: refused only as no index */
		free(ref.v);
		return;
	}
	if (deb_index_each((const char *)data, size, collect, &ref, &err) < 0 || entries != ref.n ||
	    debidx_check(tab, len, src, &err) < 0 || debidx_count(tab) != ref.n)
		abort();
	/* dated, then by itself: every time kept, the table still whole */
	(void)debidx_date(tab, len, NULL, 0, 1700000000);
	if (debidx_date(tab, len, tab, len, 1700000001) != 0 || debidx_check(tab, len, src, &err) < 0)
		abort();
	for (size_t i = 0; i < ref.n; i++) {
		const struct deb_stanza *s = &ref.v[i];
		if (debidx_find(tab, len, s->path, &e) != 1 || strcmp(e.package, s->package) != 0 ||
		    strcmp(e.version, s->version) != 0 || memcmp(e.sha256, s->sha256, 32) != 0 || e.size != s->size ||
		    e.seen != 1700000000)
			abort();
	}
	memcpy(other, src, 32);
	other[0] ^= 1;
	must_refuse(tab, len, other);
	must_refuse(tab, len - 1, src);
	/* one byte changed at a place the input names, then forged */
	for (size_t k = 0; k + 3 <= size && k < 24; k += 3) {
		size_t at = ((size_t)data[k] << 8 | data[k + 1]) % len;
		unsigned char x = data[k + 2] ? data[k + 2] : 0x80;
		tab[at] ^= x;
		must_refuse(tab, len, src);
		forged(tab, len);
		tab[at] ^= x;
	}
	free(ref.v);
	free(tab);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_err err;
	unsigned char src[32] = { 0 };

	if (size < 1)
		return 0;
	if (data[0] & 1) {
		char *t = malloc(size - 1 ? size - 1 : 1);
		memcpy(t, data + 1, size - 1);
		if (size - 1 >= HEAD)
			memcpy(src, t + SRC_AT, 32);
		if (debidx_check(t, size - 1, src, &err) == 0)
			read_all(t, size - 1);
		free(t);
		forged((const char *)data + 1, size - 1);
	} else {
		from_text(data + 1, size - 1);
	}
	return 0;
}
