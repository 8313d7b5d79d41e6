/* fuzz_oci.c - libFuzzer harness: the bytes are an image archive (OCI
 * layout or docker-archive) for the layered importer: its manifests are
 * parsed, its layers applied with their whiteouts into a scratch rootfs that
 * already holds a lower layer; anything that appears next to the scratch
 * directory (or changes the sentinel there) is a crash. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "store/import.h"
#include "store/oci_import.h"

static const struct sbx_import_limits limits = {
	.max_entries = 2000, .max_bytes = 16 << 20, .max_depth = 32,
};

static int base = -1;

static void setup(void)
{
	char tmpl[] = "/tmp/sbx-fuzz-oci.XXXXXX";
	if (!mkdtemp(tmpl))
		abort();
	base = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int s = openat(base, "sentinel", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (base < 0 || s < 0 || write(s, "keep\n", 5) != 5)
		abort();
	close(s);
}

static void check_outside(void)
{
	struct stat st;
	int fd = openat(base, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fdopendir(fd);
	if (!d)
		abort();
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    strcmp(e->d_name, "sentinel") && strcmp(e->d_name, "x"))
			abort();
	closedir(d);
	if (fstatat(base, "sentinel", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size != 5 || st.st_nlink != 1)
		abort();
}

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

	if (base < 0)
		setup();
	int fd = memfd_create("oci", MFD_CLOEXEC);
	if (fd < 0 || write_all(fd, data, size) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		abort();
	if (mkdirat(base, "x", 0700) < 0)
		abort();
	int xfd = openat(base, "x", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rfd = xfd >= 0 ? lower(xfd) : -1;
	if (rfd < 0)
		abort();
	int kind = oci_import_detect(fd, &err);
	if (kind > 0)
		(void)oci_import_layers(fd, kind, xfd, rfd, &limits, &st, &err);
	close(rfd);
	close(xfd);
	close(fd);
	check_outside();
	if (rm_rf_at(base, "x", &err) < 0)
		abort();
	return 0;
}
