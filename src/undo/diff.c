/* diff.c - unified diffs (diff.h). The line index (16 bytes a line) and
 * the LCS table are what costs: both are bounded (DIFF_MAX_LINES,
 * MAX_CELLS), and a bigger side is streamed from its file in chunks. */
#define _GNU_SOURCE
#include "undo/diff.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"

#define CONTEXT 3
#define MAX_CELLS (4u << 20) /* the LCS table's bound: 4 M cells, 16 MiB */
#define CHUNK 65536           /* a streamed side is read this much at a time */

struct line {
	const char *s;
	size_t n; /* with its newline, if it has one */
};

struct op {
	char kind; /* ' ', '-', '+' */
	const struct line *l;
};

static struct line *split(const char *s, size_t n, size_t *count)
{
	size_t cap = 16, k = 0;
	struct line *v = xmalloc(cap * sizeof(*v));

	for (size_t i = 0; i < n;) {
		const char *nl = memchr(s + i, '\n', n - i);
		size_t len = nl ? (size_t)(nl - (s + i)) + 1 : n - i;
		if (k == cap)
			v = xrealloc(v, (cap *= 2) * sizeof(*v));
		v[k++] = (struct line){ s + i, len };
		i += len;
	}
	*count = k;
	return v;
}

static bool same(const struct line *x, const struct line *y)
{
	return x->n == y->n && memcmp(x->s, y->s, x->n) == 0;
}

bool diff_is_text(const char *s, size_t n)
{
	return memchr(s, '\0', n) == NULL;
}

/* The middle a[0..n) against b[0..m): by LCS when the table fits, else all
 * of a removed and all of b added. Appends to ops. */
static size_t middle(const struct line *a, size_t n, const struct line *b, size_t m, struct op *ops)
{
	size_t k = 0;

	if (n && m && (uint64_t)(n + 1) * (m + 1) <= MAX_CELLS) {
		uint32_t *t = xcalloc((n + 1) * (m + 1), sizeof(uint32_t));
#define T(i, j) t[(i) * (m + 1) + (j)]
		for (size_t i = n; i-- > 0;)
			for (size_t j = m; j-- > 0;)
				T(i, j) = same(&a[i], &b[j]) ? T(i + 1, j + 1) + 1
					: T(i + 1, j) > T(i, j + 1) ? T(i + 1, j) : T(i, j + 1);
		size_t i = 0, j = 0;
		while (i < n && j < m) {
			if (same(&a[i], &b[j]))
				ops[k++] = (struct op){ ' ', &a[i] }, i++, j++;
			else if (T(i + 1, j) >= T(i, j + 1))
				ops[k++] = (struct op){ '-', &a[i++] };
			else
				ops[k++] = (struct op){ '+', &b[j++] };
		}
#undef T
		free(t);
		while (i < n)
			ops[k++] = (struct op){ '-', &a[i++] };
		while (j < m)
			ops[k++] = (struct op){ '+', &b[j++] };
		return k;
	}
	for (size_t i = 0; i < n; i++)
		ops[k++] = (struct op){ '-', &a[i] };
	for (size_t j = 0; j < m; j++)
		ops[k++] = (struct op){ '+', &b[j] };
	return k;
}

static void put_line(FILE *out, char kind, const struct line *l)
{
	fputc(kind, out);
	fwrite(l->s, 1, l->n, out);
	if (!l->n || l->s[l->n - 1] != '\n')
		fputs("\n\\ No newline at end of file\n", out);
}

/* One hunk: ops[from..to), its header counting lines of each side. */
static void hunk(FILE *out, const struct op *ops, size_t from, size_t to, size_t a0, size_t b0)
{
	size_t na = 0, nb = 0;

	for (size_t i = from; i < to; i++) {
		na += ops[i].kind != '+';
		nb += ops[i].kind != '-';
	}
	fprintf(out, "@@ -%zu,%zu +%zu,%zu @@\n", na ? a0 + 1 : a0, na, nb ? b0 + 1 : b0, nb);
	for (size_t i = from; i < to; i++)
		put_line(out, ops[i].kind, ops[i].l);
}

static void hunks(FILE *out, const struct op *ops, size_t k)
{
	size_t a = 0, b = 0, i = 0;

	while (i < k) {
		if (ops[i].kind == ' ') {
			a++, b++, i++;
			continue;
		}
		size_t start = i > CONTEXT ? i - CONTEXT : 0, end = i, quiet = 0;
		size_t a0 = a - (i - start), b0 = b - (i - start);
		for (; end < k && quiet <= 2 * CONTEXT; end++)
			quiet = ops[end].kind == ' ' ? quiet + 1 : 0;
		end -= quiet > CONTEXT ? quiet - CONTEXT : 0;
		hunk(out, ops, start, end, a0, b0);
		for (; i < end; i++) {
			a += ops[i].kind != '+';
			b += ops[i].kind != '-';
		}
	}
}

void diff_unified(const char *a, size_t na, const char *b, size_t nb, const char *from,
		  const char *to, FILE *out)
{
	size_t n, m, p = 0, s = 0, k = 0;
	struct line *x = split(a, na, &n), *y = split(b, nb, &m);

	while (p < n && p < m && same(&x[p], &y[p]))
		p++;
	while (s < n - p && s < m - p && same(&x[n - 1 - s], &y[m - 1 - s]))
		s++;
	if (p == n && p == m) {
		free(x);
		free(y);
		return;
	}
	struct op *ops = xmalloc((n + m + 1) * sizeof(*ops));
	for (size_t i = 0; i < p; i++)
		ops[k++] = (struct op){ ' ', &x[i] };
	k += middle(x + p, n - p - s, y + p, m - p - s, ops + k);
	for (size_t i = n - s; i < n; i++)
		ops[k++] = (struct op){ ' ', &x[i] };
	fprintf(out, "--- %s\n+++ %s\n", from, to);
	hunks(out, ops, k);
	free(ops);
	free(x);
	free(y);
}

int diff_side_open(struct diff_side *s, int fd, uint64_t size)
{
	*s = (struct diff_side){ .fd = fd, .size = size };
	if (size > DIFF_MAX_BYTES)
		return 0;
	s->data = xmalloc(size + 1);
	while (s->len < size) {
		ssize_t r = read(fd, s->data + s->len, size - s->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break; /* it shrank: what is there */
		s->len += (size_t)r;
	}
	s->size = s->len;
	return 0;
}

void diff_side_free(struct diff_side *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->data);
	*s = DIFF_SIDE_NONE;
}

/* Up to n bytes of s at off: from memory, or read from the file. */
static size_t side_read(const struct diff_side *s, uint64_t off, char *buf, size_t n)
{
	if (off >= s->size)
		return 0;
	if (n > s->size - off)
		n = (size_t)(s->size - off);
	if (s->data || s->fd < 0) {
		memcpy(buf, s->data + off, n);
		return n;
	}
	ssize_t r;
	while ((r = pread(s->fd, buf, n, (off_t)off)) < 0 && errno == EINTR)
		;
	return r > 0 ? (size_t)r : 0;
}

static bool held(const struct diff_side *s)
{
	return s->fd < 0 || s->data;
}

/* Its lines (a last one without a newline counts), and whether it holds
 * a NUL (binary), in one pass. */
static uint64_t scan(const struct diff_side *s, bool *nul)
{
	char buf[CHUNK];
	uint64_t lines = 0, off = 0;
	char last = '\n';

	for (size_t r; (r = side_read(s, off, buf, sizeof(buf))) > 0; off += r) {
		unsigned nl = 0, zero = 0; /* a loop the compiler vectorises: a memchr a line is slow */
		for (size_t i = 0; i < r; i++)
			nl += buf[i] == '\n', zero |= buf[i] == '\0';
		lines += nl;
		*nul = *nul || zero;
		last = buf[r - 1];
	}
	return lines + (last != '\n');
}

static bool equal(const struct diff_side *a, const struct diff_side *b)
{
	char x[CHUNK], y[CHUNK];
	uint64_t off = 0;

	if (a->size != b->size)
		return false;
	for (size_t r; (r = side_read(a, off, x, sizeof(x))) > 0; off += r)
		if (side_read(b, off, y, r) != r || memcmp(x, y, r))
			return false;
	return true;
}

/* Every line of s, each after kind: a chunk at a time, kind put in after
 * each newline (a file of newlines is 64 M lines in 64 MiB). */
static void put_all(const struct diff_side *s, char kind, FILE *out)
{
	char buf[CHUNK], o[2 * CHUNK];
	uint64_t off = 0;
	bool bol = true;

	for (size_t r; !ferror(out) && (r = side_read(s, off, buf, sizeof(buf))) > 0; off += r) {
		size_t k = 0;
		for (size_t i = 0; i < r; i++) {
			if (bol)
				o[k++] = kind;
			o[k++] = buf[i];
			bol = buf[i] == '\n';
		}
		fwrite(o, 1, k, out);
	}
	if (!bol)
		fputs("\n\\ No newline at end of file\n", out);
}

void diff_sides(const struct diff_side *a, const struct diff_side *b, const char *from,
		const char *to, FILE *out)
{
	bool nul = false;

	if (equal(a, b))
		return;
	uint64_t na = scan(a, &nul), nb = scan(b, &nul);
	if (nul)
		return (void)fprintf(out, "Binary files %s and %s differ\n", from, to);
	if (held(a) && held(b) && na <= DIFF_MAX_LINES && nb <= DIFF_MAX_LINES)
		return diff_unified(a->data ? a->data : "", a->len, b->data ? b->data : "", b->len, from, to, out);
	fprintf(out, "--- %s\n+++ %s\n@@ -%d,%llu +%d,%llu @@\n", from, to, na > 0, (unsigned long long)na,
		nb > 0, (unsigned long long)nb);
	put_all(a, '-', out);
	put_all(b, '+', out);
}
