/* fuzz_termfilter.c - libFuzzer harness for the filter between the
 * sandbox's output and the caller's terminal (term/termfilter.c): any
 * bytes, cut anywhere, stay within the output bound the callers allocate,
 * and no clipboard or DCS sequence comes out. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "term/termfilter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct sbx_termfilter f;

static void check_out(const char *out, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++)
		if (out[i] == 0x1b && (out[i + 1] == 'P' || out[i + 1] == '_' || out[i + 1] == '^' ||
				       out[i + 1] == 'X' || (i + 3 < n && !memcmp(out + i + 1, "]52", 3))))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	/* the first byte: the mode and where the input is cut in two */
	int flags = data[0] & 1 ? SBX_TF_ANSWERS : 0;
	size_t cut = size > 1 ? (size_t)(data[0] >> 1) % size : 0;
	const char *in = (const char *)data + 1;
	size_t n = size - 1;
	if (cut > n)
		cut = n;
	/* exact capacities, so that a write past them is caught */
	size_t total = 0;
	char *all = malloc(n + 2 * SBX_TF_SEQ_MAX + 1);
	termfilter_init(&f, flags);
	const size_t parts[2][2] = { { 0, cut }, { cut, n - cut } };
	for (int p = 0; p < 2; p++) {
		char *out = malloc(parts[p][1] + SBX_TF_SEQ_MAX);
		size_t got = termfilter_feed(&f, in + parts[p][0], parts[p][1], out);
		if (got > parts[p][1] + SBX_TF_SEQ_MAX)
			abort();
		memcpy(all + total, out, got);
		total += got;
		free(out);
	}
	char *fin = malloc(SBX_TF_SEQ_MAX);
	size_t got = termfilter_finish(&f, fin);
	memcpy(all + total, fin, got);
	total += got;
	free(fin);
	check_out(all, total);
	free(all);
	return 0;
}
