/* fuzz_import.c - libFuzzer harness: the bytes are a tarball for the
 * importer's extractor, unpacked into a scratch directory; anything that
 * appears next to that directory (or changes the sentinel there) is a crash. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>

#include "store/import.h"
#include "fuzz_scratch.h"

static const struct sbx_import_limits limits = {
	.max_entries = 2000, .max_bytes = 16 << 20, .max_depth = 32,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_import_stats st = { 0 };
	struct sbx_err err = { 0 };
	int dfd;
	int fd = scratch_begin("/tmp/sbx-fuzz-import.XXXXXX", "tar", data, size, &dfd);

	(void)import_extract_fd(fd, dfd, &limits, &st, &err);
	close(dfd);
	close(fd);
	scratch_end();
	return 0;
}
