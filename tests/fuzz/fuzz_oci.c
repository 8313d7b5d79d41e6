/* fuzz_oci.c - libFuzzer harness: the bytes are an image archive (OCI
 * layout or docker-archive) for the layered importer: its manifests are
 * parsed, its layers applied with their whiteouts into a scratch rootfs that
 * already holds a lower layer; anything that appears next to the scratch
 * directory (or changes the sentinel there) is a crash. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>

#include "store/import.h"
#include "store/oci_import.h"
#include "fuzz_scratch.h"

static const struct sbx_import_limits limits = {
	.max_entries = 2000, .max_bytes = 16 << 20, .max_depth = 32,
};

/* A lower layer to hide things in: a directory, a file, a symlink out. */
static int lower(int xfd)
{
	if (mkdirat(xfd, "rootfs", 0755) < 0)
		return -1;
	int r = openat(xfd, "rootfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r < 0 || mkdirat(r, "etc", 0755) < 0 || symlinkat("/tmp", r, "out") < 0 ||
	    symlinkat("..", r, "up") < 0)
		abort();
	int f = openat(r, "etc/file", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (f < 0)
		abort();
	close(f);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_import_stats st = { 0 };
	struct sbx_err err = { 0 };
	int xfd;
	int fd = scratch_begin("/tmp/sbx-fuzz-oci.XXXXXX", "oci", data, size, &xfd);
	int rfd = lower(xfd);

	if (rfd < 0)
		abort();
	int kind = oci_import_detect(fd, &err);
	if (kind > 0)
		(void)oci_import_layers(fd, kind, xfd, rfd, &limits, &st, &err);
	close(rfd);
	close(xfd);
	close(fd);
	scratch_end();
	return 0;
}
