/* diff.c - unified diffs (diff.h). */
#define _GNU_SOURCE
#include "undo/diff.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define CONTEXT 3
#define MAX_CELLS (16u << 20) /* the LCS table's bound: 16 M cells */

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
